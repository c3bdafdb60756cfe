"""The distinct normalised names of a dictionary, each with the concepts it stands for: what a
matcher indexes (TF-IDF or dense), built in one place."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xlnel.dictionary.dictionary import GENERATED_SOURCES, Dictionary, Entry
from xlnel.errors import ArtifactError
from xlnel.normalization import normalize_string

__all__ = ["NameIndex", "Provenance", "Target", "index_names", "read_provenance", "target_rows",
           "trust", "write_provenance"]

#: File of a saved generator holding its targets' provenance.
PROVENANCE_FILE = "provenance.json"

#: ``(source, builder score)`` of the dictionary entry behind a candidate.
Provenance = tuple[str, float | None]
#: ``(concept id, name, source, builder score)``: what a match of an indexed name yields.
Target = tuple[str, str, str | None, float | None]


@dataclass(frozen=True)
class NameIndex:
    """Normalised names in first-seen order, and per name what it stands for.

    Attributes:
        keys: The distinct normalised names.
        targets: Per name, ``(concept id, original name)``: one pair per concept, with the
            first dictionary name of that concept that normalises to the key.
        sources: Per name, the sources of its dictionary entries (``kb``, ``annotation`` ...).
        provenance: Per name, parallel to ``targets``: the ``(source, builder score)`` of the
            most trusted entry of that concept normalising to the key (see :func:`trust`).
    """

    keys: list[str]
    targets: list[list[tuple[str, str]]]
    sources: list[set[str]]
    provenance: list[list[Provenance]]


def trust(source: str, score: float | None) -> tuple[int, float]:
    """Sort key of an entry's provenance: annotations, then knowledge-base names, then
    generated names by their builder score."""
    rank = 2 if source == "annotation" else 0 if source in GENERATED_SOURCES else 1
    return rank, -1.0 if score is None else score


def index_names(dictionary: Dictionary, lang: str) -> NameIndex:
    """Group the entries of ``dictionary`` by normalised name (see :class:`NameIndex`).

    Raises:
        ValueError: If the dictionary has no name with any letter or digit.
    """
    index: dict[str, int] = {}
    targets: list[list[tuple[str, str]]] = []
    provenance: list[list[Provenance]] = []
    seen: list[dict[str, int]] = []  # per name: concept id -> position in its targets
    sources: list[set[str]] = []
    for entry in dictionary:
        key = normalize_string(entry.name, lang)
        if not key:
            continue
        i = index.setdefault(key, len(index))
        if i == len(targets):
            targets.append([])
            provenance.append([])
            seen.append({})
            sources.append(set())
        _add_target(entry, targets[i], provenance[i], seen[i])
        sources[i].add(entry.source)
    if not index:
        raise ValueError("the dictionary has no usable name to index")
    return NameIndex(list(index), targets, sources, provenance)


def _add_target(entry: Entry, targets: list[tuple[str, str]], provenance: list[Provenance],
                seen: dict[str, int]) -> None:
    """Add ``entry`` to one name's targets, or raise its concept's provenance."""
    j = seen.get(entry.concept_id)
    if j is None:
        seen[entry.concept_id] = len(targets)
        targets.append((entry.concept_id, entry.name))
        provenance.append((entry.source, entry.score))
    elif trust(entry.source, entry.score) > trust(*provenance[j]):
        provenance[j] = (entry.source, entry.score)


def target_rows(targets: list[list[tuple[str, str]]],
                provenance: list[list[Provenance]]) -> list[list[Target]]:
    """Targets joined with their provenance; ``None`` for both when there is none (a
    generator saved without it)."""
    if not provenance:
        return [[(cid, name, None, None) for cid, name in t] for t in targets]
    return [[(cid, name, source, score) for (cid, name), (source, score)
             in zip(t, p, strict=True)] for t, p in zip(targets, provenance, strict=True)]


def write_provenance(directory: Path, provenance: list[list[Provenance]]) -> None:
    """Write ``provenance.json`` (parallel to a generator's ``targets.json``)."""
    (directory / PROVENANCE_FILE).write_text(
        json.dumps([[[s, x] for s, x in p] for p in provenance], ensure_ascii=False),
        encoding="utf-8")


def read_provenance(directory: Path, targets: list[list[tuple[str, str]]]
                    ) -> list[list[Provenance]]:
    """The provenance written by :func:`write_provenance`; empty when the folder has none.

    Raises:
        ArtifactError: If it does not match ``targets`` name for name.
    """
    path = directory / PROVENANCE_FILE
    if not path.is_file():
        return []
    raw = json.loads(path.read_text(encoding="utf-8"))
    if [len(p) for p in raw] != [len(t) for t in targets]:
        raise ArtifactError(f"{path} does not match the targets beside it (another build?); "
                            "retrain the pipeline")
    return [[(str(s), None if x is None else float(x)) for s, x in p] for p in raw]
