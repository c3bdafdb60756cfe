"""PubTator corpora (BC5CDR, MedMentions, NCBI disease).

A document is a title line, an abstract line and tab-separated annotation lines; documents are
separated by blank lines::

    6794356|t|Tricuspid valve regurgitation and lithium carbonate toxicity in a newborn infant.
    6794356|a|A newborn with massive tricuspid regurgitation, ...
    6794356<TAB>0<TAB>29<TAB>Tricuspid valve regurgitation<TAB>Disease<TAB>D014262
    6794356<TAB>CID<TAB>D016651<TAB>D003490

Offsets count into ``title + " " + abstract`` (the title alone when the abstract is empty), which
becomes :attr:`Document.text`. The id column is read by the rule of :mod:`xlnel.io.concept_ids`
(``-1`` for no concept, ``A|B`` for composite mentions, ``UMLS:`` and ``MESH:`` prefixes
removed). Relation lines (four fields), the optional seventh annotation field and id columns
that the concept ids alone would not give back (``D002544|-1``) are kept in
:attr:`Document.metadata` (``relations``, ``annotation_extras``, ``concept_id_fields``) so that
a written file keeps them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlnel.errors import FormatError
from xlnel.io._atomic import ONE_LINE as _ONE_LINE
from xlnel.io._atomic import iter_lines, write_corpus
from xlnel.io._checks import check_entities
from xlnel.io.concept_ids import (
    concept_id_field,
    kept_id_field,
    kept_id_fields,
    parse_concept_ids,
)
from xlnel.types import Document, Link

logger = logging.getLogger(__name__)

__all__ = [
    "OFFSET",
    "iter_pubtator",
    "pubtator_text",
    "read_pubtator",
    "write_pubtator",
]

_TEXT_LINE = re.compile(r"^([^\t|]+)\|([ta])\|(.*)$", re.DOTALL)
#: An offset as corpus files write it: ASCII digits alone (``int()`` would also take ``+0``,
#: ``0_8`` or other scripts' digits such as ``٨``), at most 18 of them (no text is longer, and
#: ``int()`` refuses strings of thousands of digits).
OFFSET = re.compile(r"[0-9]{1,18}")


@dataclass
class _Draft:
    """A document being read: title and abstract seen so far, annotations, relations."""

    pmid: str
    title: str
    start_line: int
    abstract: str | None = None
    entities: list[Link] = field(default_factory=list)
    extras: list[tuple[int, int, str]] = field(default_factory=list)
    id_fields: list[tuple[int, int, str]] = field(default_factory=list)
    relations: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def text(self) -> str:
        # No space before an empty abstract: a text written on the title line alone (a
        # document of another format) reads back as it was.
        return f"{self.title} {self.abstract}" if self.abstract else self.title

    def finish(self, path: Path) -> Document:
        if self.abstract is None:
            # A file whose lines end with CR alone is one long title line.
            hint = ("; its line holds carriage returns: lines must end with LF or CR LF, not CR "
                    "alone" if "\r" in self.title else "")
            raise FormatError(
                f"document {self.pmid!r} has a |t| line but no |a| line{hint}", path,
                self.start_line
            )
        metadata: dict[str, Any] = {"title": self.title}
        if self.relations:
            metadata["relations"] = self.relations
        if self.extras:
            metadata["annotation_extras"] = self.extras
        if self.id_fields:
            metadata["concept_id_fields"] = self.id_fields
        entities = sorted(self.entities, key=lambda link: (link.start, link.end))
        return Document(self.pmid, self.text, tuple(entities), metadata)


def _parse_offset(value: str, what: str, path: Path, lineno: int) -> int:
    """An offset written as ASCII digits alone, else a :class:`FormatError` naming ``what``.

    ``int()`` alone would also take ``+0``, `` 0``, ``0_8`` and other scripts' digits (``٨``),
    which no corpus tool writes.
    """
    if OFFSET.fullmatch(value) is None:
        raise FormatError(f"{what} offset {value!r} is not an integer (ASCII digits only)",
                          path, lineno)
    return int(value)


def _parse_annotation(fields: list[str], draft: _Draft, path: Path, lineno: int) -> None:
    start = _parse_offset(fields[1], "start", path, lineno)
    end = _parse_offset(fields[2], "end", path, lineno)
    text = draft.text
    if start < 0 or start >= end:
        raise FormatError(f"offsets {start}-{end} are not a non-empty range", path, lineno)
    if end > len(text):
        raise FormatError(
            f"end offset {end} is beyond the text of document {draft.pmid!r} "
            f"(title + abstract: {len(text)} characters)",
            path,
            lineno,
        )
    tabs = text[start:end].count("\t")
    if tabs and "\t".join(fields[3:4 + tabs]) == text[start:end]:
        # The text holds tabs, so the mention column does too: the offsets tell how many of
        # the split fields it spans.
        fields = [*fields[:3], "\t".join(fields[3:4 + tabs]), *fields[4 + tabs:]]
        if len(fields) < 5:
            raise FormatError(f"annotation line has no type column after the mention "
                              f"{fields[3]!r}", path, lineno)
    mention = fields[3]
    if text[start:end] != mention:
        raise FormatError(
            f"mention {mention!r} differs from the text at {start}-{end}: {text[start:end]!r}",
            path,
            lineno,
        )
    concept_ids = parse_concept_ids(fields[5]) if len(fields) > 5 else ()
    kept = kept_id_field(fields[5]) if len(fields) > 5 else None
    if kept is not None:
        draft.id_fields.append((start, end, kept))
    link = Link(start, end, mention, concept_ids, fields[4] or None)
    draft.entities.append(link)
    if len(fields) > 6:
        draft.extras.append((start, end, "\t".join(fields[6:])))


def _add_text_line(
    match: re.Match[str], draft: _Draft | None, path: Path, lineno: int
) -> tuple[_Draft | None, Document | None]:
    """Handle a ``|t|`` or ``|a|`` line; returns the current draft and a finished document."""
    pmid, kind, value = match.groups()
    if kind == "t":
        done = draft.finish(path) if draft is not None else None
        return _Draft(pmid, value, lineno), done
    if draft is None or draft.abstract is not None:
        raise FormatError(f"|a| line for {pmid!r} without a |t| line before it", path, lineno)
    if pmid != draft.pmid:
        raise FormatError(
            f"|a| line for {pmid!r} follows the |t| line of {draft.pmid!r}", path, lineno
        )
    draft.abstract = value
    return draft, None


def _add_tab_line(fields: list[str], draft: _Draft | None, path: Path, lineno: int,
                  last: str | None = None) -> None:
    """Handle an annotation or relation line (``last``: the id of the last document ended)."""
    if draft is None or draft.abstract is None:
        where = "before any document" if draft is None and last is None \
            else (f"after the blank line that ends document {last!r} (blank lines separate "
                  "documents, not a document's lines)") if draft is None \
            else f"before the |a| line of {draft.pmid!r}"
        raise FormatError(f"annotation line {where}", path, lineno)
    if fields[0] != draft.pmid:
        raise FormatError(
            f"line for document {fields[0]!r} inside document {draft.pmid!r}", path, lineno
        )
    if len(fields) == 4:
        if OFFSET.fullmatch(fields[1]) and OFFSET.fullmatch(fields[2]):
            raise FormatError(
                f"annotation line has no type column: {'<TAB>'.join(fields)[:80]!r}", path, lineno
            )
        draft.relations.append(tuple(fields[1:]))
    else:
        _parse_annotation(fields, draft, path, lineno)


def iter_pubtator(path: str | Path) -> Iterator[Document]:
    """Stream the documents of a PubTator file (optionally ``.gz``), one at a time.

    Args:
        path: PubTator file.

    Yields:
        Documents with ``text = title + " " + abstract`` (the title alone when the abstract is
        empty) and entities sorted by offsets.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: Naming the file, line and bad value, for a line that matches no PubTator
            line kind, a repeated document id, a missing ``|t|`` or ``|a|`` line, an
            annotation of another document, non-integer, empty or out-of-text offsets, or a
            mention that differs from the text.
    """
    path = Path(path)
    draft: _Draft | None = None
    seen: dict[str, int] = {}
    for lineno, line in iter_lines(path):
        if not line.strip():
            if draft is not None:
                yield draft.finish(path)
                draft = None
            continue
        match = _TEXT_LINE.match(line)
        if match is not None:
            draft, done = _add_text_line(match, draft, path, lineno)
            pmid, kind = match.group(1, 2)
            if kind == "t":
                if pmid in seen:  # evaluation pairs documents by id
                    raise FormatError(f"document id {pmid!r} already used on line {seen[pmid]}",
                                      path, lineno)
                seen[pmid] = lineno
            if done is not None:
                yield done
            continue
        fields = line.split("\t")
        if len(fields) < 4:
            raise FormatError(
                f"line matches no PubTator line kind (|t|, |a|, annotation, relation): "
                f"{line[:80]!r}",
                path,
                lineno,
            )
        _add_tab_line(fields, draft, path, lineno, next(reversed(seen), None))
    if draft is not None:
        yield draft.finish(path)
    elif not seen:
        logger.warning("%s holds no document: it is empty or blank", path)


def read_pubtator(path: str | Path) -> list[Document]:
    """Read all documents of a PubTator file; see :func:`iter_pubtator`."""
    docs = list(iter_pubtator(path))
    logger.info("read %d documents from %s", len(docs), path)
    return docs


def _title_and_abstract(doc: Document) -> tuple[str, str]:
    title = doc.metadata.get("title")
    if isinstance(title, str) and doc.text.startswith(title + " ") \
            and len(doc.text) > len(title) + 1:
        title_part, abstract = title, doc.text[len(title) + 1 :]
    else:
        # Documents from other formats (or ending with the space before an empty abstract):
        # the whole text on the title line, which the reader takes as the text.
        title_part, abstract = doc.text, ""
    return title_part.translate(_ONE_LINE), abstract.translate(_ONE_LINE)


def _document_lines(doc: Document) -> Iterator[str]:
    if not doc.id or any(c in doc.id for c in "\t\n\r|"):
        raise ValueError(f"document id {doc.id!r} cannot be written to PubTator")
    check_entities(doc)
    title, abstract = _title_and_abstract(doc)
    yield f"{doc.id}|t|{title}\n"
    yield f"{doc.id}|a|{abstract}\n"
    extras = {(s, e): extra for s, e, extra in doc.metadata.get("annotation_extras", ())}
    kept = kept_id_fields(doc)
    for link in sorted(doc.entities, key=lambda link: (link.start, link.end)):
        mention = link.text.translate(_ONE_LINE)
        fields = [
            doc.id,
            str(link.start),
            str(link.end),
            mention,
            (link.type or "").translate(_ONE_LINE),
        ]
        fields.append(concept_id_field(doc.id, link, kept))
        if (link.start, link.end) in extras:
            fields.append(extras[(link.start, link.end)])
        yield "\t".join(fields) + "\n"
    for relation in _relations(doc):
        yield "\t".join([doc.id, *relation]) + "\n"
    yield "\n"


def _relations(doc: Document) -> list[Any]:
    """PubTator's relation fields, or those of BioC relations given by three infons alone (as
    BC5CDR's: ``relation``, ``Chemical``, ``Disease``) in infon order; each checked to read
    back as the relation it is."""
    relations = doc.metadata.get("relations")
    if relations is None:
        relations = [list(relation["infons"].values())
                     for relation in doc.metadata.get("bioc_relations") or ()
                     if isinstance(relation, dict) and not relation.get("nodes")
                     and isinstance(relation.get("infons"), dict)
                     and len(relation["infons"]) == 3]
    if not isinstance(relations, list | tuple):
        raise FormatError(f"document {doc.id!r}: relations {str(relations)[:80]!r} are not a "
                          "list of relations (each a list of three strings)")
    for relation in relations:
        _check_relation(doc.id, relation)
    return list(relations)


def _check_relation(doc_id: str, relation: Any) -> None:
    if not isinstance(relation, list | tuple) or len(relation) != 3 \
            or not all(isinstance(part, str) for part in relation):
        raise FormatError(f"document {doc_id!r}: relation {str(relation)[:80]!r} is not a list "
                          "of three strings (type, first and second argument), the fields of a "
                          "PubTator relation line")
    if any(c in part for part in relation for c in "\t\n\r"):
        raise FormatError(f"document {doc_id!r}: relation {relation!r} holds a tab or line "
                          "break, which a PubTator line cannot hold")
    if all(OFFSET.fullmatch(part) for part in relation[:2]):
        raise FormatError(f"document {doc_id!r}: relation {relation!r} would read back as a "
                          "mention (its first two fields are numbers)")


def write_pubtator(path: str | Path, docs: Iterable[Document]) -> None:
    """Write documents as a PubTator file (gzip-compressed when ``path`` ends with ``.gz``).

    The title is ``metadata["title"]`` when the text is it, a space and a non-empty abstract
    (documents read from PubTator); otherwise the whole text goes on the title line and the
    abstract is empty, so the text reads back as it was. Tabs and
    line breaks are written as spaces, which keeps every offset. Scores are not written.

    Args:
        path: File to create or replace atomically.
        docs: Documents to write.

    Raises:
        ValueError: When an id cannot be written or an entity does not match the text.
        FormatError: Naming the document, for relations that are not lists of three strings
            a PubTator line can hold.
    """
    count = write_corpus(path, docs, pubtator_text)
    logger.info("wrote %d documents to %s", count, path)


def pubtator_text(docs: Iterable[Document]) -> Iterator[str]:
    """The text of a PubTator file of ``docs``, a line at a time (see :func:`write_pubtator`).

    Documents are read one at a time, as the lines are taken, so the text can be streamed.

    Raises:
        ValueError: When an id cannot be written or an entity does not match the text.
        FormatError: Naming the document, for relations that are not lists of three strings
            a PubTator line can hold.
    """
    for doc in docs:
        yield from _document_lines(doc)
