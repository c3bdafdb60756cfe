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

Lookups and their concept rankings (``cosine``, ``weighted``, ``hybrid``) are
:class:`~xlnel.analysis.lookup.DictionaryLookup`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from xlnel.analysis.encoder_lookup import DenseScores, encoder_scores
from xlnel.analysis.gold import (
    GoldItem,
    infer_lang,
    load_dictionary,
    read_gold,
    read_gold_tsv,
    resolve_gold,
)
from xlnel.analysis.lookup import (
    ENCODER_WEIGHT,
    LINK_NAMES,
    MIN_SCORE,
    RANKINGS,
    WEIGHT,
    DictionaryLookup,
    LookupForm,
    check_encoder,
    read_form,
)
from xlnel.candidates.tfidf import Match
from xlnel.dictionary.dictionary import Dictionary
from xlnel.io._atomic import write_tsv
from xlnel.io.kb_history import kb_id_history
from xlnel.normalization import normalize_string

logger = logging.getLogger(__name__)

__all__ = ["DETAILS_HEADER", "ENCODER_WEIGHT", "LINK_NAMES", "MIN_SCORE", "RANKINGS", "WEIGHT",
           "CoverageReport", "CoverageScores", "DictionaryLookup", "GoldItem", "coverage",
           "coverage_of", "format_table", "gold_items", "infer_lang", "item_hits",
           "load_dictionary", "ranking_hits", "read_gold", "read_gold_tsv", "score_items"]

DEFAULT_THRESHOLD = 0.8
DEFAULT_K = 10


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


