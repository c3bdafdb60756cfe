"""BioC XML corpora, the BioCreative exchange format (BC5CDR, NLM-Chem, PubTator exports).

A collection holds documents; a document holds passages (title, abstract, sections), each with
the offset of its text in the document; annotations carry infons (``type``, the concept id) and
one or more locations counted in document offsets::

    <collection><source>PubTator</source><date>20250101</date><key>BioC.key</key>
      <document><id>6794356</id>
        <passage><infon key="type">title</infon><offset>0</offset>
          <text>Lithium toxicity in a newborn.</text>
          <annotation id="0"><infon key="type">Chemical</infon>
            <infon key="identifier">MESH:D008094</infon>
            <location offset="0" length="7"/><text>Lithium</text></annotation>
        </passage>
      </document>
    </collection>

:attr:`Document.text` places every passage text at its offset, with spaces between passages
(PubTator's ``title + " " + abstract`` for PubMed abstracts; an empty passage adds no spaces, so a
title with an empty abstract is the title alone, as in PubTator); a passage given only as sentences
is read from its sentences. The concept id is the first of the infons ``identifier``, ``MESH``,
``CUI``, ``concept_id``, ``db_id``, ``OMIM``, ``ChEBI``, ``NCBI_Gene`` or ``NCBI_Taxonomy`` (any
case; :data:`~xlnel.io.bioc_draft.ID_INFONS`), read by the rule of :mod:`xlnel.io.concept_ids`
(``A|B``, ``-1``, ``MESH:`` prefixes); an annotation with several locations becomes the range from
its first start to its last end, as in BRAT. The parts of a composite mention (infon
``CompositeRole`` = ``IndividualMention``, as in BC5CDR) are not read: the composite mention
carries their ids, as in PubTator. Passage and document infons and relations are kept in
:attr:`Document.metadata` (``bioc_passages``, ``bioc_infons``, ``bioc_relations``) so that a
written file keeps them; entity types, scores and the other fields of a prediction are written as
annotation infons, and PubTator's seventh annotation field (BC5CDR's names of composite parts) as
the infon ``pubtator_extra``, read back as PubTator's ``annotation_extras``.

Reading streams the file with expat, one document at a time; a document type declaration may
name a DTD (never fetched), but entity declarations are refused.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from xml.parsers import expat
from xml.sax.saxutils import escape, quoteattr

from xlnel.errors import FormatError
from xlnel.io._atomic import open_binary, write_corpus
from xlnel.io._checks import check_entities
from xlnel.io.bioc_draft import EXTRA_INFON, DocumentDraft, Draft, parse_int
from xlnel.io.concept_ids import concept_id_field, format_concept_ids, kept_id_fields
from xlnel.types import FOUND_FIELDS, Document, Link

logger = logging.getLogger(__name__)

__all__ = ["bioc_text", "iter_bioc", "read_bioc", "write_bioc"]

#: Elements whose character data is read; the whitespace between other elements is not.
_LEAVES = frozenset({"id", "infon", "offset", "text"})
#: Elements that hold infons, annotations or text of their own.
_CONTAINERS = frozenset({"document", "passage", "sentence", "annotation", "relation"})
_CHUNK = 1 << 20


class _Reader:
    """Expat handlers that turn BioC elements into finished documents."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parser = expat.ParserCreate()
        self.parser.buffer_text = True
        self.parser.StartElementHandler = self._start
        self.parser.EndElementHandler = self._end
        self.parser.CharacterDataHandler = self._chars
        self.parser.EntityDeclHandler = self._refuse_entity
        self.parser.ExternalEntityRefHandler = self._refuse_external
        self.stack: list[str] = []
        self.drafts: list[Draft] = []
        self.document: DocumentDraft | None = None
        self.chars: list[str] | None = None
        self.infon_key = ""
        self.ready: list[Document] = []
        self.ignored = 0
        self.seen: dict[str, int] = {}
        self.head = b""  # the first bytes, to tell JSON given as XML
        self.saw_cr = False  # a literal CR, which expat reads as LF

    @property
    def line(self) -> int:
        return int(self.parser.CurrentLineNumber)

    def _refuse_entity(self, name: str, *args: Any) -> None:
        raise FormatError(f"entity declaration {name!r}: BioC files need none, and xlnel "
                          "does not expand declared entities", self.path, self.line)

    def _refuse_external(self, context: str | None, base: str | None, system_id: str | None,
                         public_id: str | None) -> int:
        raise FormatError(f"external entity {system_id!r}: xlnel does not fetch entities",
                          self.path, self.line)

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        if not self.stack and name != "collection":
            raise FormatError(f"root element <{name}> is not a BioC <collection>", self.path,
                              self.line)
        parent = self.stack[-1] if self.stack else ""
        self.stack.append(name)
        self.chars = [] if name in _LEAVES else None
        if name == "infon":
            self.infon_key = attrs.get("key", "")
        elif name == "document" and parent == "collection":
            self.document = DocumentDraft("document", self.line)
            self.drafts = [self.document]
        elif name in _CONTAINERS and self.document is not None and self.drafts:
            draft = Draft(name, self.line, attrs.get("id"))
            self.drafts[-1].children.append(draft)
            self.drafts.append(draft)
        elif name == "location" and self.drafts and self.drafts[-1].kind == "annotation":
            self.drafts[-1].locations.append((attrs.get("offset"), attrs.get("length"),
                                              self.line))
        elif name == "node" and self.drafts and self.drafts[-1].kind == "relation":
            self.drafts[-1].nodes.append((attrs.get("refid", ""), attrs.get("role", "")))

    def _chars(self, data: str) -> None:
        if self.chars is not None:
            self.chars.append(data)

    def _end(self, name: str) -> None:
        self.stack.pop()
        value = "".join(self.chars) if self.chars is not None else ""
        self.chars = None
        owner = self.drafts[-1] if self.drafts else None
        if owner is None:
            return
        if name == "infon":
            known = owner.infons.get(self.infon_key)
            if known is not None and known != value:
                # the second value would silently replace the first (a concept id, a type)
                raise FormatError(f"infon {self.infon_key!r} given twice in one <{owner.kind}>, "
                                  f"as {known!r} and {value!r}", self.path, self.line)
            owner.infons[self.infon_key] = value
        elif name == "offset":
            owner.offset = parse_int(value, "offset", self.path, self.line)
        elif name == "text":
            owner.text = value
        elif name == "id" and owner is self.document:
            self.document.id = value.strip()
        elif name in _CONTAINERS and owner.kind == name:
            self.drafts.pop()
            if owner is self.document:
                self.document.saw_cr = self.saw_cr
                doc = self.document.finish(self.path)
                if doc.id in self.seen:
                    raise FormatError(f"document id {doc.id!r} already used on line "
                                      f"{self.seen[doc.id]}", self.path, self.document.line)
                self.seen[doc.id] = self.document.line
                self.ready.append(doc)
                self.ignored += self.document.ignored
                self.document, self.drafts = None, []

    def feed(self, data: bytes, final: bool) -> Iterator[Document]:
        """Parse ``data``; yield the documents it finished, then raise the error it met."""
        error: FormatError | None = None
        if len(self.head) < 64:
            self.head += data[:64]
        self.saw_cr = self.saw_cr or b"\r" in data
        try:
            self.parser.Parse(data, final)
        except FormatError as exc:
            error = exc
        except expat.ExpatError as exc:
            message = expat.ErrorString(exc.code) if exc.code else str(exc)
            start = self.head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
            hint = ("; it looks like JSON: xlnel reads BioC as XML" if start in (b"{", b"[")
                    else "; the file is empty or blank, with no BioC <collection>"
                    if not start and final else "")
            error = FormatError(f"not well-formed XML ({message}, column {exc.offset}){hint}",
                                self.path, exc.lineno)
        except RecursionError:
            error = FormatError("elements nested too deeply", self.path, self.line)
        except (LookupError, ValueError) as exc:  # an encoding Python or expat cannot read
            error = FormatError(f"cannot read the XML declaration's encoding ({exc})",
                                self.path, self.line)
        ready, self.ready = self.ready, []
        yield from ready
        if error is not None:
            raise error


