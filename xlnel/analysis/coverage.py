"""How well a dictionary covers the words people write: coverage and lookup accuracy on a gold.

The gold is either an annotated corpus (JSONL, PubTator, BRAT: every entity is an item) or a
TSV of ``concept_id<TAB>english<TAB>translation`` rows (every row is an item: the translation
with its concept, e.g. the official HPO translations). Gold texts and dictionary names are
normalised with the same language rules (:func:`~xlnel.normalization.normalize_string`).

Measures (see :class:`CoverageScores`):

* Over the distinct normalised gold texts: the share that is a dictionary name (``exact``) and
  the share whose nearest name by TF-IDF character 1-3-gram cosine (the project's matcher,
  :class:`~xlnel.candidates.tfidf.TfidfMatcher`) reaches ``threshold`` (``fuzzy``).
* Over the distinct items that carry concept ids, ``(text, concept ids)``: the share whose
  concept has the text as a name (``concept_exact``), or some name at cosine >= ``threshold``
  (``concept_fuzzy``), and linking accuracy: the text looked up as a mention among the
  dictionary's names, concepts ranked by their best name's cosine, correct at ``k`` when a
  gold concept is among the first ``k``. A text that the gold gives to two concepts (two TSV
  rows) is two items; a lookup ranks one concept first, so at most one of them is right at 1.
  A corpus mention with several concept ids (a composite) is one item, right when any of them
  is found.

Concepts are ranked by their best name's cosine (``rank="cosine"``, the default), or with
``rank="weighted"`` by their best name's cosine times the entry's builder score raised to
``weight`` (:data:`WEIGHT`): a rendering the builder trusts less counts a little less. Names
taken as given (knowledge base, annotations: no score) count with a factor of 1.

Only the ``link_names`` (100) nearest names with a cosine of at least ``min_score`` (0.1) are
ranked; a text with no such name is linked to nothing. The first 10 concepts are exact unless
100 names hold fewer than 10 concepts; the floor spares scoring every name that shares one
character with the text, and a name that far is not what decides a lookup.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from xlnel.analysis.gold import (
    GoldItem,
    infer_lang,
    load_dictionary,
    read_gold,
    read_gold_tsv,
    resolve_gold,
)
from xlnel.candidates.tfidf import Match, MatcherConfig, TfidfMatcher
from xlnel.dictionary.dictionary import Dictionary
from xlnel.io.kb_history import kb_id_history
from xlnel.normalization import normalize_string

logger = logging.getLogger(__name__)

__all__ = ["RANKINGS", "WEIGHT", "CoverageReport", "CoverageScores", "DictionaryLookup",
           "GoldItem", "coverage",
           "coverage_of", "format_table", "gold_items", "infer_lang", "item_hits",
           "load_dictionary", "ranking_hits", "read_gold", "read_gold_tsv", "score_items"]

DEFAULT_THRESHOLD = 0.8
DEFAULT_K = 10
MIN_SCORE = 0.1
LINK_NAMES = 100
#: Ways :meth:`DictionaryLookup.ranked_concepts` ranks concepts (see the module docstring).
RANKINGS = ("cosine", "weighted")
#: Exponent of the builder score in the ``weighted`` ranking.
WEIGHT = 0.1


@dataclass(frozen=True)
class CoverageScores:
    """Counts behind the coverage measures of one gold file (or of all of them).

    Attributes:
        texts: Distinct normalised gold texts.
        exact: Of those, dictionary names.
        fuzzy: Of those, with a name at cosine >= the threshold.
        items: Distinct (text, concept ids) items with at least one concept id.
        items_in_dictionary: Of those, items with a concept that has some dictionary name.
        concept_exact: Items whose concept has the text as a name.
        concept_fuzzy: Items whose concept has a name at cosine >= the threshold.
        linked_at_1: Items whose first ranked concept is a gold one.
        linked_at_k: Items with a gold concept among the first ``k``.
        k: The larger cut-off.
    """

    texts: int = 0
    exact: int = 0
    fuzzy: int = 0
    items: int = 0
    items_in_dictionary: int = 0
    concept_exact: int = 0
    concept_fuzzy: int = 0
    linked_at_1: int = 0
    linked_at_k: int = 0
    k: int = DEFAULT_K

    def shares(self) -> dict[str, float | None]:
        """The measures as shares (``None`` when their denominator is 0)."""
        def share(n: int, d: int) -> float | None:
            return round(n / d, 4) if d else None

        return {"exact_share": share(self.exact, self.texts),
                "fuzzy_share": share(self.fuzzy, self.texts),
                "concept_exact_share": share(self.concept_exact, self.items),
                "concept_fuzzy_share": share(self.concept_fuzzy, self.items),
                "accuracy@1": share(self.linked_at_1, self.items),
                f"accuracy@{self.k}": share(self.linked_at_k, self.items)}

    def to_dict(self) -> dict[str, Any]:
        """Counts and shares, JSON-ready."""
        return {**asdict(self), **self.shares()}


@dataclass(frozen=True)
class CoverageReport:
    """Coverage of gold files by one dictionary.

    Attributes:
        dictionary: Where the dictionary came from.
        lang: Normalisation language.
        threshold: Fuzzy cosine threshold.
        names: Distinct normalised dictionary names.
        concepts: Concepts with at least one name.
        files: Per gold file, its path and scores.
        total: Scores over the union of the files' items.
    """

    dictionary: str
    lang: str
    threshold: float
    names: int
    concepts: int
    files: tuple[tuple[str, CoverageScores], ...]
    total: CoverageScores
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The report, JSON-ready."""
        return {"dictionary": self.dictionary, "lang": self.lang, "threshold": self.threshold,
                "names": self.names, "concepts": self.concepts, **self.settings,
                "files": {path: s.to_dict() for path, s in self.files},
                "total": self.total.to_dict()}


