"""The distinct normalised names of a dictionary, each with the concepts it stands for: what a
matcher indexes (TF-IDF or dense), built in one place."""

from __future__ import annotations

from dataclasses import dataclass

from xlnel.dictionary.dictionary import Dictionary
from xlnel.normalization import normalize_string

__all__ = ["NameIndex", "index_names"]


@dataclass(frozen=True)
class NameIndex:
    """Normalised names in first-seen order, and per name what it stands for.

    Attributes:
        keys: The distinct normalised names.
        targets: Per name, ``(concept id, original name)``: one pair per concept, with the
            first dictionary name of that concept that normalises to the key.
        sources: Per name, the sources of its dictionary entries (``kb``, ``annotation`` ...).
    """

    keys: list[str]
    targets: list[list[tuple[str, str]]]
    sources: list[set[str]]


def index_names(dictionary: Dictionary, lang: str) -> NameIndex:
    """Group the entries of ``dictionary`` by normalised name (see :class:`NameIndex`).

    Raises:
        ValueError: If the dictionary has no name with any letter or digit.
    """
    index: dict[str, int] = {}
    targets: list[list[tuple[str, str]]] = []
    seen: list[set[str]] = []
    sources: list[set[str]] = []
    for entry in dictionary:
        key = normalize_string(entry.name, lang)
        if not key:
            continue
        i = index.setdefault(key, len(index))
        if i == len(targets):
            targets.append([])
            seen.append(set())
            sources.append(set())
        if entry.concept_id not in seen[i]:
            seen[i].add(entry.concept_id)
            targets[i].append((entry.concept_id, entry.name))
        sources[i].add(entry.source)
    if not index:
        raise ValueError("the dictionary has no usable name to index")
    return NameIndex(list(index), targets, sources)
