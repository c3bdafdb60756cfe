"""Whether a candidate's concept is of a kind the corpus annotates (option ``kinds``).

A knowledge base such as MeSH holds every kind of concept, while a corpus annotates a few kinds
(BC5CDR: diseases and chemicals, not anatomy, cells, organisms or occupations). A span whose text
the training documents never showed may still match a knowledge-base name exactly: the mention
and name priors know nothing of "metastases" or "overactive bladder" (annotated) nor of
"neutrophils" or "surgeons" (never), and only the kind of the concept tells them apart.

The training candidates teach it. A concept that a gold mention of the training documents carries
is of an annotated kind; a concept whose names matched spans closely (matcher score at least
:data:`KIND_MIN_SCORE`) without any gold mention ever carrying it is not. Each name a concept was
proposed under is one example labelled with its concept's kind, whatever its own occurrences
were (an annotator's miss or a context that made one occurrence no mention does not make the
name look like an everyday word). A logistic regression on the names' character n-grams
(:class:`~xlnel.filtering.ngram_priors.NgramPrior`) predicts the kind for any name;
:data:`KIND_FEATURES` is its prediction for the candidate's name.

The counts behind it are the ``kind`` table of the filter's priors, keyed by concept id and
normalised name (:func:`kind_key`); like the other priors they are counted out of fold on the
training documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: The column: the predicted chance that the candidate's name stands for a concept of a kind the
#: training documents annotate.
KIND_FEATURES = ("concept_kind",)
#: Least matcher score of a candidate counted in the ``kind`` table when its span is no gold
#: mention: a loose match says nothing of whether its concept would have been annotated.
KIND_MIN_SCORE = 0.8
#: Separates the concept id from the name in the keys of the ``kind`` table.
SEP = "\t"


def kind_key(concept_id: str, norm_name: str) -> str:
    """Key of the ``kind`` prior table for a concept and one of its normalised names."""
    return f"{concept_id}{SEP}{norm_name}"


def counts_toward_kind(score: float, positive: bool) -> bool:
    """Whether a candidate with this matcher score and label enters the ``kind`` table."""
    return positive or score >= KIND_MIN_SCORE


def kind_table(kind: Mapping[str, Sequence[int]]) -> dict[str, list[int]]:
    """Per normalised name, ``[concepts of an annotated kind, concepts]`` among the concepts
    the ``kind`` table saw it for: the table :meth:`NgramPrior.fit` takes.

    A concept is of an annotated kind when any of its keys counted a positive occurrence.
    """
    annotated: set[str] = set()
    names: dict[str, set[str]] = {}
    for key, (positive, _) in kind.items():
        concept_id, _, name = key.partition(SEP)
        if positive > 0:
            annotated.add(concept_id)
        names.setdefault(name, set()).add(concept_id)
    return {name: [sum(c in annotated for c in concepts), len(concepts)]
            for name, concepts in names.items() if name}
