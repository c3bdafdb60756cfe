"""Dictionary fine-tuning (DFT): a share R of the annotated documents feeds the dictionary."""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xlnel.dictionary.dictionary import Dictionary
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


def fine_tune_dictionary(dictionary: Dictionary, documents: Sequence[Document], R: float,
                         seed: int = 0, unlinked: str = "name", prune: int = 0
                         ) -> tuple[list[Document], DFTResult]:
    """Reserve R of ``documents`` and add their gold (mention, concept) pairs to ``dictionary``.

    Composite mentions (several concept ids) are skipped: their text names no single concept.

    Args:
        dictionary: Extended in place; new entries have source ``annotation``.
        documents: Annotated training documents.
        R: Share of documents reserved for the dictionary.
        seed: Seed of the by-document split.
        unlinked: ``name``: a mention without concept id becomes its own concept (its text);
            ``skip``: such mentions are left out.
        prune: When > 0, generated entries (those with a score) whose name occurs at least
            ``prune`` times in the reserved documents and never as a gold mention are removed
            (see :func:`prune_unlinked_names`).

    Returns:
        The documents left for training the filter, and a summary.
    """
    if unlinked not in ("name", "skip"):
        raise ValueError(f"unlinked must be 'name' or 'skip', got {unlinked!r}")
    dft_docs, rest = split_documents(documents, R, seed)
    known = dictionary.concept_ids()
    seen = added = 0
    new_concepts: set[str] = set()
    for doc in dft_docs:
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
    pruned = prune_unlinked_names(dictionary, dft_docs, prune) if prune > 0 else 0
    result = DFTResult(len(dft_docs), len(rest), seen, added, len(new_concepts), pruned)
    logger.info("DFT: %s", result)
    return rest, result


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