def iter_bioc(path: str | Path) -> Iterator[Document]:
    """Stream the documents of a BioC XML file (optionally ``.gz``), one at a time.

    Args:
        path: BioC XML file, or ``-`` for the standard input.

    Yields:
        Documents with the passages' texts at their offsets and entities sorted by offsets.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: Naming the file and line, for XML that is not well formed, a root that is
            not ``<collection>``, a document without an id or with one used before, a passage
            without an offset or overlapping the one before, an annotation without a location,
            with offsets that are not integers, empty or outside the text, or whose text
            differs from the document's.
    """
    path = Path(path)
    reader = _Reader(path)
    with open_binary(path) as handle:
        try:
            while chunk := handle.read(_CHUNK):
                yield from reader.feed(chunk, final=False)
        except (gzip.BadGzipFile, EOFError) as exc:
            raise FormatError(f"not a valid gzip file ({exc})", path) from exc
        yield from reader.feed(b"", final=True)
    if reader.ignored:
        logger.info("%s: %d parts of composite mentions kept as metadata, not as mentions",
                    path, reader.ignored)


def read_bioc(path: str | Path) -> list[Document]:
    """Read all documents of a BioC XML file; see :func:`iter_bioc`."""
    docs = list(iter_bioc(path))
    logger.info("read %d documents from %s", len(docs), path)
    return docs


