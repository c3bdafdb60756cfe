"""BioC elements as read, before they become a :class:`~xlnel.types.Document` (see
:mod:`xlnel.io.bioc`)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlnel.errors import FormatError, LimitError
from xlnel.io.concept_ids import kept_id_field, parse_concept_ids
from xlnel.types import FOUND_FIELDS, ID_KINDS, Document, Link

__all__ = ["CR_HINT", "EXTRA_INFON", "ID_INFONS", "MAX_GAP", "MAX_OFFSET", "DocumentDraft", "Draft",
           "parse_int"]

#: Infon keys that hold an annotation's concept id, in order of preference (any case): those of
#: PubTator's exports (``identifier``; the older ``MeSH``, ``OMIM``, ``ChEBI``, ``NCBI_Gene``,
#: ``NCBI_Taxonomy``), BC5CDR's ``MESH`` and generic ones.
ID_INFONS = ("identifier", "mesh", "cui", "concept_id", "db_id", "omim", "chebi", "ncbi_gene",
             "ncbi gene", "ncbi_taxonomy", "ncbi taxonomy")
#: The annotation infon that holds PubTator's optional seventh annotation field (BC5CDR's
#: names of the parts of a composite mention), kept as ``annotation_extras`` metadata.
EXTRA_INFON = "pubtator_extra"
#: Added to a location's error when the XML held carriage returns and the text line breaks.
CR_HINT = ("; the file holds carriage returns, which XML parsers read as line feeds (CR LF and a "
           "lone CR become one LF, XML 1.0 section 2.11), as every BioC library reads them: "
           "offsets must count the text as parsed, one character a line break (a CR that "
           "counts is written &#13;)")
#: Offsets beyond this are refused.
MAX_OFFSET = 100_000_000
#: The most spaces put between two passages (or sentences) whose offsets leave a gap.
MAX_GAP = 1_000_000


def parse_int(value: str | None, what: str, path: Path, line: int) -> int:
    """``value`` (ASCII digits) as a non-negative integer, else a :class:`FormatError` naming
    ``what``."""
    if not re.fullmatch(r"[0-9]+", (value or "").strip()):
        raise FormatError(f"{what} {value!r} is not a non-negative integer", path, line)
    number = int((value or "").strip())
    if number > MAX_OFFSET:
        raise FormatError(f"{what} {number} is outside 0-{MAX_OFFSET}", path, line)
    return number


@dataclass
class Draft:
    """A passage, sentence, annotation or relation as read."""

    kind: str
    line: int
    id: str | None = None
    infons: dict[str, str] = field(default_factory=dict)
    offset: int | None = None
    text: str | None = None
    children: list[Draft] = field(default_factory=list)
    locations: list[tuple[str | None, str | None, int]] = field(default_factory=list)
    nodes: list[tuple[str, str]] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Draft]:
        return [child for child in self.children if child.kind == kind]


@dataclass
class DocumentDraft(Draft):
    """A ``<document>`` as read; :meth:`finish` checks it and makes the document."""

    ignored: int = 0
    #: Read from BioC JSON: messages name JSON keys (``"offset"``) instead of elements.
    from_json: bool = False
    #: The most characters the document's text may reach (a caller's limit), checked before
    #: the gaps between passages are filled; ``None``: :data:`MAX_OFFSET` and :data:`MAX_GAP`.
    max_chars: int | None = None
    #: The XML file held a literal carriage return before the document ended: the parser read
    #: it as a line feed, so offsets that count it miss (see :data:`CR_HINT`).
    saw_cr: bool = False

    def _key(self, element: str, key: str) -> str:
        """How the file names a field: an XML element, or a JSON key."""
        return f'"{key}"' if self.from_json else f"<{element}>"

    def _texts(self, path: Path) -> tuple[str, list[dict[str, Any]]]:
        """The document text, and each passage's offset, length and infons."""
        # floor: the offset the next piece may not start before. An empty piece moves it but
        # adds no spaces, so an empty last passage (a title with an empty abstract) leaves no
        # stray space at the end of the text, as PubTator's title line alone reads.
        text, passages, floor = "", [], 0
        for passage in self.of_kind("passage"):
            if passage.offset is None:
                raise FormatError(f"passage without an {self._key('offset', 'offset')}", path,
                                  passage.line)
            # A passage given as sentences: its own text is missing or empty (<text/>), its
            # sentences' fill it.
            pieces = [passage] if passage.text or not passage.of_kind("sentence") else [
                passage, *passage.of_kind("sentence")]
            for piece in pieces:
                if piece.offset is None:
                    raise FormatError(f"sentence without an {self._key('offset', 'offset')}",
                                      path, piece.line)
                if piece.offset < floor:
                    raise FormatError(f"{piece.kind} at offset {piece.offset} overlaps the text "
                                      f"before it, which ends at {floor}", path, piece.line)
                reach = piece.offset + len(piece.text or "")
                if self.max_chars is not None and reach > self.max_chars:
                    raise LimitError(f"{piece.kind} at offset {piece.offset} makes the text of "
                                     f"document {self.id!r} {reach} characters long, over the "
                                     f"limit of {self.max_chars}; split it", path, piece.line)
                if piece.offset - len(text) > MAX_GAP:
                    raise FormatError(f"{piece.kind} at offset {piece.offset} leaves a gap of "
                                      f"{piece.offset - len(text)} characters after the text "
                                      f"before it (at most {MAX_GAP})", path, piece.line)
                if piece.text:
                    text += " " * (piece.offset - len(text)) + piece.text
                floor = max(len(text), piece.offset)
            passages.append({"offset": passage.offset,
                             "length": max(0, len(text) - passage.offset),
                             "infons": dict(passage.infons)})
        return text, passages

    def _annotations(self) -> list[Draft]:
        out = self.of_kind("annotation")
        for passage in self.of_kind("passage"):
            out.extend(passage.of_kind("annotation"))
            for sentence in passage.of_kind("sentence"):
                out.extend(sentence.of_kind("annotation"))
        return out

    def finish(self, path: Path) -> Document:
        if not self.id:
            raise FormatError(f"document without an {self._key('id', 'id')}", path, self.line)
        text, passages = self._texts(path)
        entities, extras, id_fields = [], [], []
        for ann in self._annotations():
            hint = CR_HINT if self.saw_cr and "\n" in text else ""
            fragments = _fragments(ann, text, path, self._key("location", "locations"), hint)
            if ann.infons.get("CompositeRole") == "IndividualMention":
                self.ignored += 1
                continue
            start, end = fragments[0][0], fragments[-1][1]
            entities.append(_link(ann, text, start, end, path))
            if EXTRA_INFON in ann.infons:
                extras.append((start, end, ann.infons[EXTRA_INFON]))
            kept = kept_id_field(_id_infon(ann) or "-1")
            if kept is not None:
                id_fields.append((start, end, kept))
        metadata: dict[str, Any] = {"bioc_passages": passages}
        if extras:
            metadata["annotation_extras"] = extras
        if id_fields:
            metadata["concept_id_fields"] = id_fields
        first = self.of_kind("passage")[:1]
        if first and first[0].infons.get("type", "").lower() in ("title", "front") \
                and first[0].text and (text == first[0].text
                                       or text.startswith(first[0].text + " ")):
            metadata["title"] = first[0].text
        if self.infons:
            metadata["bioc_infons"] = dict(self.infons)
        relations = [{"id": r.id, "infons": dict(r.infons), "nodes": [list(n) for n in r.nodes]}
                     for r in self.of_kind("relation")]
        if relations:
            metadata["bioc_relations"] = relations
        entities.sort(key=lambda link: (link.start, link.end))
        return Document(self.id, text, tuple(entities), metadata)


