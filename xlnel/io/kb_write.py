"""Write a knowledge base as the TSV table :func:`~xlnel.io.kb.read_kb_tsv` reads
(``xlnel kb SPEC --out FILE.tsv``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from xlnel.io._atomic import atomic_write
from xlnel.io.concept_ids import normalize_concept_id, parse_concept_ids
from xlnel.types import Concept

logger = logging.getLogger(__name__)

__all__ = ["write_kb_tsv"]

_HEADER = "concept_id\tname\tpreferred\ttype\n"
_BREAKS = ("\t", "\n", "\r")


def _check(concept: Concept) -> None:
    fields = [concept.id, *concept.names, *concept.types]
    if not concept.names:
        raise ValueError(f"concept {concept.id!r} has no name, and a table row is a name")
    if not concept.id.strip() or any(b in f for f in fields for b in _BREAKS):
        raise ValueError(f"concept {concept.id!r} cannot be written to a TSV table: its id, "
                         "names and types must hold no tab or line break")
    if parse_concept_ids(concept.id) != (normalize_concept_id(concept.id),):
        raise ValueError(f"concept id {concept.id!r} would be read back from the table as "
                         f"{list(parse_concept_ids(concept.id)) or 'no concept'}, not as one id "
                         "(-1 means no concept, '|' and ',' between codes separate ids)")
    if any("|" in t for t in concept.types):
        raise ValueError(f"concept {concept.id!r}: a type with '|' ({concept.types!r}) would be "
                         "read back as several types")


def write_kb_tsv(path: str | Path, concepts: Iterable[Concept]) -> tuple[int, int]:
    """Write concepts as a TSV table: one row a name, the preferred name first and marked
    ``preferred`` 1, the types joined by ``|``; written atomically (``.gz`` compressed).

    The table keeps ids, names, their order and types; cross-references and the retired ids
    a knowledge base maps to current ones are not part of the format.

    Args:
        path: File to create or replace.
        concepts: Concepts to write (:func:`~xlnel.io.kb.load_kb` gives them).

    Returns:
        The numbers of concepts and of names written.

    Raises:
        ValueError: When a concept has no name, an id, name or type holds a tab or line break,
            an id would read back as no concept or several (``-1``, ``a|b``), or a type holds a
            ``|``.
    """
    n_concepts = n_names = 0
    with atomic_write(path) as handle:
        handle.write(_HEADER)
        for concept in concepts:
            _check(concept)
            types = "|".join(concept.types)
            for i, name in enumerate(concept.names):
                handle.write(f"{concept.id}\t{name}\t{int(i == 0)}\t{types}\n")
            n_concepts += 1
            n_names += len(concept.names)
    logger.info("wrote %d concepts (%d names) to %s", n_concepts, n_names, path)
    return n_concepts, n_names
