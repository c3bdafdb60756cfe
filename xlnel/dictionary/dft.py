"""Dictionary fine-tuning (DFT): a share R of the annotated documents feeds the dictionary."""

from __future__ import annotations

import logging
import random
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


def fine_tune_dictionary(dictionary: Dictionary, documents: Sequence[Document], R: float,
                         seed: int = 0, unlinked: str = "name"
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
    result = DFTResult(len(dft_docs), len(rest), seen, added, len(new_concepts))
    logger.info("DFT: %s", result)
    return rest, result
