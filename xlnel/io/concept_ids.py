"""The one rule by which every corpus reader and writer reads and writes concept ids.

An id field (a PubTator id column, a BioC ``identifier`` infon, a BRAT normalization's
``DB:ID``, a JSONL ``concept_id`` string or each item of a ``concept_id`` list) is read so:

- ``|`` separates the ids of a composite mention (``D1|D2``); so does ``,`` when every piece
  it separates is a code (letters, digits and ``_``, with a digit, optionally after a
  vocabulary prefix: ``D1,D2``, ``MESH:D1,OMIM:2``), so that a name used as an id
  (``Diabetes Mellitus, Type 2``) stays whole;
- each id loses its surrounding white space and a ``UMLS:`` or ``MESH:`` prefix (any case);
  other prefixes (``HP:``, ``OMIM:``) are part of the id. PubTator3 joins some ids with ``;``:
  such an id stays one, each of its parts stripped of its prefix alike (``MESH:D1;MESH:D2``
  is ``D1;D2``);
- a field that starts with ``tmVar:`` (any case) is one id, whole: PubTator3's variant ids
  join tmVar's own ``|``-separated code and ``;``-separated parts
  (``tmVar:p|SUB|V|600|E;HGVS:p.V600E;VariantGroup:0``), so neither ``|`` nor ``,`` separates
  ids in it;
- an empty id, ``-1`` and ``-`` mean no concept and are dropped, and an id given twice is kept
  once, so that ``-1`` is no concept and ``D002544|-1`` is ``("D002544",)``.

Writers write a link's ids joined by ``|`` (``-1`` for none where the format needs a value) and
refuse, naming the document, an id that would not read back as itself: one that reads as no
concept or as several ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xlnel.errors import FormatError
from xlnel.types import Document, Link

__all__ = [
    "NO_CONCEPT",
    "check_concept_id",
    "check_concept_ids",
    "concept_id_field",
    "format_concept_ids",
    "kept_id_field",
    "kept_id_fields",
    "normalize_concept_id",
    "one_concept_id",
    "parse_concept_ids",
]

#: Ids that mean "no concept".
NO_CONCEPT = frozenset({"", "-1", "-"})
_ID_PREFIXES = ("UMLS:", "MESH:")
#: The prefix of PubTator3's variant ids, whose ``|`` belongs to the id.
_TMVAR = "TMVAR:"
#: A piece of a ``,``-joined field that makes the comma a separator: a code with a digit,
#: optionally after a vocabulary prefix, or a no-concept mark.
_CODE = re.compile(r"\s*(?:(?:[A-Za-z][A-Za-z0-9_]*:)?[A-Za-z0-9_]*[0-9][A-Za-z0-9_]*|-1?)\s*")


def normalize_concept_id(concept_id: str) -> str:
    """Strip the ``UMLS:`` / ``MESH:`` vocabulary prefix (any case) and surrounding spaces.

    Args:
        concept_id: One identifier as written in a corpus, such as ``UMLS:C0011849``.

    Returns:
        The bare identifier (``C0011849``); other prefixes (``HP:``) are kept.
    """
    concept_id = concept_id.strip()
    upper = concept_id.upper()
    for prefix in _ID_PREFIXES:
        if upper.startswith(prefix):
            return concept_id[len(prefix) :].strip()
    return concept_id


def _pieces(part: str) -> list[str]:
    """A ``|``-free part of an id field, split at commas when every piece is a code."""
    pieces = part.split(",")
    if len(pieces) > 1 and all(_CODE.fullmatch(piece) for piece in pieces):
        return pieces
    return [part]


def _id_groups(field_value: str) -> list[list[str]]:
    """The ids of an id field, no-concept marks included, each stripped of its prefixes: one
    list per ``|``-separated part, of its ``,``-separated ids; a tmVar id is one part, whole."""
    if field_value.strip().upper().startswith(_TMVAR):
        return [[field_value.strip()]]
    return [[";".join(normalize_concept_id(piece) for piece in one.split(";"))
             for one in _pieces(part)] for part in field_value.split("|")]


def _id_parts(field_value: str) -> list[str]:
    return [one for group in _id_groups(field_value) for one in group]


def parse_concept_ids(field_value: str) -> tuple[str, ...]:
    """The concept ids of an id field (see the module's rule).

    ``-1`` gives ``()``, ``MESH:D1|D2`` and ``D1, D2`` give ``("D1", "D2")``, ``MESH:D1;MESH:D2``
    gives ``("D1;D2",)``, ``tmVar:p|SUB|V|600|E;HGVS:p.V600E`` gives itself, one id.
    """
    return tuple(dict.fromkeys(i for i in _id_parts(field_value) if i not in NO_CONCEPT))


def one_concept_id(value: str, what: str, path: str | Path, line: int) -> str:
    """The one concept id a knowledge-base field holds, read as corpora read ids (prefixes and
    spaces removed), so that a corpus's ids and the knowledge base's match.

    Args:
        value: The field.
        what: What it is, for the message (``concept_id``).
        path: The file, for the message.
        line: The line, for the message.

    Raises:
        FormatError: Naming the file, line and value, when it reads as no concept (``-1``,
            empty) or as several (``D1|D2``): a corpus would never link a mention to it.
    """
    ids = _id_parts(value)
    if len(ids) != 1 or ids[0] in NO_CONCEPT:
        found = [i for i in ids if i not in NO_CONCEPT]
        raise FormatError(f"{what} {value!r} is not one concept id: corpora read it as "
                          f"{found or 'no concept'} ({', '.join(map(repr, sorted(NO_CONCEPT)))} "
                          "mean no concept, '|' and ',' between codes separate ids)", path, line)
    return ids[0]


def format_concept_ids(concept_ids: tuple[str, ...]) -> str:
    """Write concept ids as an id field (``A|B``, or ``-1`` for none)."""
    return "|".join(concept_ids) if concept_ids else "-1"


def kept_id_field(field_value: str) -> str | None:
    """The id field to write back for a mention read with ``field_value``, when the concept ids
    alone would not give it back: ``D002544|-1`` (a composite mention with a part of no
    concept, as BC5CDR has) is read as ``("D002544",)``, ``D1,D2`` as ``("D1", "D2")``.
    ``None`` when they would (prefixes and spaces aside, which are dropped)."""
    kept = "|".join(",".join(group) for group in _id_groups(field_value))
    return None if kept == format_concept_ids(parse_concept_ids(field_value)) else kept


def kept_id_fields(doc: Document) -> dict[tuple[int, int], str]:
    """The id fields a document's mentions were read with, by ``(start, end)``, where the
    concept ids alone would not give them back (``concept_id_fields`` metadata)."""
    metadata: Mapping[str, Any] = doc.metadata
    return {(item[0], item[1]): item[2] for item in metadata.get("concept_id_fields") or ()
            if isinstance(item, list | tuple) and len(item) == 3 and isinstance(item[2], str)}


def check_concept_id(doc_id: str, concept_id: str, one_line: bool = True) -> None:
    """Refuse a concept id that would not read back as itself.

    Args:
        doc_id: The document, for the message.
        concept_id: The id about to be written.
        one_line: The format writes the id on one line of tab-separated fields (PubTator,
            BioC's infon lines, BRAT), which a tab or line break would break.

    Raises:
        FormatError: Naming the document and the id: one with a tab or line break (when
            ``one_line``), one read as no concept (``-1``, empty), or one read as several ids
            (``A|B``).
    """
    if one_line and any(c in concept_id for c in "\t\n\r"):
        why = "a tab or line break would break the line"
    elif len(_id_parts(concept_id)) != 1 or parse_concept_ids(concept_id) == ():
        why = (f"it reads back as {list(parse_concept_ids(concept_id)) or 'no concept'}: "
               f"{', '.join(map(repr, sorted(NO_CONCEPT)))} mean no concept and '|' (',' "
               "between codes) separates ids in every format")
    else:
        return
    raise FormatError(f"document {doc_id!r}: concept id {concept_id!r} cannot be written: {why}")


def check_concept_ids(doc_id: str, link: Link, one_line: bool = True) -> None:
    """Refuse a concept id of ``link`` that would not read back as itself (see
    :func:`check_concept_id`).

    Raises:
        FormatError: Naming the document and the first such id.
    """
    for concept_id in link.concept_ids:
        check_concept_id(doc_id, concept_id, one_line)


def concept_id_field(doc_id: str, link: Link, kept: Mapping[tuple[int, int], str]) -> str:
    """The id field to write for ``link``: the one it was read with (``kept``, see
    :func:`kept_id_fields`) while its concept ids are still those, else its concept ids.

    Raises:
        FormatError: As :func:`check_concept_ids`.
    """
    check_concept_ids(doc_id, link)
    field_value = kept.get((link.start, link.end))
    if field_value is not None and not any(c in field_value for c in "\t\n\r") \
            and parse_concept_ids(field_value) == link.concept_ids:
        return field_value
    return format_concept_ids(link.concept_ids)
