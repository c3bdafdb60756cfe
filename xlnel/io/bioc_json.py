"""BioC JSON corpora: PubTator3's ``biocjson`` export and the ``bioc`` package's JSON.

The same collections, documents, passages, annotations and relations as BioC XML
(:mod:`xlnel.io.bioc`), as JSON objects::

    {"source": "PubTator", "date": "20250101", "key": "BioC.key", "infons": {}, "documents": [
     {"id": "6794356", "infons": {}, "relations": [], "passages": [
      {"offset": 0, "infons": {"type": "title"}, "text": "Lithium toxicity in a newborn.",
       "sentences": [], "relations": [], "annotations": [
        {"id": "0", "infons": {"type": "Chemical", "identifier": "MESH:D008094"},
         "text": "Lithium", "locations": [{"offset": 0, "length": 7}]}]}]}]}

A file may hold such a collection, PubTator3's ``{"PubTator3": [document, ...]}``, a list of
documents, one document, or one document (or collection) a line. Documents are read as BioC XML
documents are: passage texts at their offsets, the concept id from the infons ``identifier``,
``MESH``, ``CUI`` ... (:data:`~xlnel.io.bioc_draft.ID_INFONS`), composite parts left to the
composite mention, infons and relations kept in :attr:`~xlnel.types.Document.metadata`, and the
document's other fields (PubTator3's ``pmid``, ``journal``, ``authors`` ...) as
``bioc_fields``, so that a written file keeps them. Infon values that are not strings
(PubTator3's ``"valid": true``) are kept as JSON text.

The file is streamed: each document is decoded on its own once its lines are read, so memory is
bounded by the largest document, whatever the layout (a pretty-printed collection, one document
a line, PubTator3's one-line answers). Errors name the line where the document starts.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from xlnel.errors import FormatError, LimitError
from xlnel.io._atomic import iter_lines, write_corpus
from xlnel.io._json import NotJsonError, strict_decoder
from xlnel.io.bioc import extras, layout, link_infons, relations
from xlnel.io.bioc_draft import ID_INFONS, DocumentDraft, Draft, parse_int
from xlnel.io.concept_ids import concept_id_field, kept_id_fields
from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["BIOC_JSON_KEYS", "InvalidJSONError", "bioc_json_text", "iter_bioc_json",
           "looks_like_bioc_json", "parse_bioc_json", "read_bioc_json", "write_bioc_json"]

#: Keys of an object that hold a list of documents: a BioC collection's, PubTator3's.
_DOCUMENT_LISTS = ("documents", "PubTator3")
#: A document's fields that become drafts or infons; the others are kept as ``bioc_fields``.
_DOCUMENT_KEYS = frozenset({"id", "infons", "passages", "relations"})
_SPACE = re.compile(r"[ \t\r\n]*")
#: About how many characters of the file are held at a time (more when a document is longer).
_WINDOW = 1 << 20
#: Keys that only BioC JSON has, not xlnel's JSONL: a document's passages, a document list.
BIOC_JSON_KEYS = ("passages", *_DOCUMENT_LISTS)
# One of them as a key, outside a JSON string (where its quotes would be escaped).
_BIOC_KEY = re.compile(rb'(?<!\\)"(?:' + b"|".join(k.encode() for k in BIOC_JSON_KEYS)
                       + rb')"\s*:')


class InvalidJSONError(FormatError):
    """The text is not valid JSON (as opposed to valid JSON that is not BioC)."""


class _Scanner:
    """Walks the outer JSON structure by hand, so that each document is decoded on its own and
    its line is known; :func:`json.JSONDecoder.raw_decode` decodes the values.

    The text is held a window at a time, read in whole lines: a JSON token never spans a line
    end, so a value the window cuts fails to decode only at the window's end, and is decoded
    again once more lines are read. Memory is bounded by the largest document (or line).
    """

    def __init__(self, lines: Iterator[tuple[int, str]], path: Path) -> None:
        self.path, self._lines = path, lines
        self.text, self.pos, self.eof = "", 0, False
        self._decoder = strict_decoder()
        self._base = 1  # the line of text[0]
        self._counted, self._line = 0, 1  # line() counted up to text[_counted]

    def _fill(self, size: int | None = None) -> bool:
        """Read about ``size`` (default: a window) more characters of lines; False at the end
        of the file."""
        if self.eof:
            return False
        size = _WINDOW if size is None else size
        cut = self.text.rfind("\n", 0, self.pos) + 1
        if cut > _WINDOW // 2:  # drop the lines walked over (whole: columns stay right)
            self._base += self.text.count("\n", 0, cut)
            self.text, self.pos = self.text[cut:], self.pos - cut
            self._counted, self._line = 0, self._base
        read, more = 0, []
        for _, line in self._lines:
            more.append(line)
            read += len(line) + 1
            if read >= size:
                break
        else:
            self.eof = True
        self.text += "".join(line + "\n" for line in more)
        return bool(more)

    def line(self) -> int:
        """The 1-based line of the current position."""
        self._line += self.text.count("\n", self._counted, self.pos)
        self._counted = self.pos
        return self._line

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or not self._fill():
                return self.text[self.pos:self.pos + 1]

    def fail(self, message: str) -> InvalidJSONError:
        """A JSON syntax error at the current position."""
        return InvalidJSONError(message, self.path, self.line())

    def value(self) -> Any:
        self.peek()
        size = _WINDOW
        while True:
            try:
                value, self.pos = self._decoder.raw_decode(self.text, self.pos)
                return value
            except json.JSONDecodeError as exc:
                end = len(self.text.rstrip(" \t\r\n"))
                # an error at the end of the text is on the last line that holds any (counted
                # before _fill moves the text)
                line = self._base + self.text.count("\n", 0, min(exc.pos, end))
                size *= 2  # a long value is decoded again a few times, not once a window
                if exc.pos < end or not self._fill(size):
                    raise InvalidJSONError(f"not valid JSON ({exc.msg}, column {exc.colno})",
                                           self.path, line) from None
            except RecursionError:
                raise self.fail("JSON nested too deeply") from None
            except NotJsonError as exc:
                raise FormatError(str(exc), self.path, self.line()) from None

    def after_item(self, close: str) -> bool:
        """Step over a ``,`` (True: an item follows) or ``close`` (False)."""
        char = self.peek()
        if char not in (",", close):
            raise self.fail(f"expected ',' or {close!r}, found {char or 'the end of the file'!r}")
        self.pos += 1
        return char == ","

    def items(self) -> Iterator[tuple[Any, int]]:
        """The values of the list that starts here, each with its line."""
        self.pos += 1
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            self.peek()
            line = self.line()
            yield self.value(), line
            if not self.after_item("]"):
                return

    def objects(self) -> Iterator[tuple[Any, int]]:
        """The documents of the object that starts here: those of its document list, or the
        object itself when it is a document."""
        line = self.line()
        self.pos += 1
        fields: dict[str, Any] = {}
        more = self.peek() != "}"
        if not more:
            self.pos += 1
        while more:
            key = self.value()
            if not isinstance(key, str):
                raise self.fail(f"expected a key, found {key!r}")
            if self.peek() != ":":
                raise self.fail(f"expected ':' after the key {key!r}")
            self.pos += 1
            if key in _DOCUMENT_LISTS and self.peek() == "[":
                yield from self.items()
                fields[key] = []
            else:
                fields[key] = self.value()
            more = self.after_item("}")
        yield from _unwrap(fields, line, self.path)


def _unwrap(fields: dict[str, Any], line: int, path: Path) -> Iterator[tuple[Any, int]]:
    if "passages" in fields:
        yield fields, line
        return
    lists = [key for key in _DOCUMENT_LISTS if key in fields]
    if not lists:
        hint = (": it looks like an xlnel JSONL document (id, text, entities); read it as "
                "jsonl (--from jsonl, or the extension .jsonl)" if "text" in fields else "")
        raise FormatError("a JSON object with neither \"documents\" (a BioC collection), "
                          f"\"PubTator3\" nor \"passages\" (a document){hint}", path, line)
    for key in lists:
        if not isinstance(fields[key], list):
            raise FormatError(f"\"{key}\" must be a list of documents, not "
                              f"{_kind(fields[key])}", path, line)
        yield from ((item, line) for item in fields[key])


def _top_level(scanner: _Scanner) -> Iterator[tuple[Any, int]]:
    char = scanner.peek()
    if not char:
        raise FormatError("empty file: no BioC JSON collection or document", scanner.path)
    while char:  # several values: one document (or collection) a line
        if char == "[":
            yield from scanner.items()
        elif char == "{":
            yield from scanner.objects()
        else:
            found = scanner.text[scanner.pos:].split("\n", 1)[0][:20]
            try:  # a JSON value of another kind, or no JSON at all
                json.JSONDecoder().raw_decode(scanner.text, scanner.pos)
                error: type[FormatError] = FormatError
            except json.JSONDecodeError:
                error = InvalidJSONError
            raise error(f"expected a BioC JSON collection, document or list of documents, "
                        f"found {found!r}", scanner.path, scanner.line())
        char = scanner.peek()


def iter_bioc_json(path: str | Path) -> Iterator[Document]:
    """Read the documents of a BioC JSON file (optionally ``.gz``; ``-``: the standard input).

    Yields:
        Documents with the passages' texts at their offsets and entities sorted by offsets.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: Naming the file and line, for JSON that is not valid or is not BioC, a
            document without an id or with one used before, a field of the wrong kind, and
            the faults :func:`~xlnel.io.bioc.iter_bioc` names for BioC XML (passages without
            offsets or overlapping, annotations without locations or outside the text ...).
    """
    path = Path(path)
    yield from _read(iter_lines(path), path)


def parse_bioc_json(text: str, name: str = "<request>", max_documents: int | None = None,
                    max_chars: int | None = None) -> list[Document]:
    """The documents of a BioC JSON text (any shape :func:`iter_bioc_json` reads).

    Args:
        text: The JSON text.
        name: What the text is, for error messages (in place of a file name).
        max_documents: The most documents the text may hold.
        max_chars: The most characters a document's text may have; checked while its
            passages are read, before the gaps between their offsets are filled with spaces.

    Raises:
        FormatError: As :func:`iter_bioc_json` does, naming ``name`` and the line.
        LimitError: When a limit is passed (a :class:`FormatError` too).
    """
    lines = enumerate(text.removeprefix("\ufeff").split("\n"), 1)
    docs: list[Document] = []
    for doc in _read(lines, Path(name), max_chars):
        if max_documents is not None and len(docs) == max_documents:
            raise LimitError(f"more than {max_documents} documents, the limit; split them "
                             "into smaller requests", name)
        docs.append(doc)
    return docs


def _read(lines: Iterator[tuple[int, str]], path: Path,
          max_chars: int | None = None) -> Iterator[Document]:
    seen: dict[str, int] = {}
    ignored = 0
    for item, line in _top_level(_Scanner(lines, path)):
        draft = _document(item, line, path)
        draft.max_chars = max_chars
        doc = draft.finish(path)
        if doc.id in seen:
            raise FormatError(f"document id {doc.id!r} already used on line {seen[doc.id]}",
                              path, line)
        seen[doc.id] = line
        ignored += draft.ignored
        extra = {key: value for key, value in item.items() if key not in _DOCUMENT_KEYS}
        yield Document(doc.id, doc.text, doc.entities,
                       {**doc.metadata, "bioc_fields": extra} if extra else doc.metadata)
    if ignored:
        logger.info("%s: %d parts of composite mentions kept as metadata, not as mentions",
                    path, ignored)


def read_bioc_json(path: str | Path) -> list[Document]:
    """Read all documents of a BioC JSON file; see :func:`iter_bioc_json`."""
    docs = list(iter_bioc_json(path))
    logger.info("read %d documents from %s", len(docs), path)
    return docs


def looks_like_bioc_json(head: bytes) -> bool:
    """Whether the first bytes of a ``.json`` file are BioC JSON rather than JSON Lines: a list,
    or a key only BioC has (``passages``, ``documents``, ``PubTator3``)."""
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[") or _BIOC_KEY.search(head) is not None


# -- JSON objects to drafts -----------------------------------------------------------------------

def _kind(value: Any) -> str:
    """The JSON name of a value's kind."""
    names = {bool: "a boolean", str: "a string", int: "a number", float: "a number",
             list: "a list", dict: "an object"}
    return names.get(type(value), "null")


