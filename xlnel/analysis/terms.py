"""Terms looked up in a dictionary: each text's best concepts, as ``xlnel dictionary lookup``
prints them.

The use is normalising a list of terms without annotated text, such as phenotype labels in the
language a dictionary was built for (``xlnel adapt``) mapped to HPO. Every term is looked up as
:class:`~xlnel.analysis.lookup.DictionaryLookup` ranks concepts (``cosine``, ``weighted`` or,
with an encoder, ``hybrid``); each concept comes with its score and a name to show, the first
knowledge-base name the dictionary gives it (else its first name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlnel.analysis.encoder_lookup import encoder_scores
from xlnel.analysis.gold import infer_lang, load_dictionary
from xlnel.analysis.lookup import (
    ENCODER_WEIGHT,
    WEIGHT,
    DictionaryLookup,
    check_encoder,
    read_form,
)
from xlnel.dictionary.dictionary import Dictionary
from xlnel.normalization import normalize_string

__all__ = ["TermConcept", "TermLookup", "display_names", "lookup_terms"]


@dataclass(frozen=True)
class TermConcept:
    """One ranked concept of a term: its id, score and a name to show."""

    concept_id: str
    score: float
    name: str


@dataclass(frozen=True)
class TermLookup:
    """A term as given, its normalised text (looked up) and its ranked concepts."""

    text: str
    key: str
    concepts: tuple[TermConcept, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"text": self.text, "key": self.key,
                "concepts": [{"id": c.concept_id, "score": round(c.score, 4), "name": c.name}
                             for c in self.concepts]}


def display_names(dictionary: Dictionary) -> dict[str, str]:
    """Each concept's first knowledge-base (``kb``) name, else its first name."""
    kb: dict[str, str] = {}
    for entry in dictionary:
        if entry.source == "kb":
            kb.setdefault(entry.concept_id, entry.name)
    return {**dictionary.preferred_names(), **kb}


def lookup_terms(dictionary: str | Path, texts: Sequence[str], lang: str | None = None,
                 k: int = 5, rank: str = "cosine", weight: float = WEIGHT,
                 encoder: str | None = None,
                 encoder_weight: float = ENCODER_WEIGHT, stopwords: str | Path | None = None,
                 fold_accents: bool = False) -> list[TermLookup]:
    """The first ``k`` concepts of each term, in input order.

    Args:
        dictionary: Dictionary TSV, ``xlnel adapt`` folder or knowledge-base spec.
        texts: Terms; one that normalises to nothing gets no concept.
        lang: Normalisation language; ``None`` infers it (the adapt report's, else by script).
        k: Concepts per term.
        rank: ``cosine``, ``weighted``, ``words`` or ``hybrid`` (see :class:`DictionaryLookup`).
        weight: Exponent of the builder score in the ``weighted`` ranking.
        encoder: Multilingual encoder of the ``hybrid`` ranking; needed by it, refused by the
            others.
        encoder_weight: Weight of the encoder cosine in the ``hybrid`` ranking.
        stopwords: Stop-word file whose words names and terms are compared without (see
            :class:`~xlnel.analysis.lookup.LookupForm`).
        fold_accents: Compare names and terms with the accents of Latin letters folded.

    Raises:
        FileNotFoundError: If the dictionary or the stop-word file does not exist.
        FormatError: On a malformed dictionary.
        ValueError: If ``k`` is below 1, a setting is out of range, or ``encoder`` does not go
            with ``rank``.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    check_encoder(rank, encoder)
    lang = infer_lang(dictionary, texts) if lang is None else lang
    form = read_form(lang, stopwords, fold_accents)
    loaded = load_dictionary(dictionary)
    dense = None if encoder is None else encoder_scores(loaded, lang, encoder)
    lookup = DictionaryLookup(loaded, lang, rank=rank, weight=weight, dense=dense,
                              encoder_weight=encoder_weight, form=form)
    names = display_names(loaded)
    keys = [normalize_string(text, lang) for text in texts]
    distinct = list(dict.fromkeys(key for key in keys if key))
    lookup.search(distinct)
    if dense is not None:
        lookup.dense_search(distinct)
    return [TermLookup(text, key, tuple(
        TermConcept(cid, score, names.get(cid, "")) for cid, score in
        (lookup.scored_concepts(key, k) if key else []))) for text, key in zip(texts, keys,
                                                                                strict=True)]