# ------------------------------------------------------------------------------------ lookup
class DictionaryLookup:
    """The normalised names of a dictionary, their concepts and a TF-IDF matcher over them.

    Args:
        dictionary: The dictionary.
        lang: Normalisation language of names and looked-up texts.
        min_score: Lowest cosine of a name considered by :meth:`search`.
        link_names: Most names returned per text by :meth:`search`.
        rank: How :meth:`ranked_concepts` ranks concepts, one of :data:`RANKINGS`.
        weight: Exponent of the builder score in the ``weighted`` ranking.

    Raises:
        ValueError: If the dictionary has no name left after normalisation, ``rank`` is
            unknown or ``weight`` is negative.
    """

    def __init__(self, dictionary: Dictionary, lang: str, min_score: float = MIN_SCORE,
                 link_names: int = LINK_NAMES, rank: str = "cosine",
                 weight: float = WEIGHT) -> None:
        if rank not in RANKINGS:
            raise ValueError(f"rank must be one of {', '.join(RANKINGS)}, got {rank!r}")
        if weight < 0:
            raise ValueError(f"weight must be at least 0, got {weight}")
        self.lang = lang
        self.rank = rank
        self.weight = weight
        index: dict[str, int] = {}
        self.concepts: list[list[str]] = []
        self.pairs: set[tuple[str, str]] = set()
        #: (name index, concept) -> the highest builder score of its entries (scored ones only)
        self.entry_scores: dict[tuple[int, str], float] = {}
        for entry in dictionary:
            key = normalize_string(entry.name, lang)
            if not key:
                continue
            i = index.setdefault(key, len(index))
            if i == len(self.concepts):
                self.concepts.append([])
            if entry.score is not None and entry.score > self.entry_scores.get(
                    (i, entry.concept_id), float("-inf")):
                self.entry_scores[(i, entry.concept_id)] = entry.score
            if (key, entry.concept_id) not in self.pairs:
                self.pairs.add((key, entry.concept_id))
                self.concepts[i].append(entry.concept_id)
        if not index:
            raise ValueError("the dictionary has no name left after normalisation")
        self.keys = list(index)
        self.index = index
        self.concept_ids = {cid for _, cid in self.pairs}
        self.config = MatcherConfig(threshold=min_score, top_m=link_names)
        self.matcher = TfidfMatcher(self.config).fit(self.keys)
        self._found: dict[str, list[Match]] = {}

    def search(self, keys: Sequence[str]) -> list[list[Match]]:
        """Nearest names (at most ``link_names``, cosine >= ``min_score``) of normalised texts,
        best first; results are kept, so a text is searched once."""
        todo = list(dict.fromkeys(k for k in keys if k not in self._found))
        if todo:
            logger.info("looking up %d texts among %d names", len(todo), len(self.keys))
            self._found.update(zip(todo, self.matcher.search(todo), strict=True))
        return [self._found[k] for k in keys]

    def names_over(self, key: str, threshold: float) -> list[Match]:
        """Every name at cosine >= ``threshold`` of a normalised text (beyond ``link_names``)."""
        found = self.search([key])[0]
        if len(found) < self.config.top_m or found[-1].score < threshold - 1e-6:
            return [m for m in found if m.score >= threshold - 1e-6]
        self.matcher.config = MatcherConfig(threshold=max(threshold, self.config.threshold),
                                            top_m=len(self.keys))
        try:
            return self.matcher.search([key])[0]
        finally:
            self.matcher.config = self.config

    def ranked_concepts(self, key: str, k: int, rank: str | None = None) -> list[str]:
        """The first ``k`` concepts of a normalised text, ranked by their best name's cosine,
        or its weighted score (``rank="weighted"``; ``None``: the lookup's ``rank``); ties:
        the name found first, then dictionary order.

        Raises:
            ValueError: If ``rank`` is not one of :data:`RANKINGS`.
        """
        rank = self.rank if rank is None else rank
        if rank not in RANKINGS:
            raise ValueError(f"rank must be one of {', '.join(RANKINGS)}, got {rank!r}")
        if rank == "weighted":
            return self._weighted(key, k)
        ranked: dict[str, None] = {}
        for match in self.search([key])[0]:
            for cid in self.concepts[match.name_index]:
                ranked.setdefault(cid, None)
            if len(ranked) >= k:
                break
        return list(ranked)[:k]

    def _weighted(self, key: str, k: int) -> list[str]:
        """Concepts by their best ``cosine * builder score ** weight`` over the found names
        (a weight below 1 can lift a concept over one found earlier, so all are scored)."""
        best: dict[str, float] = {}
        for match in self.search([key])[0]:
            for cid in self.concepts[match.name_index]:
                score = self.entry_scores.get((match.name_index, cid))
                value = match.score * (1.0 if score is None else max(score, 0.0) ** self.weight)
                if value > best.get(cid, float("-inf")):
                    best[cid] = value
        # sorted() is stable: ties keep the order in which the concepts were found
        return sorted(best, key=lambda cid: -best[cid])[:k]


