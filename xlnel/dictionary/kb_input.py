"""The English knowledge bases the dictionary builders read (``xlnel adapt``, ``xlnel dictionary
build``), checked for what a dictionary TSV cannot hold."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xlnel.dictionary.dictionary import ROW_BREAKS
from xlnel.errors import FormatError
from xlnel.io._atomic import iter_lines
from xlnel.io.kb import kb_files, load_kb
from xlnel.types import Concept

__all__ = ["check_concept_ids", "load_concepts"]


def load_concepts(kb_specs: Sequence[str], limit: int | None = None
                  ) -> tuple[list[Concept], list[dict[str, Any]]]:
    """Concepts of several knowledge bases, and per base its spec and concept count.

    Args:
        kb_specs: Specs for :func:`~xlnel.io.load_kb` (``hpo``, ``tsv:PATH``, ...).
        limit: Most concepts taken from each base (its first ones); ``None`` for all.

    Raises:
        ValueError: On no spec, ``limit`` below 1 or an unknown format.
        FileNotFoundError: When a knowledge-base file does not exist.
        FormatError: When a concept id holds a tab or a line break (see
            :func:`check_concept_ids`).
    """
    if not kb_specs:
        raise ValueError("give at least one knowledge base (e.g. 'hpo' or 'tsv:names.tsv')")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    concepts: list[Concept] = []
    sources: list[dict[str, Any]] = []
    for spec in kb_specs:
        loaded = load_kb(spec)[:limit]
        check_concept_ids(loaded, spec)
        concepts += loaded
        sources.append({"spec": spec, "concepts": len(loaded),
                        "names": sum(len(c.names) for c in loaded)})
    return concepts, sources


def check_concept_ids(concepts: Sequence[Concept], spec: str) -> None:
    """Refuse a concept id holding a tab or a line break, before any work.

    Names with such white space are written with a space instead
    (:meth:`~xlnel.dictionary.dictionary.Dictionary.add`), but an id is the key linked
    documents carry: changing it would link to a concept the knowledge base does not have.

    Raises:
        FormatError: Naming the knowledge-base file, the line that holds the id (the first
            one holding its first line, for an id over several lines) and the id.
    """
    for concept in concepts:
        if ROW_BREAKS.search(concept.id):
            path, line = _locate(kb_files(spec), concept.id)
            raise FormatError(f"concept id {concept.id!r} holds a tab or a line break, which "
                              "a dictionary TSV row cannot hold: an id must be one line "
                              f"without tabs (knowledge base {spec!r})", path or spec, line)


def _locate(files: Sequence[Path], concept_id: str) -> tuple[Path | None, int | None]:
    """The first file and line holding ``concept_id`` (or, failing that, its first line)."""
    first = ROW_BREAKS.split(concept_id.strip())[0]
    for needle in dict.fromkeys((concept_id, first)):
        if not needle:
            continue
        for path in files:
            for lineno, line in iter_lines(path):
                if needle in line:
                    return path, lineno
    return (files[0] if files else None), None
