"""Small frozen value types passed between the pipeline stages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Span:
    """A stretch of a document's text considered as a possible mention.

    Attributes:
        start: Offset of the first character in the original document text.
        end: Offset one past the last character.
        text: ``document.text[start:end]``.
        stripped_prefix: Letters removed from the front of the word (Hebrew one-letter prefixes
            such as ``ו`` or ``ה``) to obtain this span; ``start`` already points after them.
    """

    start: int
    end: int
    text: str
    stripped_prefix: str = ""


@dataclass(frozen=True)
class Concept:
    """A knowledge-base concept.

    Attributes:
        id: Concept identifier (UMLS CUI, MeSH id, HPO id ...).
        names: Names of the concept, preferred name first.
        types: Semantic types or categories, when the knowledge base gives them.
        xrefs: Identifiers of the same concept in other vocabularies (``UMLS:C0011849``).
    """

    id: str
    names: tuple[str, ...]
    types: tuple[str, ...] = ()
    xrefs: tuple[str, ...] = ()

    @property
    def preferred_name(self) -> str:
        """The first name, taken as the preferred one."""
        return self.names[0] if self.names else self.id


@dataclass(frozen=True)
class Candidate:
    """One dictionary name proposed for a span by a candidate generator.

    Attributes:
        span: The span.
        concept_id: The concept the name stands for.
        name: The dictionary name.
        score: The matcher's similarity of span and name.
        source: Where the name's dictionary entry came from (``kb``, ``annotation``,
            ``translated`` ...; the most trusted one when several entries of the concept
            normalise to the name); ``None`` when the generator does not say.
        entry_score: The dictionary builder's confidence in a generated entry; ``None`` for
            names taken as given (knowledge base, annotations) or when not known.
    """

    span: Span
    concept_id: str
    name: str
    score: float
    source: str | None = None
    entry_score: float | None = None


#: Values of :attr:`Link.id_kind`.
ID_KINDS = ("concept", "dictionary_name")

#: The optional string fields of a :class:`Link` that say what a prediction found, in the order
#: the writers put them.
FOUND_FIELDS = ("concept_name", "concept_type", "matched_name", "matched_source")


@dataclass(frozen=True)
class Link:
    """A mention linked (or not yet linked) to concepts: a gold annotation or a prediction.

    Attributes:
        start: Offset of the first character in the document text.
        end: Offset one past the last character.
        text: ``document.text[start:end]``.
        concept_ids: Linked concepts; empty when the mention has no concept, more than one for
            composite mentions (PubTator ``A|B``).
        type: Entity type (``Disease``, ``Chemical or drug`` ...), if known.
        score: Confidence of a prediction; ``None`` for gold annotations.
        id_kind: What the concept ids of a prediction are: ``concept`` (knowledge-base ids) or
            ``dictionary_name`` (the dictionary gave the matched name no id, so the "id" is
            that name itself, as for a plain list of names); ``None`` when not stated (gold
            annotations, files without the field).
        concept_name: Preferred name of the first concept in the knowledge base, for predictions.
        concept_type: Type of the first concept in the knowledge base (several joined by
            ``|``), when the knowledge base gives one.
        matched_name: The dictionary name whose match produced the prediction.
        matched_source: Where that dictionary entry came from (``kb``, ``translated``,
            ``annotation``).
        alternatives: Other concepts proposed for the same span, best first, as
            ``(concept_id, score, similarity)``: the score the decision gave the concept and
            the matcher's similarity of the span and the concept's closest name
            (``linker.alternatives``); empty when not asked for.
    """

    start: int
    end: int
    text: str
    concept_ids: tuple[str, ...] = ()
    type: str | None = None
    score: float | None = None
    id_kind: str | None = None
    concept_name: str | None = None
    concept_type: str | None = None
    matched_name: str | None = None
    matched_source: str | None = None
    alternatives: tuple[tuple[str, float, float], ...] = ()

    @property
    def concept_id(self) -> str | None:
        """The first concept id, or ``None`` when the mention has none."""
        return self.concept_ids[0] if self.concept_ids else None


@dataclass(frozen=True)
class Document:
    """A text with its mentions (gold annotations or predictions).

    Attributes:
        id: Document identifier (PMID, post id ...).
        text: Full text; for PubTator the title, a space and the abstract.
        entities: Mentions, sorted by offsets.
        metadata: Other fields of the source format that a writer should keep (``community``).
    """

    id: str
    text: str
    entities: tuple[Link, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
