"""Dictionary fine-tuning (DFT): a share R of the annotated documents feeds the dictionary.

With cross-fitting (``crossfit`` K >= 2) every training document feeds the dictionary and the
documents outside the share R also train the filter: they are dealt into K folds, and the
filter's candidates of fold k's documents are generated with a dictionary that holds the gold
names of every training document outside fold k (:func:`crossfit_dictionaries`), so no
document's candidates come from its own gold names.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xlnel.dictionary.dictionary import Dictionary
from xlnel.folds import deal
from xlnel.types import Document

logger = logging.getLogger(__name__)


def split_documents(documents: Sequence[Document], fraction: float,
                    seed: int) -> tuple[list[Document], list[Document]]:
    """Split by document: ``round(fraction * n)`` seeded random documents, then the rest.

    Both parts keep the input order. ``fraction`` 0 and 1 are valid.

    Raises:
        ValueError: If ``fraction`` is outside [0, 1].
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"split fraction must be in [0, 1], got {fraction}")
    n_take = round(fraction * len(documents))
    order = list(range(len(documents)))
    random.Random(seed).shuffle(order)
    chosen = set(order[:n_take])
    taken = [d for i, d in enumerate(documents) if i in chosen]
    rest = [d for i, d in enumerate(documents) if i not in chosen]
    return taken, rest


@dataclass(frozen=True)
class DFTResult:
    """What dictionary fine-tuning did."""

    dft_documents: int
    filter_documents: int
    pairs_seen: int
    entries_added: int
    concepts_added: int
    entries_pruned: int = 0
    #: Cross-fitting folds K (0: off); with K, every document's names are in the dictionary.
    crossfit: int = 0


def _check(unlinked: str, crossfit: int) -> None:
    if unlinked not in ("name", "skip"):
        raise ValueError(f"unlinked must be 'name' or 'skip', got {unlinked!r}")
    if crossfit < 0 or crossfit == 1:
        raise ValueError(f"crossfit must be 0 (off) or at least 2 folds, got {crossfit}")


def fine_tune_dictionary(dictionary: Dictionary, documents: Sequence[Document], R: float,
                         seed: int = 0, unlinked: str = "name", prune: int = 0,
                         crossfit: int = 0) -> tuple[list[Document], DFTResult]:
    """Reserve R of ``documents`` and add their gold (mention, concept) pairs to ``dictionary``.

    Composite mentions (several concept ids) are skipped: their text names no single concept.
    With ``crossfit`` K >= 2 the gold pairs of *all* ``documents`` join the dictionary (the
    reserved share R then only feeds the dictionary, the rest feeds it and the filter); the
    filter's candidates must then come from :func:`crossfit_dictionaries`.

    Args:
        dictionary: Extended in place; new entries have source ``annotation``.
        documents: Annotated training documents.
        R: Share of documents reserved for the dictionary.
        seed: Seed of the by-document split.
        unlinked: ``name``: a mention without concept id becomes its own concept (its text);
            ``skip``: such mentions are left out.
        prune: When > 0, generated entries (those with a score) whose name occurs at least
            ``prune`` times in the documents whose names join and never as a gold mention are
            removed (see :func:`prune_unlinked_names`).
        crossfit: Cross-fitting folds K, 0 for off.

    Returns:
        The documents left for training the filter, and a summary.

    Raises:
        ValueError: If ``unlinked`` or ``crossfit`` is not valid, or as
            :func:`split_documents`.
    """
    _check(unlinked, crossfit)
    dft_docs, rest = split_documents(documents, R, seed)
    named = list(documents) if crossfit else dft_docs
    seen, added, new_concepts, pruned = add_gold_names(dictionary, named, unlinked, prune)
    result = DFTResult(len(dft_docs), len(rest), seen, added, new_concepts, pruned, crossfit)
    logger.info("DFT: %s", result)
    return rest, result


def add_gold_names(dictionary: Dictionary, documents: Sequence[Document], unlinked: str,
                   prune: int = 0) -> tuple[int, int, int, int]:
    """Add the gold (mention, concept) pairs of ``documents`` to ``dictionary`` and prune it.

    Returns:
        Pairs seen, entries added, concepts added, entries pruned (see
        :func:`fine_tune_dictionary`, which documents the arguments).
    """
    known = dictionary.concept_ids()
    seen = added = 0
    new_concepts: set[str] = set()
    for doc in documents:
        for ent in doc.entities:
            if len(ent.concept_ids) > 1:
                continue
            cid = ent.concept_id
            if cid is None:
                if unlinked == "skip":
                    continue
                cid = ent.text
            seen += 1
            if dictionary.add(ent.text, cid, "annotation"):
                added += 1
                if cid not in known:
                    new_concepts.add(cid)
    pruned = prune_unlinked_names(dictionary, documents, prune) if prune > 0 else 0
    return seen, added, len(new_concepts), pruned


def crossfit_dictionaries(base: Dictionary, documents: Sequence[Document],
                          filter_documents: Sequence[Document], k: int, seed: int = 0,
                          unlinked: str = "name", prune: int = 0
                          ) -> Iterator[tuple[list[int], Dictionary]]:
    """The out-of-fold dictionaries of cross-fitted DFT, one fold at a time.

    ``filter_documents`` (those :func:`fine_tune_dictionary` left for the filter) are dealt
    into ``k`` folds (:func:`xlnel.folds.deal`); each fold comes with a copy of ``base`` (the
    dictionary before DFT) extended with the gold names of every document of ``documents``
    (all training documents) outside the fold, pruned as :func:`fine_tune_dictionary` prunes.

    Yields:
        (positions of the fold's documents in ``filter_documents``, its dictionary).
    """
    _check(unlinked, k)
    for fold in deal(len(filter_documents), k, seed):
        held_out = {filter_documents[i].id for i in fold}
        dictionary = Dictionary(base)
        named = [d for d in documents if d.id not in held_out]
        add_gold_names(dictionary, named, unlinked, prune)
        logger.info("cross-fitting: fold of %d documents, dictionary of %d entries", len(fold),
                    len(dictionary))
        yield fold, dictionary


_WORD = re.compile(r"\w+")


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


def prune_unlinked_names(dictionary: Dictionary, documents: Sequence[Document],
                         min_count: int) -> int:
    """Remove generated entries whose name the annotators passed over; returns how many.

    A generated entry (one with a builder score; knowledge-base and annotation names have
    none) goes when its name occurs, as whole words, at least ``min_count`` times in the
    text of ``documents`` and never as (the whole of) a gold mention: an everyday word the
    builder tied to a knowledge-base name.
    """
    generated = [(e, _words(e.name)) for e in dictionary if e.score is not None]
    lengths = {len(key) for _, key in generated} - {0}
    occurs: Counter[tuple[str, ...]] = Counter()
    gold: set[tuple[str, ...]] = set()
    for doc in documents:
        words = _words(doc.text)
        for n in lengths:
            occurs.update(words[i:i + n] for i in range(len(words) - n + 1))
        gold.update(_words(ent.text) for ent in doc.entities)
    removed = 0
    for e, key in generated:
        if occurs[key] >= min_count and key not in gold:
            removed += dictionary.remove(e.name, e.concept_id)
    return removed