# -- writing ------------------------------------------------------------------------------------

# Characters XML 1.0 cannot hold, even as references.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# A carriage return is written as a reference: a parser turns a literal "\r\n" into "\n".
_TEXT_ENTITIES = {"\r": "&#13;"}


def _xml_text(value: str) -> str:
    return escape(_NOT_XML.sub(" ", value), _TEXT_ENTITIES)


def _attr(value: object) -> str:
    """``value`` as a quoted XML attribute value."""
    return quoteattr(_NOT_XML.sub(" ", str(value)))


def _infons(infons: dict[str, Any], indent: str) -> Iterator[str]:
    for key, value in infons.items():
        if value is not None:
            yield f"{indent}<infon key={_attr(key)}>{_xml_text(str(value))}</infon>\n"


def _passages(doc: Document) -> list[tuple[int, int, dict[str, Any]]]:
    """The ``(offset, end, infons)`` of the passages to write: those the document was read with
    when they still tile its text (spaces between them; empty ones may follow its end), none
    when it was read without any and has no text; else a PubTator title and abstract (an empty
    abstract one past the title's end and its space, as PubTator places it); else one passage
    of the whole text."""
    text, title = doc.text, doc.metadata.get("title")
    whole: list[tuple[int, int, dict[str, Any]]] = [(0, len(text), {})]
    if isinstance(title, str) and title and (text == title or text.startswith(title + " ")):
        whole = [(0, len(title), {"type": "title"}),
                 (len(title) + 1, max(len(title) + 1, len(text)), {"type": "abstract"})]
    raw = doc.metadata.get("bioc_passages")
    if raw == [] and not text:
        return []  # read without passages
    if not isinstance(raw, list) or not raw:
        return whole
    out, end, covered = [], 0, 0
    for item in raw:
        if not isinstance(item, dict):
            return whole
        offset, length, infons = item.get("offset"), item.get("length"), item.get("infons", {})
        if not isinstance(offset, int) or not isinstance(length, int) or length < 0 \
                or offset < end or text[end:offset].strip(" ") or not isinstance(infons, dict) \
                or (length and offset + length > len(text)):
            return whole
        end = offset + length
        covered = max(covered, end if length else 0)
        out.append((offset, end, infons))
    return out if covered == len(text) else whole


def link_infons(link: Link, extra: str | None = None,
                identifier: str | None = None) -> dict[str, Any]:
    """The infons of an annotation: type, concept ids (``identifier``, by default the link's
    concept ids as PubTator writes them), the fields of a prediction, and PubTator's seventh
    annotation field (``extra``) as ``pubtator_extra``."""
    if identifier is None:
        identifier = format_concept_ids(link.concept_ids)
    infons: dict[str, Any] = {"type": link.type, "identifier": identifier}
    if extra is not None:
        infons[EXTRA_INFON] = extra
    if link.score is not None:
        infons["score"] = repr(float(link.score))
    if link.id_kind is not None and link.concept_ids:
        infons["id_kind"] = link.id_kind
    for key in FOUND_FIELDS:
        infons[key] = getattr(link, key)
    if link.alternatives:
        infons["alternatives"] = json.dumps(
            [{"concept_id": c, "score": s, "similarity": m} for c, s, m in link.alternatives])
    return infons


def _annotation(ann_id: str, link: Link, extra: str | None, identifier: str) -> str:
    return (f"      <annotation id={_attr(ann_id)}>\n"
            f"{''.join(_infons(link_infons(link, extra, identifier), '        '))}"
            f'        <location offset="{link.start}" length="{link.end - link.start}"/>\n'
            f"        <text>{_xml_text(link.text)}</text>\n      </annotation>\n")


def relations(doc: Document) -> Iterator[tuple[str, dict[str, Any], list[tuple[str, str]]]]:
    """The ``(id, infons, nodes)`` of a document's relations: those read from BioC, kept as they
    were, then PubTator's relation tuples (infons ``relation``, ``arg1``, ``arg2`` ...)."""
    for n, relation in enumerate(doc.metadata.get("bioc_relations") or ()):
        if not isinstance(relation, dict):
            continue
        infons = relation.get("infons")
        nodes = [(str(node[0]), str(node[1])) for node in relation.get("nodes") or ()
                 if isinstance(node, list | tuple) and len(node) == 2]
        yield (str(relation.get("id") or n), infons if isinstance(infons, dict) else {}, nodes)
    for n, fields in enumerate(doc.metadata.get("relations") or ()):
        if isinstance(fields, list | tuple) and fields:
            yield (f"R{n}", {"relation": fields[0],
                             **{f"arg{i}": value for i, value in enumerate(fields[1:], 1)}}, [])