def _fragments(ann: Draft, text: str, path: Path, location: str,
               hint: str = "") -> list[tuple[int, int]]:
    """An annotation's locations as sorted ``(start, end)`` ranges inside ``text`` (``hint``
    ends the message of a location beyond the text or not matching it)."""
    if not ann.locations:
        raise FormatError(f"annotation {ann.id!r} has no {location}", path, ann.line)
    fragments = []
    for offset, length, line in ann.locations:
        start = parse_int(offset, "location offset", path, line)
        size = parse_int(length, "location length", path, line)
        if size == 0:
            raise FormatError(f"location at offset {start} has length 0", path, line)
        if start + size > len(text):
            raise FormatError(f"location {start}-{start + size} is beyond the text "
                              f"({len(text)} characters){hint}", path, line)
        fragments.append((start, start + size))
    fragments.sort()
    if ann.text is not None:
        pieces = [text[s:e] for s, e in fragments]
        if ann.text not in (" ".join(pieces), "".join(pieces), text[fragments[0][0]:
                                                                    fragments[-1][1]]):
            raise FormatError(f"annotation text {ann.text!r} differs from the text at its "
                              f"locations: {' '.join(pieces)!r}{hint}", path, ann.line)
    return fragments


def _id_infon(ann: Draft) -> str | None:
    """The annotation's concept-id infon (the first of :data:`ID_INFONS`), if any."""
    infons = {key.lower(): value for key, value in ann.infons.items()}
    return next((infons[key] for key in ID_INFONS if key in infons), None)


def _link(ann: Draft, text: str, start: int, end: int, path: Path) -> Link:
    infons = {key.lower(): value for key, value in ann.infons.items()}
    ids = _id_infon(ann) or ""
    score = None
    if "score" in infons:
        try:
            score = float(infons["score"])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise FormatError(f"score {infons['score']!r} is not a finite number", path,
                              ann.line)
    id_kind = infons.get("id_kind") or None
    if id_kind is not None and id_kind not in ID_KINDS:
        raise FormatError(f"id_kind {id_kind!r} is not one of {ID_KINDS}", path, ann.line)
    concept_ids = parse_concept_ids(ids)
    return Link(start, end, text[start:end], concept_ids, infons.get("type") or None, score,
                id_kind if concept_ids else None,
                alternatives=_alternatives(infons.get("alternatives"), ann, path),
                **{key: infons.get(key) or None for key in FOUND_FIELDS})


def _alternatives(value: str | None, ann: Draft, path: Path
                  ) -> tuple[tuple[str, float, float], ...]:
    if not value:
        return ()
    try:
        items = json.loads(value)
        out = tuple((str(item["concept_id"]), float(item["score"]), float(item["similarity"]))
                    for item in items)
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError):
        out = None
    if out is None or not all(math.isfinite(n) for _, *numbers in out for n in numbers):
        raise FormatError(f"alternatives {value[:80]!r} is not a JSON list of objects with "
                          "concept_id, finite number score and similarity", path, ann.line)
    return out