def _distinct(items: Iterable[GoldItem], lang: str
              ) -> tuple[list[str], list[tuple[str, tuple[str, ...]]]]:
    """Distinct normalised texts, and distinct (text, sorted concept ids) items with ids."""
    texts: dict[str, None] = {}
    labelled: dict[tuple[str, tuple[str, ...]], None] = {}
    for item in items:
        key = normalize_string(item.text, lang)
        if not key:
            continue
        texts.setdefault(key, None)
        ids = tuple(sorted({c for c in item.concept_ids if c}))
        if ids:
            labelled.setdefault((key, ids), None)
    return list(texts), list(labelled)


def gold_items(items: Iterable[GoldItem], lang: str) -> list[tuple[str, tuple[str, ...]]]:
    """The distinct (normalised text, sorted concept ids) items that carry concept ids."""
    return _distinct(items, lang)[1]


def item_hits(rank: Callable[[list[str]], list[list[str]]],
              items: Sequence[tuple[str, tuple[str, ...]]], k: int) -> list[tuple[bool, bool]]:
    """Whether a ranker gets each item right at 1 and at ``k``, in item order.

    Args:
        rank: Ranked concept ids (best first) of each normalised text, e.g. a dense linker's.
        items: Distinct (normalised text, concept ids) items (see :func:`gold_items`).
        k: The larger cut-off.
    """
    keys = list(dict.fromkeys(key for key, _ in items))
    ranked = dict(zip(keys, rank(keys), strict=True))
    return [(bool(set(ids).intersection(ranked[key][:1])),
             bool(set(ids).intersection(ranked[key][:k]))) for key, ids in items]


def ranking_hits(rank: Callable[[list[str]], list[list[str]]],
                 items: Sequence[tuple[str, tuple[str, ...]]], k: int) -> tuple[int, int]:
    """How many items a ranker gets right at 1 and at ``k`` (see :func:`item_hits`)."""
    hits = item_hits(rank, items, k)
    return sum(h1 for h1, _ in hits), sum(hk for _, hk in hits)