def _relations_xml(doc: Document) -> Iterator[str]:
    for relation_id, infons, nodes in relations(doc):
        yield (f"    <relation id={_attr(relation_id)}>\n{''.join(_infons(infons, '      '))}"
               + "".join(f"      <node refid={_attr(refid)} role={_attr(role)}/>\n"
                         for refid, role in nodes)
               + "    </relation>\n")


def extras(doc: Document) -> dict[tuple[int, int], str]:
    """PubTator's seventh annotation fields of a document, by ``(start, end)``."""
    return {(item[0], item[1]): str(item[2]) for item in doc.metadata.get("annotation_extras")
            or () if isinstance(item, list | tuple) and len(item) == 3}


def layout(doc: Document) -> list[tuple[int, int, dict[str, Any], list[Link]]]:
    """The ``(offset, end, infons, links)`` of each passage to write (see :func:`_passages`),
    each entity in the passage where it starts, sorted by offsets.

    Raises:
        ValueError: When the document's id cannot be written (empty, surrounded by spaces, with
            control characters) or an entity does not match the text.
    """
    if not doc.id or doc.id != doc.id.strip() or _NOT_XML.search(doc.id):
        raise ValueError(f"document id {doc.id!r} cannot be written to BioC: it must be "
                         "non-empty, without surrounding spaces or control characters")
    check_entities(doc)
    passages: list[tuple[int, int, dict[str, Any], list[Link]]] = [
        (offset, end, infons, []) for offset, end, infons in _passages(doc)]
    for link in sorted(doc.entities, key=lambda link: (link.start, link.end)):
        index = max(i for i, (offset, _, _, _) in enumerate(passages)
                    if offset <= link.start or i == 0)
        passages[index][3].append(link)
    return passages


def _document_xml(doc: Document) -> Iterator[str]:
    passages = layout(doc)
    if _NOT_XML.search(doc.text):
        logger.warning("document %r: characters that XML cannot hold are written as spaces",
                       doc.id)
    infons, extra, kept = doc.metadata.get("bioc_infons"), extras(doc), kept_id_fields(doc)
    yield f"  <document>\n    <id>{_xml_text(doc.id)}</id>\n"
    yield from _infons(infons if isinstance(infons, dict) else {}, "    ")
    n = 0
    for offset, end, passage_infons, links in passages:
        yield "    <passage>\n"
        yield from _infons(passage_infons, "      ")
        yield f"      <offset>{offset}</offset>\n      <text>{_xml_text(doc.text[offset:end])}"
        yield "</text>\n"
        for link in links:
            yield _annotation(str(n), link, extra.get((link.start, link.end)),
                              concept_id_field(doc.id, link, kept))
            n += 1
        yield "    </passage>\n"
    yield from _relations_xml(doc)
    yield "  </document>\n"


def write_bioc(path: str | Path, docs: Iterable[Document]) -> None:
    """Write documents as a BioC XML collection (gzip-compressed when ``path`` ends with ``.gz``).

    Each document keeps the passages it was read with (else its whole text is one passage at
    offset 0); each entity is an annotation in the passage where it starts, its concept ids in
    the infon ``identifier`` (``-1`` for none), its type, score and the other fields of a
    prediction as infons (``alternatives`` as JSON). Control characters XML cannot hold are
    written as spaces, which keeps every offset.

    Args:
        path: File to create or replace atomically.
        docs: Documents to write.

    Raises:
        ValueError: When a document's id cannot be written (empty, surrounded by spaces, with
            control characters), a document holds a lone surrogate (no UTF-8 file can hold
            one) or an entity does not match the text.
    """
    count = write_corpus(path, docs, bioc_text)
    logger.info("wrote %d documents to %s", count, path)


def bioc_text(docs: Iterable[Document]) -> Iterator[str]:
    """The text of a BioC XML collection of ``docs``, piece by piece (see :func:`write_bioc`).

    Documents are read one at a time, as the pieces are taken, so the text can be streamed.

    Raises:
        ValueError: As :func:`write_bioc`.
    """
    yield ("<?xml version='1.0' encoding='UTF-8'?>\n"
           "<!DOCTYPE collection SYSTEM \"BioC.dtd\">\n"
           f"<collection>\n  <source>xlnel</source>\n"
           f"  <date>{time.strftime('%Y%m%d')}</date>\n  <key>BioC.key</key>\n")
    for doc in docs:
        yield from _document_xml(doc)
    yield "</collection>\n"
