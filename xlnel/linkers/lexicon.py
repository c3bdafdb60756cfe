"""What the training annotations say about a mention text: which concept, and how often marked.

An annotated corpus names its frequent concepts the same way again and again: when a span's
text was annotated in the training documents, the concept it was annotated with is the best
guess among the span's candidates, better than the filter's choice between two names that match
equally well (a knowledge base that holds one substance under two ids, a disorder and its
parent). :class:`AnnotationLexicon` counts, per case-folded mention text, the concepts it was
annotated with and how often the text occurs in the training documents at all (whole words),
annotated or not.

:meth:`AnnotationLexicon.adjust` rewrites a document's filter scores so that the decision step
keeps, per span whose text the lexicon knows, the candidate of the text's most annotated
concept (at the span's best score); with ``min_rate``, a span whose text was annotated in at
least that share of its training occurrences is raised to the threshold, so a frequent term
the annotators always mark is linked even where the filter scored it low.

The annotations also date the knowledge base they were made with. Ontologies number their ids
in the order they create concepts (MeSH ``D000077123``, UMLS ``C5000000``, ``HP:5200000``), so
the highest id the training annotations use, per id prefix, bounds the release they were made
against: :meth:`AnnotationLexicon.newer` finds the candidates of concepts created since, which
a gold annotated against that release never holds (BC5CDR is annotated with 2015 MeSH: the
drugs promoted since from supplementary concept to descriptor, such as rocuronium, keep their
old ids there).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlnel.errors import ArtifactError
from xlnel.io._atomic import atomic_write
from xlnel.normalization import normalize_string
from xlnel.types import Candidate, Document
from xlnel.version import __version__

logger = logging.getLogger(__name__)

__all__ = ["AnnotationLexicon"]

#: Score added to the chosen candidate so that it wins its span's ties.
_EPS = 1e-6

#: An id: a prefix (anything but a trailing run of digits), then its number.
_ID = re.compile(r"^(.*?)(\d+)$")

#: Fewest distinct annotated ids of a prefix from which its newest id bounds the release.
MIN_DATED_IDS = 10


@dataclass
class AnnotationLexicon:
    """Concept counts and occurrence counts of the mention texts of annotated documents.

    Attributes:
        lang: Language of the normalisation (:func:`xlnel.normalization.normalize_string`).
        concepts: Normalised mention text -> concept id -> times annotated with it.
        annotated: Normalised mention text -> times annotated (any concept).
        occurrences: Normalised mention text -> whole-word occurrences in the documents.
        composites: Normalised mention text -> the concept ids of its most frequent composite
            annotation (several ids: *hemorrhagic cystitis* as hemorrhage and cystitis), for a
            text annotated as a composite in at least half its annotations.
    """

    lang: str = "en"
    concepts: dict[str, dict[str, int]] = field(default_factory=dict)
    annotated: dict[str, int] = field(default_factory=dict)
    occurrences: dict[str, int] = field(default_factory=dict)
    composites: dict[str, list[str]] = field(default_factory=dict)
    _newest: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def fit(cls, documents: Iterable[Document], lang: str = "en") -> AnnotationLexicon:
        """Count the annotations (with concept ids) of ``documents`` and their texts' occurrences.

        Mentions without a concept id are left out; a composite mention counts once per id.
        """
        docs = list(documents)
        concepts: dict[str, Counter[str]] = defaultdict(Counter)
        annotated: Counter[str] = Counter()
        combined: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
        for doc in docs:
            for ent in doc.entities:
                if not ent.concept_ids:
                    continue
                key = normalize_string(ent.text, lang)
                annotated[key] += 1
                for cid in ent.concept_ids:
                    concepts[key][cid] += 1
                if len(set(ent.concept_ids)) > 1:
                    combined[key][tuple(dict.fromkeys(ent.concept_ids))] += 1
        found = _count_token_runs(annotated, [normalize_string(d.text, lang) for d in docs])
        occurrences = {key: max(found[key], annotated[key]) for key in annotated}
        composites = {key: list(c.most_common(1)[0][0]) for key, c in sorted(combined.items())
                      if 2 * sum(c.values()) >= annotated[key]}
        return cls(lang, {k: dict(v) for k, v in concepts.items()}, dict(annotated),
                   occurrences, composites)

    def composite(self, text: str, concept_id: str | None) -> tuple[str, ...] | None:
        """The concept ids a link of ``text`` to ``concept_id`` stands for when the training
        annotations mostly mark ``text`` as a composite holding that concept: ``concept_id``
        first, then the composite's others in their order; ``None`` otherwise."""
        ids = self.composites.get(normalize_string(text, self.lang))
        if not ids or concept_id not in ids:
            return None
        return (concept_id, *(c for c in ids if c != concept_id))

    def newest_ids(self, min_ids: int = MIN_DATED_IDS) -> dict[str, int]:
        """Per id prefix with at least ``min_ids`` distinct annotated ids, the highest id number
        the annotations use (``D000077123``: prefix ``D``, number 77123). Ids without a
        trailing number and rarer prefixes are left out: they date nothing."""
        numbers: dict[str, set[int]] = defaultdict(set)
        for counts in self.concepts.values():
            for cid in counts:
                m = _ID.match(cid)
                if m:
                    numbers[m[1]].add(int(m[2]))
        return {prefix: max(nums) for prefix, nums in sorted(numbers.items())
                if len(nums) >= min_ids}

    def newer(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """Whether each candidate's concept id is numbered above the newest annotated id of its
        prefix (:meth:`newest_ids`): a concept created after the release the annotations were
        made with. Ids of other prefixes, or without a number, are never newer."""
        if self._newest is None:
            self._newest = self.newest_ids()
        newest = self._newest
        out = np.zeros(len(candidates), dtype=bool)
        for i, cand in enumerate(candidates):
            m = _ID.match(cand.concept_id)
            if m and m[1] in newest and int(m[2]) > newest[m[1]]:
                out[i] = True
        return out

    def known(self, text: str) -> dict[str, int]:
        """The concepts the training annotations linked ``text`` to, with how often (empty if
        never annotated)."""
        return self.concepts.get(normalize_string(text, self.lang), {})

    def rate(self, text: str) -> float:
        """Share of the training occurrences of ``text`` that were annotated (0 if unseen)."""
        return self._rate(normalize_string(text, self.lang))

    def _rate(self, key: str) -> float:
        seen = self.occurrences.get(key, 0)
        return self.annotated.get(key, 0) / seen if seen else 0.0

    def adjust(self, candidates: Sequence[Candidate], scores: np.ndarray, threshold: float,
               min_rate: float | None = None) -> np.ndarray:
        """Scores with each known span's most annotated concept on top (see the module doc).

        Args:
            candidates: A document's candidates.
            scores: Their filter scores.
            threshold: The decision threshold.
            min_rate: Raise a span whose text was annotated in at least this share of its
                training occurrences to ``threshold``; ``None`` never raises one.

        Returns:
            A new score array; spans whose text the lexicon does not know, or none of whose
            candidates has an annotated concept, keep their scores.
        """
        out = np.array(scores, dtype=np.float64)
        by_span: dict[tuple[int, int], list[int]] = defaultdict(list)
        for i, cand in enumerate(candidates):
            by_span[(cand.span.start, cand.span.end)].append(i)
        for idx in by_span.values():
            key = normalize_string(candidates[idx[0]].span.text, self.lang)
            counts = self.concepts.get(key)
            if not counts:
                continue
            win = max(idx, key=lambda i: (counts.get(candidates[i].concept_id, 0), out[i]))
            if counts.get(candidates[win].concept_id, 0) == 0:
                continue
            best = float(out[idx].max())
            if min_rate is not None and self._rate(key) >= min_rate:
                best = max(best, threshold)
            out[win] = best + _EPS
        return out

    def save(self, path: str | Path) -> None:
        """Write the lexicon as JSON (atomically)."""
        data = {"xlnel_version": __version__, "lang": self.lang, "concepts": self.concepts,
                "annotated": self.annotated, "occurrences": self.occurrences,
                "composites": self.composites}
        with atomic_write(Path(path)) as f:
            f.write(json.dumps(data, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> AnnotationLexicon:
        """Read a lexicon written by :meth:`save`.

        Raises:
            ArtifactError: If the file is missing or not a lexicon.
        """
        p = Path(path)
        if not p.is_file():
            raise ArtifactError(f"no annotation lexicon at {p}")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            # a lexicon file without the key has no composites
            return cls(str(data["lang"]), data["concepts"], data["annotated"],
                       data["occurrences"], dict(data.get("composites", {})))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ArtifactError(f"{p} is not an annotation lexicon: {e}") from None


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _count_token_runs(keys: Iterable[str], texts: Sequence[str]) -> Counter[str]:
    """Occurrences of each key in ``texts`` as a run of whole tokens (words and single
    punctuation marks), so a key inside a longer word is not counted."""
    wanted: dict[tuple[str, ...], str] = {tuple(_TOKEN.findall(k)): k for k in keys}
    lengths = {len(t) for t in wanted if t}
    out: Counter[str] = Counter()
    for text in texts:
        tokens = _TOKEN.findall(text)
        for n in lengths:
            for i in range(len(tokens) - n + 1):
                key = wanted.get(tuple(tokens[i:i + n]))
                if key is not None:
                    out[key] += 1
    return out
