"""What a pipeline knows about each concept it links to: the preferred name and the type.

The dictionary holds every name in the text's language; a link should also say which concept it
found in the knowledge base's own words (its preferred, usually English, name) and of what type.
A pipeline keeps this table as ``concepts.tsv`` (``concept_id<TAB>name<TAB>type``); a folder
without one falls back to :meth:`ConceptTable.from_dictionary`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import FormatError
from xlnel.io._atomic import atomic_write
from xlnel.types import Concept, Document

_HEADER = "concept_id\tname\ttype"


@dataclass(frozen=True)
class ConceptInfo:
    """The preferred name of a concept and its type (``None`` when the KB gives none)."""

    id: str
    name: str
    type: str | None = None


class ConceptTable:
    """Concept id to :class:`ConceptInfo`; the first knowledge base naming a concept wins."""

    def __init__(self, infos: Iterable[ConceptInfo] = ()) -> None:
        self._infos: dict[str, ConceptInfo] = {}
        for info in infos:
            self._infos.setdefault(info.id, info)

    @classmethod
    def from_concepts(cls, concepts: Iterable[Concept]) -> ConceptTable:
        """The preferred name and types (joined by ``|``) of knowledge-base concepts."""
        return cls(ConceptInfo(c.id, c.preferred_name, "|".join(c.types) or None)
                   for c in concepts)

    @classmethod
    def from_dictionary(cls, dictionary: Dictionary) -> ConceptTable:
        """Each concept's first ``kb`` name (any first name when it has none); no types."""
        names: dict[str, str] = {}
        for entry in dictionary:
            if entry.source == "kb":
                names.setdefault(entry.concept_id, entry.name)
        for cid, name in dictionary.preferred_names().items():
            names.setdefault(cid, name)
        return cls(ConceptInfo(cid, name) for cid, name in names.items())

    def update(self, other: ConceptTable) -> None:
        """Add the concepts of ``other`` that this table does not have."""
        for info in other:
            self._infos.setdefault(info.id, info)

    def get(self, concept_id: str | None) -> ConceptInfo | None:
        """The concept's info, or ``None`` when unknown."""
        return None if concept_id is None else self._infos.get(concept_id)

    def __len__(self) -> int:
        return len(self._infos)

    def __iter__(self) -> Iterator[ConceptInfo]:
        return iter(self._infos.values())

    def __contains__(self, concept_id: object) -> bool:
        return concept_id in self._infos

    def describe(self, document: Document, dictionary: Dictionary | None = None) -> Document:
        """The document with each link's ``concept_name``, ``concept_type`` and, when the link
        has a ``matched_name`` and ``dictionary`` is given, ``matched_source`` filled in."""
        links = []
        for link in document.entities:
            info = self.get(link.concept_id)
            source = link.matched_source
            if dictionary is not None and link.matched_name and link.concept_id:
                source = dictionary.source_of(link.matched_name, link.concept_id) or source
            links.append(replace(link, concept_name=info.name if info else link.concept_name,
                                 concept_type=info.type if info else link.concept_type,
                                 matched_source=source))
        return replace(document, entities=tuple(links))

    def save(self, path: str | Path) -> None:
        """Write the table as TSV (atomically)."""
        with atomic_write(path) as f:
            f.write(_HEADER + "\n")
            for info in self._infos.values():
                f.write(f"{info.id}\t{_clean(info.name)}\t{_clean(info.type or '')}\n")

    @classmethod
    def load(cls, path: str | Path) -> ConceptTable:
        """Read a table written by :meth:`save`.

        Raises:
            FormatError: On a wrong header or a line without three tab-separated fields.
        """
        infos = []
        with open(path, encoding="utf-8") as f:
            header = f.readline().rstrip("\n")
            if header != _HEADER:
                raise FormatError(f"expected header {_HEADER!r}, got {header!r}", path, 1)
            for lineno, line in enumerate(f, start=2):
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 3 or not parts[0]:
                    raise FormatError(f"expected 3 tab-separated fields, id first: "
                                      f"{line.rstrip()!r}", path, lineno)
                infos.append(ConceptInfo(parts[0], parts[1], parts[2] or None))
        return cls(infos)


def _clean(value: str) -> str:
    return value.replace("\t", " ").replace("\n", " ")