def _fields(value: Any, what: str, path: Path, line: int) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FormatError(f"{what} must be a JSON object, not {_kind(value)}", path, line)
    return value


def _list(value: Any, what: str, path: Path, line: int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FormatError(f"{what} must be a list, not {_kind(value)}", path, line)
    return value


def _infons(value: Any, what: str, path: Path, line: int) -> dict[str, str]:
    infons = _fields(value, f"the infons of {what}", path, line)
    return {str(key): _infon(str(key), item) for key, item in infons.items() if item is not None}


def _infon(key: str, item: Any) -> str:
    """An infon value as text: a concept-id infon's list of ids as an id field (``A|B``, as a
    JSONL ``concept_id`` list reads), any other value that is no string as JSON text."""
    if isinstance(item, str):
        return item
    if key.lower() in ID_INFONS and isinstance(item, list) \
            and all(isinstance(one, str | int) and not isinstance(one, bool) for one in item):
        return "|".join(map(str, item)) or "-1"
    return json.dumps(item, ensure_ascii=False)


def _number(value: Any) -> str | None:
    """A JSON offset or length as the text :func:`~xlnel.io.bioc_draft.parse_int` checks."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)  # true, 1.5 and -2 are then refused by name


def _text(value: Any, what: str, path: Path, line: int) -> str | None:
    if value is not None and not isinstance(value, str):
        raise FormatError(f"the text of {what} must be a string, not {_kind(value)}", path,
                          line)
    return value


def _draft(kind: str, item: Any, path: Path, line: int) -> Draft:
    """A passage, sentence, annotation or relation object as a draft (its children too)."""
    obj = _fields(item, f"a {kind}", path, line)
    what = f"{kind} {obj.get('id')!r}" if obj.get("id") is not None else f"a {kind}"
    draft = Draft(kind, line, None if obj.get("id") is None else str(obj["id"]),
                  _infons(obj.get("infons"), what, path, line))
    if "offset" in obj:
        draft.offset = _offset(obj["offset"], what, path, line)
    draft.text = _text(obj.get("text"), what, path, line)
    for location in _list(obj.get("locations"), f"the locations of {what}", path, line):
        loc = _fields(location, f"a location of {what}", path, line)
        draft.locations.append((_number(loc.get("offset")), _number(loc.get("length")), line))
    for node in _list(obj.get("nodes"), f"the nodes of {what}", path, line):
        fields = _fields(node, f"a node of {what}", path, line)
        draft.nodes.append((str(fields.get("refid", "")), str(fields.get("role", ""))))
    for child_kind, key in (("sentence", "sentences"), ("annotation", "annotations"),
                            ("relation", "relations")):
        for child in _list(obj.get(key), f"the {key} of {what}", path, line):
            draft.children.append(_draft(child_kind, child, path, line))
    if kind == "passage" and not draft.text and draft.of_kind("sentence"):
        draft.text = None  # a passage given as its sentences
    return draft


def _offset(value: Any, what: str, path: Path, line: int) -> int:
    return parse_int(_number(value), f"the offset of {what}", path, line)


def _document(item: Any, line: int, path: Path) -> DocumentDraft:
    obj = _fields(item, "a document", path, line)
    raw_id = obj.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int | type(None)):
        raise FormatError(f"document id {raw_id!r} must be a string, not {_kind(raw_id)}",
                          path, line)
    draft = DocumentDraft("document", line, from_json=True)
    draft.id = "" if raw_id is None else str(raw_id).strip()
    draft.infons = _infons(obj.get("infons"), f"document {draft.id!r}", path, line)
    for key, kind in (("passages", "passage"), ("relations", "relation")):
        for child in _list(obj.get(key), f"the {key} of document {draft.id!r}", path, line):
            draft.children.append(_draft(kind, child, path, line))
    return draft


# -- writing --------------------------------------------------------------------------------------

def _document_json(doc: Document) -> dict[str, Any]:
    passages, n, extra, kept = [], 0, extras(doc), kept_id_fields(doc)
    for offset, end, infons, links in layout(doc):
        annotations = []
        for link in links:
            annotations.append({
                "id": str(n),
                "infons": {key: str(value) for key, value in link_infons(
                    link, extra.get((link.start, link.end)),
                    concept_id_field(doc.id, link, kept)).items() if value is not None},
                "text": link.text,
                "locations": [{"offset": link.start, "length": link.end - link.start}]})
            n += 1
        passages.append({"offset": offset, "infons": infons, "text": doc.text[offset:end],
                         "sentences": [], "annotations": annotations, "relations": []})
    document_infons = doc.metadata.get("bioc_infons")
    out: dict[str, Any] = {
        "id": doc.id, "infons": document_infons if isinstance(document_infons, dict) else {},
        "passages": passages,
        "relations": [{"id": relation_id, "infons": relation_infons,
                       "nodes": [{"refid": refid, "role": role} for refid, role in nodes]}
                      for relation_id, relation_infons, nodes in relations(doc)]}
    fields = doc.metadata.get("bioc_fields")
    if isinstance(fields, dict):
        out.update((key, value) for key, value in fields.items() if key not in _DOCUMENT_KEYS)
    return out


def write_bioc_json(path: str | Path, docs: Iterable[Document]) -> None:
    """Write documents as a BioC JSON collection, one document a line (gzip-compressed when
    ``path`` ends with ``.gz``).

    Passages, annotations and relations are those :func:`~xlnel.io.bioc.write_bioc` writes;
    the document fields read from BioC JSON (``bioc_fields``) are written back.

    Args:
        path: File to create or replace atomically.
        docs: Documents to write.

    Raises:
        ValueError: When a document's id cannot be written (empty, surrounded by spaces, with
            control characters) or an entity does not match the text.
    """
    count = write_corpus(path, docs, bioc_json_text)
    logger.info("wrote %d documents to %s", count, path)


def bioc_json_text(docs: Iterable[Document]) -> Iterator[str]:
    """The text of a BioC JSON collection of ``docs``, a document a line (see
    :func:`write_bioc_json`).

    Documents are read one at a time, as the pieces are taken, so the text can be streamed.

    Raises:
        ValueError: As :func:`write_bioc_json`.
    """
    head = {"source": "xlnel", "date": time.strftime("%Y%m%d"), "key": "BioC.key", "infons": {}}
    yield json.dumps(head)[:-1] + ', "documents": ['  # the documents follow, a line each
    separator = "\n"
    for doc in docs:
        obj = _document_json(doc)
        try:
            # allow_nan=False: NaN and Infinity are not JSON, and other tools refuse them
            line = json.dumps(obj, ensure_ascii=False, allow_nan=False)
        except ValueError as exc:
            raise ValueError(f"document {doc.id!r}: {exc} (in its metadata)") from exc
        yield separator + line
        separator = ",\n"
    yield "\n]}\n"