def score_items(lookup: DictionaryLookup, items: Iterable[GoldItem],
                threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_K) -> CoverageScores:
    """Coverage and lookup accuracy of gold items (see the module docstring).

    Raises:
        ValueError: If ``threshold`` is outside ``[0, 1]`` or ``k`` is below 1.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    texts, labelled = _distinct(items, lookup.lang)
    found = dict(zip(texts, lookup.search(texts), strict=True))
    fuzzy_at = threshold - 1e-6  # float32 cosines of equal strings may fall short of 1
    counts = {"exact": sum(t in lookup.index for t in texts),
              "fuzzy": sum(bool(found[t]) and found[t][0].score >= fuzzy_at for t in texts)}
    at = ranking_hits(lambda keys: [lookup.ranked_concepts(key, k) for key in keys],
                      labelled, k)
    for key, ids in labelled:
        gold = set(ids)
        counts["in_dictionary"] = counts.get("in_dictionary", 0) + bool(gold & lookup.concept_ids)
        counts["concept_exact"] = counts.get("concept_exact", 0) + any(
            (key, cid) in lookup.pairs for cid in ids)
        over = lookup.names_over(key, threshold) if found[key] else []
        counts["concept_fuzzy"] = counts.get("concept_fuzzy", 0) + any(
            gold.intersection(lookup.concepts[m.name_index]) for m in over)
    return CoverageScores(
        texts=len(texts), exact=counts["exact"], fuzzy=counts["fuzzy"], items=len(labelled),
        items_in_dictionary=counts.get("in_dictionary", 0),
        concept_exact=counts.get("concept_exact", 0),
        concept_fuzzy=counts.get("concept_fuzzy", 0), linked_at_1=at[0], linked_at_k=at[1], k=k)


def _check_gold(gold: Sequence[tuple[str, Sequence[GoldItem]]], lang: str) -> None:
    if not gold:
        raise ValueError("give at least one gold file")
    for name, items in gold:
        if not any(normalize_string(item.text, lang) for item in items):
            raise ValueError(f"gold {name} has no text to look up (no entity or row)")


def coverage_of(dictionary: Dictionary, gold: Sequence[tuple[str, Sequence[GoldItem]]],
                lang: str, threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_K,
                source: str = "", min_score: float = MIN_SCORE, rank: str = "cosine",
                weight: float = WEIGHT) -> CoverageReport:
    """Coverage of named gold item lists by an in-memory dictionary (``rank`` and ``weight``:
    see :class:`DictionaryLookup`).

    Raises:
        ValueError: If ``gold`` is empty, a list has no text, or a setting is out of range.
    """
    _check_gold(gold, lang)
    lookup = DictionaryLookup(dictionary, lang, min_score, rank=rank, weight=weight)
    files = tuple((name, score_items(lookup, items, threshold, k)) for name, items in gold)
    total = (files[0][1] if len(files) == 1 else
             score_items(lookup, [i for _, items in gold for i in items], threshold, k))
    return CoverageReport(source, lang, threshold, len(lookup.keys), len(lookup.concept_ids),
                          files, total, {"k": k, "min_score": min_score,
                                         "link_names": lookup.config.top_m, "rank": rank,
                                         **({"weight": weight} if rank == "weighted" else {})})


def coverage(dictionary: str | Path, gold: Sequence[str | Path], lang: str | None = None,
             threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_K, rank: str = "cosine",
             weight: float = WEIGHT, kb: str | Path | None = None) -> CoverageReport:
    """Coverage of gold files (corpora or translation TSVs) by a dictionary.

    Args:
        dictionary: Dictionary TSV, ``xlnel adapt`` folder or knowledge-base spec (see
            :func:`load_dictionary`).
        gold: Gold files (see :func:`read_gold`).
        lang: Normalisation language; ``None`` infers it (see :func:`infer_lang`).
        threshold: Fuzzy cosine threshold, in ``[0, 1]``.
        k: The larger accuracy cut-off.
        rank: How concepts are ranked, one of :data:`RANKINGS` (see :class:`DictionaryLookup`).
        weight: Exponent of the builder score in the ``weighted`` ranking.
        kb: Knowledge-base spec whose id history (:func:`xlnel.io.kb_history.kb_id_history`)
            maps the gold's retired concept ids to current ones; the report's settings record
            it and how many gold ids it changed.

    Returns:
        Per-file and total scores.

    Raises:
        FileNotFoundError: If a file does not exist.
        FormatError: If a file does not follow its format.
        ValueError: If a gold file has no text, or a setting is out of range.
    """
    items = [(str(path), read_gold(path)) for path in gold]
    resolved = 0
    if kb is not None:
        history = kb_id_history(kb)
        for i, (name, file_items) in enumerate(items):
            mapped, changed = resolve_gold(file_items, history)
            items[i] = (name, mapped)
            resolved += changed
    if lang is None:
        lang = infer_lang(dictionary, (i.text for _, its in items for i in its))
        logger.info("normalising as %r", lang)
    _check_gold(items, lang)
    report = coverage_of(load_dictionary(dictionary), items, lang, threshold, k,
                         str(dictionary), rank=rank, weight=weight)
    if kb is None:
        return report
    return replace(report, settings={**report.settings, "kb": str(kb), "ids_resolved": resolved})


def format_table(report: CoverageReport) -> str:
    """The report as an aligned text table, one row per gold file and a total."""
    k = report.total.k
    heads = ("gold", "texts", "exact", "fuzzy", "items", "concept exact", "concept fuzzy",
             "acc@1", f"acc@{k}")
    rows = [*report.files, ("total", report.total)] if len(report.files) > 1 else report.files

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = []
    for name, s in rows:
        sh = s.shares()
        lines.append((name, str(s.texts), cell(sh["exact_share"]), cell(sh["fuzzy_share"]),
                      str(s.items), cell(sh["concept_exact_share"]),
                      cell(sh["concept_fuzzy_share"]),
                      cell(sh["accuracy@1"]), cell(sh[f"accuracy@{k}"])))
    widths = [max(len(r[i]) for r in [heads, *lines]) for i in range(len(heads))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True)))
                     for r in [heads, *lines])