# ------------------------------------------------------------------------------------- items
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
                threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_K,
                details: list[list[object]] | None = None) -> CoverageScores:
    """Coverage and lookup accuracy of gold items (see the module docstring).

    Args:
        lookup: The dictionary's lookup.
        items: Gold items.
        threshold: Fuzzy cosine threshold.
        k: The larger accuracy cut-off.
        details: A list to append one row a distinct (text, concept ids) item to, and one a
            distinct text that no item carries, from the same lookups as the counts (columns
            of :data:`DETAILS_HEADER` after ``gold``).

    Raises:
        ValueError: If ``threshold`` is outside ``[0, 1]`` or ``k`` is below 1.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    texts, labelled = _distinct(items, lookup.lang)
    found = dict(zip(texts, lookup.search(texts), strict=True))
    if lookup.rank == "hybrid":
        lookup.dense_search([key for key, _ in labelled])  # one batch, not one call a text
    fuzzy_at = threshold - 1e-6  # float32 cosines of equal strings may fall short of 1
    counts = {"exact": sum(lookup.form(t) in lookup.index for t in texts),
              "fuzzy": sum(bool(found[t]) and found[t][0].score >= fuzzy_at for t in texts)}
    ranked = {key: lookup.ranked_concepts(key, k)
              for key in dict.fromkeys(text for text, _ in labelled)}
    judged: dict[tuple[str, tuple[str, ...]], tuple[bool, int | None]] = {}
    for key, ids in labelled:
        gold = set(ids)
        rank = next((i for i, c in enumerate(ranked[key], 1) if c in gold), None)
        concept_exact = any((lookup.form(key), cid) in lookup.pairs for cid in ids)
        judged[(key, ids)] = concept_exact, rank
        over = lookup.names_over(key, threshold) if found[key] else []
        for name, hit in (("in_dictionary", bool(gold & lookup.concept_ids)),
                          ("concept_exact", concept_exact),
                          ("concept_fuzzy", any(gold.intersection(lookup.concepts[m.name_index])
                                                for m in over)),
                          ("at_1", rank == 1), ("at_k", rank is not None)):
            counts[name] = counts.get(name, 0) + hit
    if details is not None:
        details += _detail_rows(lookup, texts, judged, found, ranked, fuzzy_at)
    return CoverageScores(
        texts=len(texts), exact=counts["exact"], fuzzy=counts["fuzzy"], items=len(labelled),
        items_in_dictionary=counts.get("in_dictionary", 0),
        concept_exact=counts.get("concept_exact", 0),
        concept_fuzzy=counts.get("concept_fuzzy", 0), linked_at_1=counts.get("at_1", 0),
        linked_at_k=counts.get("at_k", 0), k=k)


def _detail_rows(lookup: DictionaryLookup, texts: Sequence[str],
                 judged: dict[tuple[str, tuple[str, ...]], tuple[bool, int | None]],
                 found: dict[str, list[Match]], ranked: dict[str, list[str]],
                 fuzzy_at: float) -> list[list[object]]:
    """Rows of :data:`DETAILS_HEADER` after ``gold``: one a distinct (text, concept ids) item,
    in text order, and one for each text that no item carries, its concept columns empty."""
    by_text: dict[str, list[tuple[str, ...]]] = {}
    for key, ids in judged:
        by_text.setdefault(key, []).append(ids)
    rows: list[list[object]] = []
    for key in texts:
        best = found[key][0] if found[key] else None
        exact = int(lookup.form(key) in lookup.index)
        fuzzy = int(best is not None and best.score >= fuzzy_at)
        nearest = ["", ""] if best is None else [lookup.keys[best.name_index],
                                                 f"{best.score:.4f}"]
        for ids in by_text.get(key, [()]):
            if not ids:
                rows.append([key, "", exact, fuzzy, "", "", "", *nearest])
                continue
            concept_exact, rank = judged[(key, ids)]
            rows.append([key, "|".join(ids), exact, fuzzy, int(concept_exact),
                         "" if rank is None else rank, ranked[key][0] if ranked[key] else "",
                         *nearest])
    return rows


#: Columns of ``xlnel dictionary coverage --details``: one row a distinct (text, concept ids)
#: gold item of a gold file, and one a distinct text that only comes without concept ids
#: (``concept_ids``, ``concept_exact``, ``gold_rank`` and ``top_concept`` empty);
#: ``gold_rank`` is the rank of its first concept among the ``k`` best (empty beyond),
#: ``nearest_name`` the name with the highest cosine.
DETAILS_HEADER = ("gold", "text", "concept_ids", "exact", "fuzzy", "concept_exact",
                  "gold_rank", "top_concept", "nearest_name", "nearest_score")


def _check_gold(gold: Sequence[tuple[str, Sequence[GoldItem]]], lang: str) -> None:
    if not gold:
        raise ValueError("give at least one gold file")
    for name, items in gold:
        if not any(normalize_string(item.text, lang) for item in items):
            raise ValueError(f"gold {name} has no text to look up (no entity or row)")


def coverage_of(dictionary: Dictionary, gold: Sequence[tuple[str, Sequence[GoldItem]]],
                lang: str, threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_K,
                source: str = "", min_score: float = MIN_SCORE, rank: str = "cosine",
                weight: float = WEIGHT, dense: DenseScores | None = None,
                encoder_weight: float = ENCODER_WEIGHT,
                form: LookupForm | None = None,
                details: str | Path | None = None) -> CoverageReport:
    """Coverage of named gold item lists by an in-memory dictionary (``rank``, ``weight``,
    ``dense``, ``encoder_weight`` and ``form``: see :class:`DictionaryLookup`; exact
    coverage then compares the forms). ``details``: a TSV file to write the items' rows into
    (:data:`DETAILS_HEADER`; see :func:`score_items`).

    Raises:
        ValueError: If ``gold`` is empty, a list has no text, or a setting is out of range.
    """
    _check_gold(gold, lang)
    lookup = DictionaryLookup(dictionary, lang, min_score, rank=rank, weight=weight,
                              dense=dense, encoder_weight=encoder_weight, form=form)
    files, rows = [], []
    for name, items in gold:
        file_rows: list[list[object]] | None = None if details is None else []
        files.append((name, score_items(lookup, items, threshold, k, file_rows)))
        rows += [[name, *row] for row in file_rows or ()]
    if details is not None:
        write_tsv(details, DETAILS_HEADER, rows)
    total = (files[0][1] if len(files) == 1 else
             score_items(lookup, [i for _, items in gold for i in items], threshold, k))
    return CoverageReport(source, lang, threshold, len(lookup.keys), len(lookup.concept_ids),
                          tuple(files), total, {"k": k, "min_score": min_score,
                                         "link_names": lookup.config.top_m, "rank": rank,
                                         **({"weight": weight} if rank == "weighted" else {}),
                                         **({"words_weight": lookup.words_weight}
                                            if rank == "words" else {}),
                                         **({"encoder_weight": encoder_weight}
                                            if rank == "hybrid" else {}),
                                         **({} if lookup.form.plain
                                            else {"form": lookup.form.to_dict()})})


def coverage(dictionary: str | Path, gold: Sequence[str | Path], lang: str | None = None,
             threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_K, rank: str = "cosine",
             weight: float = WEIGHT, kb: str | Path | None = None,
             encoder: str | None = None, encoder_weight: float = ENCODER_WEIGHT,
             stopwords: str | Path | None = None,
             fold_accents: bool = False,
             details: str | Path | None = None) -> CoverageReport:
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
        encoder: Multilingual encoder of the ``hybrid`` ranking (a Hugging Face id, a local
            folder or a name of ``xlnel models``); needed by it, refused by the others.
        encoder_weight: Weight of the encoder cosine in the ``hybrid`` ranking.
        stopwords: Stop-word file whose words names and texts are compared without (e.g. the
            ``stopwords.txt`` of an ``xlnel adapt`` folder; see :class:`LookupForm`).
        fold_accents: Compare names and texts with the accents of Latin letters folded.
        details: A TSV file to write one row a distinct gold item into
            (:data:`DETAILS_HEADER`): which texts the dictionary lacks, and what it ranks first.

    Returns:
        Per-file and total scores.

    Raises:
        FileNotFoundError: If a file does not exist.
        FormatError: If a file does not follow its format.
        ValueError: If a gold file has no text, the dictionary no name, a setting is out of
            range, or ``encoder`` is missing for the ``hybrid`` ranking or given for another.
    """
    check_encoder(rank, encoder)
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
    form = read_form(lang, stopwords, fold_accents)
    loaded = load_dictionary(dictionary)
    if not any(normalize_string(name, lang) for name in loaded.names):
        raise ValueError(f"dictionary {dictionary} has no name to look gold texts up in "
                         f"({len(loaded)} entries, none with a name left after normalisation)")
    dense = None if encoder is None else encoder_scores(loaded, lang, encoder)
    report = coverage_of(loaded, items, lang, threshold, k, str(dictionary), rank=rank,
                         weight=weight, dense=dense, encoder_weight=encoder_weight,
                         form=form, details=details)
    extra: dict[str, Any] = {} if encoder is None else {"encoder": encoder}
    if stopwords is not None:
        extra["stopwords"] = str(stopwords)
    if kb is not None:
        extra.update(kb=str(kb), ids_resolved=resolved)
    return replace(report, settings={**report.settings, **extra}) if extra else report


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
