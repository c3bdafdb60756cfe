"""What each decided link found: the step after the linking decision that both a trained
:class:`~xlnel.runtime.Pipeline` and an experiment cell (:mod:`xlnel.experiments.runner`)
run, so that their links, entity types included, are the same."""

from __future__ import annotations

from dataclasses import replace

from xlnel.dictionary.concepts import ConceptTable
from xlnel.dictionary.dictionary import Dictionary
from xlnel.linkers.entity_types import EntityTyper
from xlnel.types import Document

__all__ = ["describe_links", "name_ids"]


def name_ids(dictionary: Dictionary) -> set[str]:
    """The concept ids of ``dictionary`` that are dictionary names used as ids.

    A name that is its own concept id: a names-list entry, or a DFT mention without a concept;
    knowledge-base ids (CUIs, HPO ids) are never among their own names.
    """
    d = dictionary
    return {c for c in d.concept_ids() if c in d and c in d.concepts_of(c)}


def describe_links(document: Document, dictionary: Dictionary, concepts: ConceptTable,
                   names: set[str], typer: EntityTyper | None = None) -> Document:
    """The document's decided links with what they found.

    Each link gets its concept's preferred name and type and the matched name's source
    (:meth:`~xlnel.dictionary.concepts.ConceptTable.describe`), whether its id is a concept id
    or a dictionary name (``id_kind``), and then, with a ``typer``, its entity type, which
    reads the concept's preferred name just set.

    Args:
        document: A document whose entities are decided links.
        dictionary: The dictionary the links were matched in.
        concepts: Preferred names and types of the concepts.
        names: :func:`name_ids` of ``dictionary``.
        typer: The entity typer (``linker.entity_types``), or ``None`` for untyped links.
    """
    doc = concepts.describe(document, dictionary)
    links = tuple(replace(e, id_kind="dictionary_name" if e.concept_id in names else "concept")
                  for e in doc.entities)
    doc = replace(doc, entities=links)
    return doc if typer is None else typer.annotate_document(doc)
