"""Looking texts up among a dictionary's names: concepts ranked for a normalised text.

Concepts are ranked by their best name's cosine (``rank="cosine"``, the default), or with
``rank="weighted"`` by their best name's cosine times the entry's builder score raised to
``weight`` (:data:`WEIGHT`): a rendering the builder trusts less counts a little less. Names
taken as given (knowledge base, annotations: no score) count with a factor of 1. With
``rank="hybrid"``, by their best name's cosine plus ``encoder_weight``
(:data:`ENCODER_WEIGHT`) times their best encoder cosine among the knowledge base's names
(:mod:`xlnel.analysis.encoder_lookup`); a concept found on one side only takes the other side's
lowest score for that text. The encoder finds concepts by meaning where the rendered names
miss them; its cosines spread over a much narrower range than TF-IDF's, hence a weight well
above 1. With ``rank="words"``, by their best name's cosine plus ``words_weight``
(:data:`WORDS_WEIGHT`) times the name's word overlap with the text
(:class:`~xlnel.analysis.word_overlap.WordOverlap`): the IDF-weighted F1 of each side's words
matched to their most similar word of the other, so that a name rendering every word of the
text, loosely, can beat one sharing a long stretch of letters with it.

A :class:`LookupForm` can put names and texts into a looser form before they are compared
(both sides alike): the accents of Latin letters folded, and stop words dropped, for texts
or names whose accents and function words are unreliable (terms typed without accents). On
the official HPO labels it gains nothing (docs/dictionary.md), so the default compares the
normalised strings as they are.

Only the ``link_names`` (100) nearest names with a cosine of at least ``min_score`` (0.1) are
ranked; a text with no such name is linked to nothing. The first 10 concepts are exact unless
100 names hold fewer than 10 concepts; the floor spares scoring every name that shares one
character with the text, and a name that far is not what decides a lookup.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from xlnel.analysis.encoder_lookup import DenseScores
from xlnel.analysis.word_overlap import WordOverlap
from xlnel.candidates.tfidf import Match, MatcherConfig, TfidfMatcher
from xlnel.dictionary.dictionary import Dictionary
from xlnel.normalization import fold_latin_marks, normalize_string
from xlnel.stopwords import read_stopword_file

logger = logging.getLogger(__name__)

__all__ = ["ENCODER_WEIGHT", "LINK_NAMES", "MIN_SCORE", "RANKINGS", "WEIGHT", "WORDS_WEIGHT",
           "DictionaryLookup", "LookupForm", "check_encoder", "read_form"]

MIN_SCORE = 0.1
LINK_NAMES = 100
#: Ways :meth:`DictionaryLookup.ranked_concepts` ranks concepts (see the module docstring).
RANKINGS = ("cosine", "weighted", "words", "hybrid")
#: Exponent of the builder score in the ``weighted`` ranking.
WEIGHT = 0.1
#: Weight of the encoder cosine in the ``hybrid`` ranking (chosen on development rows of the
#: French and Japanese official HPO labels, outside the rows the benchmark scores; see
#: docs/dictionary.md).
ENCODER_WEIGHT = 8.0
#: Weight of the word overlap in the ``words`` ranking (chosen on development rows of the
#: French and Japanese official HPO labels, outside the rows the benchmark scores: accuracy@1
#: rose alike from 0.2 to 0.3; see docs/dictionary.md).
WORDS_WEIGHT = 0.25


@dataclass(frozen=True)
class LookupForm:
    """The form in which a lookup compares normalised names and texts.

    Args:
        stopwords: Normalised words dropped from both (a string made of stop words only is
            kept whole), e.g. the ``stopwords.txt`` that ``xlnel adapt`` writes.
        fold_accents: Drop the combining marks of Latin letters
            (:func:`~xlnel.normalization.fold_latin_marks`), of the stop words too: *a* is
            then dropped where *à* is a stop word.
    """

    stopwords: frozenset[str] = field(default_factory=frozenset)
    fold_accents: bool = False

    @cached_property
    def _dropped(self) -> frozenset[str]:
        if not self.fold_accents:
            return self.stopwords
        return frozenset(fold_latin_marks(w) for w in self.stopwords)

    def __call__(self, key: str) -> str:
        """The form of a normalised string."""
        if self.fold_accents:
            key = fold_latin_marks(key)
        if self.stopwords:
            words = [w for w in key.split() if w not in self._dropped]
            if words:
                key = " ".join(words)
        return key

    @property
    def plain(self) -> bool:
        """Whether strings are compared as they are."""
        return not self.stopwords and not self.fold_accents

    def to_dict(self) -> dict[str, Any]:
        """Settings for a report: the number of stop words and whether accents fold."""
        return {"stopwords": len(self.stopwords), "fold_accents": self.fold_accents}


def read_form(lang: str, stopwords: str | Path | None = None,
              fold_accents: bool = False) -> LookupForm:
    """A :class:`LookupForm` with the words of a stop-word file (normalised as ``lang``).

    Raises:
        FileNotFoundError: If ``stopwords`` does not exist.
    """
    words = frozenset() if stopwords is None else read_stopword_file(stopwords, lang)
    return LookupForm(words, fold_accents)


def check_encoder(rank: str, encoder: str | None) -> None:
    """Refuse the ``hybrid`` ranking without an encoder, and an encoder with another ranking.

    Raises:
        ValueError: If they do not go together.
    """
    if (rank == "hybrid") != (encoder is not None):
        raise ValueError("the hybrid ranking needs an encoder (--encoder MODEL), and an "
                         "encoder is used by the hybrid ranking only (--rank hybrid)")


class DictionaryLookup:
    """The normalised names of a dictionary, their concepts and a TF-IDF matcher over them.

    Args:
        dictionary: The dictionary.
        lang: Normalisation language of names and looked-up texts.
        min_score: Lowest cosine of a name considered by :meth:`search`.
        link_names: Most names returned per text by :meth:`search`.
        rank: How :meth:`ranked_concepts` ranks concepts, one of :data:`RANKINGS`.
        weight: Exponent of the builder score in the ``weighted`` ranking.
        dense: Encoder cosines of the concepts near texts (:func:`~xlnel.analysis.
            encoder_lookup.encoder_scores`), needed by the ``hybrid`` ranking.
        encoder_weight: Weight of the encoder cosine in the ``hybrid`` ranking.
        words_weight: Weight of the word overlap in the ``words`` ranking.
        form: The form in which names and texts are compared by TF-IDF (the encoder sees the
            normalised texts); ``None``: as they are. :attr:`index` and :attr:`pairs` hold
            names in that form: look a text up there through :meth:`form`.

    Raises:
        ValueError: If the dictionary has no name left after normalisation, ``rank`` is
            unknown, ``weight``, ``encoder_weight`` or ``words_weight`` is negative, or
            ``rank`` is ``hybrid`` without ``dense``.
    """

    def __init__(self, dictionary: Dictionary, lang: str, min_score: float = MIN_SCORE,
                 link_names: int = LINK_NAMES, rank: str = "cosine",
                 weight: float = WEIGHT, dense: DenseScores | None = None,
                 encoder_weight: float = ENCODER_WEIGHT,
                 form: LookupForm | None = None,
                 words_weight: float = WORDS_WEIGHT) -> None:
        if rank not in RANKINGS:
            raise ValueError(f"rank must be one of {', '.join(RANKINGS)}, got {rank!r}")
        if weight < 0:
            raise ValueError(f"weight must be at least 0, got {weight}")
        if encoder_weight < 0:
            raise ValueError(f"encoder_weight must be at least 0, got {encoder_weight}")
        if words_weight < 0:
            raise ValueError(f"words_weight must be at least 0, got {words_weight}")
        if rank == "hybrid" and dense is None:
            raise ValueError("the hybrid ranking needs an encoder (dense=)")
        self.lang = lang
        self.rank = rank
        self.weight = weight
        self.dense = dense
        self.encoder_weight = encoder_weight
        self.words_weight = words_weight
        self.form = LookupForm() if form is None else form
        self._dense_found: dict[str, dict[str, float]] = {}
        index: dict[str, int] = {}
        self.concepts: list[list[str]] = []
        self.pairs: set[tuple[str, str]] = set()
        #: (name index, concept) -> the highest builder score of its entries (scored ones only)
        self.entry_scores: dict[tuple[int, str], float] = {}
        for entry in dictionary:
            key = self.form(normalize_string(entry.name, lang))
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
            forms = [self.form(k) for k in todo]
            self._found.update(zip(todo, self.matcher.search(forms), strict=True))
        return [self._found[k] for k in keys]

    def dense_search(self, keys: Sequence[str]) -> list[dict[str, float]]:
        """Best encoder cosine of each concept near normalised texts (kept, as :meth:`search`).

        Raises:
            ValueError: If the lookup has no encoder (``dense``).
        """
        if self.dense is None:
            raise ValueError("the lookup has no encoder (dense=)")
        todo = list(dict.fromkeys(k for k in keys if k not in self._dense_found))
        if todo:
            logger.info("encoding %d texts", len(todo))
            self._dense_found.update(zip(todo, self.dense(todo), strict=True))
        return [self._dense_found[k] for k in keys]

    def names_over(self, key: str, threshold: float) -> list[Match]:
        """Every name at cosine >= ``threshold`` of a normalised text (beyond ``link_names``)."""
        found = self.search([key])[0]
        if len(found) < self.config.top_m or found[-1].score < threshold - 1e-6:
            return [m for m in found if m.score >= threshold - 1e-6]
        self.matcher.config = MatcherConfig(threshold=max(threshold, self.config.threshold),
                                            top_m=len(self.keys))
        try:
            return self.matcher.search([self.form(key)])[0]
        finally:
            self.matcher.config = self.config

    def ranked_concepts(self, key: str, k: int, rank: str | None = None) -> list[str]:
        """The first ``k`` concepts of a normalised text (see :meth:`scored_concepts`)."""
        return [cid for cid, _ in self.scored_concepts(key, k, rank)]

    def scored_concepts(self, key: str, k: int,
                        rank: str | None = None) -> list[tuple[str, float]]:
        """The first ``k`` concepts of a normalised text with their scores, ranked by their
        best name's cosine, its weighted score (``rank="weighted"``), its cosine plus word
        overlap (``rank="words"``) or the hybrid score (``rank="hybrid"``; ``None``: the
        lookup's ``rank``); ties: the name found first, then
        dictionary order (hybrid: TF-IDF's finds, then the encoder's).

        Raises:
            ValueError: If ``rank`` is not one of :data:`RANKINGS`, or is ``hybrid`` for a
                lookup without an encoder.
        """
        rank = self.rank if rank is None else rank
        if rank not in RANKINGS:
            raise ValueError(f"rank must be one of {', '.join(RANKINGS)}, got {rank!r}")
        if rank == "cosine":
            scores = self._cosine(key, k)
        elif rank == "words":
            scores = self._words(key)
        else:
            scores = self._weighted(key) if rank == "weighted" else self._hybrid(key)
        # sorted() is stable: ties keep the order in which the concepts were found
        return sorted(scores.items(), key=lambda item: -item[1])[:k]

    def _cosine(self, key: str, k: int) -> dict[str, float]:
        """Concepts by their best name's cosine, as found (best first), until ``k``."""
        ranked: dict[str, float] = {}
        for match in self.search([key])[0]:
            for cid in self.concepts[match.name_index]:
                ranked.setdefault(cid, match.score)
            if len(ranked) >= k:
                break
        return ranked

    def _weighted(self, key: str) -> dict[str, float]:
        """Concepts by their best ``cosine * builder score ** weight`` over the found names
        (a weight below 1 can lift a concept over one found earlier, so all are scored)."""
        best: dict[str, float] = {}
        for match in self.search([key])[0]:
            for cid in self.concepts[match.name_index]:
                score = self.entry_scores.get((match.name_index, cid))
                value = match.score * (1.0 if score is None else max(score, 0.0) ** self.weight)
                if value > best.get(cid, float("-inf")):
                    best[cid] = value
        return best

    @cached_property
    def word_overlap(self) -> WordOverlap:
        """The word overlap of the ``words`` ranking, its word weights from the names."""
        return WordOverlap(self.keys)

    def _words(self, key: str) -> dict[str, float]:
        """Concepts by their best ``cosine + words_weight * word overlap`` over the found
        names (the overlap can lift a concept over one found earlier, so all are scored)."""
        text = self.form(key)
        best: dict[str, float] = {}
        for match in self.search([key])[0]:
            value = match.score + self.words_weight * self.word_overlap(
                text, self.keys[match.name_index])
            for cid in self.concepts[match.name_index]:
                if value > best.get(cid, float("-inf")):
                    best[cid] = value
        return best

    def _hybrid(self, key: str) -> dict[str, float]:
        """Concepts by their best name's cosine plus ``encoder_weight`` times their encoder
        cosine; a concept one side did not find takes that side's lowest score for the text."""
        sparse: dict[str, float] = {}
        for match in self.search([key])[0]:
            for cid in self.concepts[match.name_index]:
                sparse.setdefault(cid, match.score)
        dense = self.dense_search([key])[0]
        floor_sparse = min(sparse.values(), default=0.0)
        floor_dense = min(dense.values(), default=0.0)
        return {cid: sparse.get(cid, floor_sparse)
                + self.encoder_weight * dense.get(cid, floor_dense)
                for cid in dict.fromkeys([*sparse, *dense])}
