"""Request and response bodies of the linking service (they make its OpenAPI schema)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class DocumentIn(BaseModel):
    """A document to link; keys other than ``id`` and ``text`` come back unchanged."""

    model_config = ConfigDict(extra="allow")

    id: str | None = Field(None, min_length=1,
                           description="Identifier; text-N (its position) when absent.")
    text: str


class LinkRequest(BaseModel):
    """Exactly one of ``text`` (one text), ``texts`` or ``documents`` (a batch)."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(None, description="One text; the answer is one document.")
    texts: list[str] | None = Field(None, description="A batch of texts.")
    documents: list[DocumentIn] | None = Field(None, description="A batch of documents.")


class AlternativeOut(BaseModel):
    """Another concept proposed for a link's span, with its score."""

    concept_id: str
    score: float = Field(description="The score the decision gave the concept at the span.")
    similarity: float = Field(description="Matcher similarity of the span and the concept's "
                              "closest name.")


class EntityOut(BaseModel):
    """A link, as an entity of the JSONL output."""

    start: int
    end: int
    text: str
    concept_id: str | None = Field(None, description="Concept id (A|B for several).")
    score: float | None = None
    type: str | None = Field(None, description="Entity type as the training corpus annotates "
                             "it (Disease, Chemical ...), when it has types.")
    id_kind: str | None = Field(
        None, description="concept (a knowledge-base id) or dictionary_name (the matched name "
        "had no id, so the name itself stands as id).")
    concept_name: str | None = Field(None, description="The concept's preferred name.")
    concept_type: str | None = Field(None, description="The concept's type, if the KB has one.")
    matched_name: str | None = Field(None, description="The dictionary name that matched.")
    matched_source: str | None = Field(None, description="kb, translated or annotation.")
    alternatives: list[AlternativeOut] | None = Field(
        None, description="Other concepts proposed for the span, best first, when the "
        "pipeline's linker.alternatives asks for them.")


class DocumentOut(BaseModel):
    """A linked document, as a line of the JSONL output."""

    model_config = ConfigDict(extra="allow")

    id: str
    text: str
    entities: list[EntityOut]


class BatchOut(BaseModel):
    """The linked documents of a batch, in input order."""

    documents: list[DocumentOut]


class ConceptOut(BaseModel):
    """A concept of the pipeline: preferred name, type and dictionary names."""

    id: str
    name: str
    type: str | None = None
    names: list[str] = Field(description="Dictionary names (any language), KB names first.")


class ErrorOut(BaseModel):
    """An error: what was wrong and what is allowed."""

    detail: Any
