"""Per-concept accumulation of names, types and cross-references shared by the KB readers."""

from __future__ import annotations

from collections.abc import Iterable

from xlnel.types import Concept


class ConceptCollector:
    """Accumulates names (with a rank: lower comes first), types and xrefs per concept id."""

    def __init__(self) -> None:
        self._names: dict[str, dict[str, int]] = {}
        self._types: dict[str, dict[str, None]] = {}
        self._xrefs: dict[str, dict[str, None]] = {}

    def add(
        self,
        concept_id: str,
        names: Iterable[str] = (),
        rank: int = 1,
        types: Iterable[str] = (),
        xrefs: Iterable[str] = (),
    ) -> None:
        known = self._names.setdefault(concept_id, {})
        for name in names:
            name = name.strip()
            if name and rank < known.get(name, rank + 1):
                known[name] = rank
        self._types.setdefault(concept_id, {}).update(dict.fromkeys(t for t in types if t))
        self._xrefs.setdefault(concept_id, {}).update(dict.fromkeys(x for x in xrefs if x))

    def __len__(self) -> int:
        return len(self._names)

    def concepts(self) -> list[Concept]:
        # sorted() is stable: names of equal rank keep the order in which they were first seen.
        return [
            Concept(
                concept_id,
                tuple(sorted(names, key=names.__getitem__)),
                tuple(self._types[concept_id]),
                tuple(self._xrefs[concept_id]),
            )
            for concept_id, names in self._names.items()
        ]
