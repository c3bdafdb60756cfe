"""BRAT standoff corpora: a folder of ``X.txt`` texts with ``X.ann`` annotation files.

Only text-bound annotations (``T`` lines) and normalizations (``N`` lines) are read::

    T1<TAB>Disorder 10 20<TAB>חולה סוכרת
    N1<TAB>Reference T1 UMLS:C0011849<TAB>Diabetes Mellitus

A discontinuous span (``start end;start2 end2``) becomes the range from its first start to its
last end. Relations, events, attributes and notes are ignored.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from xlnel.errors import FormatError, OutputError
from xlnel.io._atomic import (
    iter_lines,
    read_text,
    remove_stale_files,
    sigterm_as_interrupt,
)
from xlnel.io._checks import check_entities
from xlnel.io.concept_ids import check_concept_id, normalize_concept_id, parse_concept_ids
from xlnel.io.pubtator import OFFSET
from xlnel.types import Document, Link

logger = logging.getLogger(__name__)

__all__ = ["NO_BRAT_FILES", "read_brat", "read_brat_document", "write_brat"]

#: Why a folder read as a BRAT corpus was refused: it holds no ``.txt`` file.
NO_BRAT_FILES = ("a folder without BRAT .txt files; give a corpus file (.jsonl, .json, .pubtator, "
                 ".xml, optionally .gz) or a folder of BRAT .txt + .ann files")


_WHITE_SPACE = re.compile(r"\s")
# The temporary folder write_brat fills inside the output folder before moving its files in.
_TEMP_FOLDER = re.compile(r"\.xlnel-brat\.[a-z0-9_]+")


@dataclass
class _Annotations:
    """``T`` and ``N`` annotations of one ``.ann`` file, before they are joined."""

    spans: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    concepts: dict[str, list[str]] = field(default_factory=dict)
    reference_lines: dict[str, int] = field(default_factory=dict)


def _parse_fragments(value: str, path: Path, lineno: int) -> list[tuple[int, int]]:
    fragments = []
    for part in value.split(";"):
        bounds = part.split()
        if len(bounds) != 2:
            raise FormatError(f"span {part!r} is not 'start end'", path, lineno)
        if not all(OFFSET.fullmatch(bound) for bound in bounds):
            raise FormatError(f"offsets {part!r} are not integers (ASCII digits only)", path,
                              lineno)
        start, end = int(bounds[0]), int(bounds[1])
        if start < 0 or start >= end:
            raise FormatError(f"offsets {start}-{end} are not a non-empty range", path, lineno)
        fragments.append((start, end))
    return fragments


def _parse_text_bound(
    fields: list[str], text: str, path: Path, lineno: int
) -> tuple[int, int, str]:
    """Parse a ``T`` line into ``(start, end, type)``."""
    if len(fields) < 3 or " " not in fields[1]:
        raise FormatError(
            f"T line is not 'ID<TAB>Type start end<TAB>text': {fields!r}", path, lineno
        )
    entity_type, _, offsets = fields[1].partition(" ")
    fragments = _parse_fragments(offsets, path, lineno)
    start, end = min(s for s, _ in fragments), max(e for _, e in fragments)
    if end > len(text):
        raise FormatError(
            f"end offset {end} is beyond the text ({len(text)} characters)", path, lineno
        )
    gaps = [text[e:s] for (_, e), (s, _) in zip(fragments, fragments[1:], strict=False)]
    if len(fragments) == 1:
        if text[start:end] != fields[2]:
            # BRAT counts a byte-order mark as the text's first character; a tool that dropped
            # it writes every offset one short.
            hint = ("; the text starts with a byte-order mark (U+FEFF), which BRAT offsets count "
                    "as a character: remove it from the .txt file or count it"
                    if text.startswith("\ufeff") and text[start + 1:end + 1] == fields[2] else "")
            raise FormatError(
                f"mention {fields[2]!r} differs from the text at {start}-{end}: "
                f"{text[start:end]!r}{hint}",
                path,
                lineno,
            )
    elif any(gap.strip() for gap in gaps):
        logger.warning(
            "%s:%d: discontinuous mention %r read as the whole range %d-%d: %r",
            path,
            lineno,
            fields[2],
            start,
            end,
            text[start:end],
        )
    return start, end, entity_type


def _parse_reference(fields: list[str], path: Path, lineno: int) -> tuple[str, tuple[str, ...]]:
    """Parse an ``N`` line into ``(target T id, concept ids)``, the ``DB:ID`` read by the rule
    of :mod:`xlnel.io.concept_ids` (``MESH:D1|D2`` is two ids, ``UMLS:-1`` none)."""
    parts = fields[1].split() if len(fields) > 1 else []
    if len(parts) != 3:
        raise FormatError(
            f"N line is not 'ID<TAB>Reference T1 DB:ID<TAB>name': {fields!r}", path, lineno
        )
    return parts[1], parse_concept_ids(parts[2])


def _read_ann(path: Path, text: str) -> _Annotations:
    found = _Annotations()
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t", 2)  # a mention may hold a tab
        kind = fields[0][:1]
        if kind == "T":
            if fields[0] in found.spans:
                raise FormatError(f"annotation id {fields[0]!r} used twice", path, lineno)
            found.spans[fields[0]] = _parse_text_bound(fields, text, path, lineno)
        elif kind == "N":
            target, concept_ids = _parse_reference(fields, path, lineno)
            found.concepts.setdefault(target, []).extend(concept_ids)
            found.reference_lines.setdefault(target, lineno)
    for target, lineno in found.reference_lines.items():
        if target not in found.spans:
            raise FormatError(f"N line refers to unknown annotation {target!r}", path, lineno)
    return found


def read_brat_document(txt_path: str | Path, ann_path: str | Path | None = None,
                       warn_missing: bool = True) -> Document:
    """Read one BRAT document.

    Args:
        txt_path: The text file; its stem is the document id.
        ann_path: The annotation file; by default ``txt_path`` with the suffix ``.ann``. A
            missing annotation file means no annotations.
        warn_missing: Log a warning when the annotation file is missing.

    Returns:
        The document with its entities sorted by offsets.

    Raises:
        FileNotFoundError: When the text file does not exist.
        FormatError: Naming the ``.ann`` file and line, for malformed ``T`` or ``N`` lines,
            out-of-text offsets or a mention that differs from the text.
    """
    txt_path = Path(txt_path)
    ann = txt_path.with_suffix(".ann") if ann_path is None else Path(ann_path)
    text = read_text(txt_path)  # "\r\n" stays two characters: BRAT offsets count both
    if not ann.exists():
        if warn_missing:
            logger.warning("%s has no annotation file %s; reading it without entities",
                           txt_path, ann)
        return Document(txt_path.stem, text)
    found = _read_ann(ann, text)
    entities = []
    for tid, (start, end, entity_type) in found.spans.items():
        concept_ids = tuple(dict.fromkeys(found.concepts.get(tid, ())))
        entities.append(Link(start, end, text[start:end], concept_ids, entity_type))
    entities.sort(key=lambda link: (link.start, link.end))
    return Document(txt_path.stem, text, tuple(entities))


def brat_files(folder: Path) -> tuple[dict[str, Path], dict[str, Path]]:
    """The ``.txt`` and ``.ann`` files of a BRAT folder, by stem; the suffix in any case
    (``X.TXT``), as corpora copied from case-insensitive file systems have them.

    Raises:
        FormatError: Naming both files, when a stem has two text or two annotation files whose
            suffixes differ only by case (``a.txt`` and ``a.TXT``): either could be the
            document.
    """
    found: dict[str, dict[str, Path]] = {".txt": {}, ".ann": {}}
    for path in sorted(folder.iterdir()):
        files = found.get(path.suffix.lower())
        if files is None or not path.is_file():
            continue
        if path.stem in files:
            raise FormatError(f"two files for one BRAT document {path.stem!r}: "
                              f"{files[path.stem].name} and {path.name}, whose suffixes differ "
                              "only by case; keep one of them", folder)
        files[path.stem] = path
    return found[".txt"], found[".ann"]


def read_brat(folder: str | Path) -> list[Document]:
    """Read every ``X.txt`` + ``X.ann`` pair of a folder, in file-name order.

    Suffixes are read in any case (``X.TXT``, ``X.Ann``).

    Args:
        folder: Folder of BRAT files (not searched recursively).

    Returns:
        One document per ``.txt`` file, its id the file stem. A ``.txt`` file without its
        ``.ann`` is read without entities, with a warning; a folder without any ``.ann`` file
        (plain texts to link) is read so with one log line.

    Raises:
        FileNotFoundError: When ``folder`` does not exist.
        FormatError: For a file given as the folder, a folder without ``.txt`` files, an
            ``.ann`` file without its ``.txt``, two files of one document whose suffixes differ
            only by case (``a.txt`` and ``a.TXT``), or a malformed ``.ann`` file.
    """
    folder = Path(folder)
    if folder.is_file():
        raise FormatError("a file, not a BRAT folder of .txt + .ann files", folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no such BRAT folder: {folder}")
    texts, anns = brat_files(folder)
    if not texts:
        raise FormatError(NO_BRAT_FILES, folder)
    for stem, ann in sorted(anns.items()):
        if stem not in texts:
            raise FormatError(f"annotation file has no text file {stem}.txt", ann)
    if not anns:
        logger.info("%s holds no .ann file: reading its %d texts without entities", folder,
                    len(texts))
    docs = [read_brat_document(path, anns.get(stem, folder / f"{stem}.ann"),
                               warn_missing=bool(anns))
            for stem, path in sorted(texts.items(), key=lambda item: item[1].name)]
    logger.info("read %d documents from %s", len(docs), folder)
    return docs


def _fragments(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split a span at line breaks, as BRAT does: an ``.ann`` line cannot hold them."""
    fragments, begin = [], start
    for i in range(start, end + 1):
        if i == end or text[i] in "\r\n":
            if i > begin:
                fragments.append((begin, i))
            begin = i + 1
    return fragments


def _reference(doc: Document, link: Link, concept_id: str, db: str) -> str:
    """The ``DB:ID`` of an ``N`` line, checked to read back as ``concept_id``."""
    if link.id_kind == "dictionary_name":
        raise FormatError(
            f"document {doc.id!r}: concept id {concept_id!r} is a dictionary name, not an id "
            "of a vocabulary, which a BRAT normalization (DB:ID) names; write JSONL, BioC or "
            "PubTator to keep it")
    reference = concept_id if ":" in concept_id else f"{db}:{concept_id}"
    if any(c.isspace() for c in reference) or not normalize_concept_id(concept_id):
        raise FormatError(
            f"document {doc.id!r}: concept id {concept_id!r} cannot be written as a BRAT "
            "normalization (DB:ID, no spaces, tabs or line breaks); write JSONL, BioC or "
            "PubTator to keep it")
    check_concept_id(doc.id, concept_id)
    if parse_concept_ids(reference) != (normalize_concept_id(concept_id),):
        raise FormatError(
            f"document {doc.id!r}: concept id {concept_id!r} would read back from the BRAT "
            f"normalization {reference!r} as {list(parse_concept_ids(reference))}; give the "
            "id its vocabulary prefix, or write JSONL, BioC or PubTator to keep it")
    return reference


def _ann_lines(doc: Document, db: str) -> list[str]:
    lines, n_refs = [], 0
    for number, link in enumerate(doc.entities, start=1):
        pieces = _fragments(doc.text, link.start, link.end)
        offsets = ";".join(f"{s} {e}" for s, e in pieces)
        mention = " ".join(doc.text[s:e] for s, e in pieces)
        # a BRAT type is one token: a tab or line break would break the line
        entity_type = _WHITE_SPACE.sub("_", link.type or "Entity")
        lines.append(f"T{number}\t{entity_type} {offsets}\t{mention}\n")
        for concept_id in link.concept_ids:
            n_refs += 1
            reference = _reference(doc, link, concept_id, db)
            lines.append(f"N{n_refs}\tReference T{number} {reference}\t{mention}\n")
    return lines


def _check_id(doc: Document, folder: Path, seen: set[str]) -> None:
    """Refuse an id that is no plain file name, repeats, or names files already in ``folder``."""
    if not doc.id or doc.id.startswith(".") or any(c in doc.id for c in "/\\\0"):
        raise FormatError(f"document id {doc.id!r} cannot be used as a BRAT file name")
    if doc.id in seen:
        raise FormatError(f"document id {doc.id!r} is used twice; BRAT writes one pair of files "
                          "a document id")
    seen.add(doc.id)
    for suffix in (".txt", ".ann"):
        if (folder / f"{doc.id}{suffix}").exists():
            raise OutputError(f"{folder / f'{doc.id}{suffix}'} already exists; xlnel does not "
                              "overwrite files in a BRAT folder: remove it or give another folder")


def _move_in(tmp: Path, folder: Path) -> None:
    """Move every file of ``tmp`` into ``folder``, none over an existing file; on failure the
    files moved so far are removed again."""
    moved: list[Path] = []
    try:
        for source in sorted(tmp.iterdir()):
            target = folder / source.name
            if target.exists():  # written meanwhile by another process
                raise OutputError(f"{target} already exists; xlnel does not overwrite files in a "
                                  "BRAT folder: remove it or give another folder")
            os.replace(source, target)
            moved.append(target)
    except BaseException:
        for target in moved:
            target.unlink(missing_ok=True)
        raise


def write_brat(folder: str | Path, docs: Iterable[Document], db: str = "UMLS") -> None:
    """Write each document as ``<id>.txt`` and ``<id>.ann`` in ``folder``, all or none.

    The files are written into a hidden temporary folder inside ``folder`` and moved into it
    only when every document was written, so a failure leaves ``folder`` as it was. Files
    already in ``folder`` are never replaced. Entity types have spaces, tabs and line breaks
    replaced by ``_`` (a BRAT type is one token; a missing type is written ``Entity``).
    Mentions that cross a line break are written as fragments.

    Args:
        folder: Folder to write into; created when missing.
        docs: Documents to write; ids must be distinct and usable as file names.
        db: Vocabulary prefix written before concept ids that have none (``UMLS:C0011849``).
            ``UMLS`` and ``MESH`` prefixes are removed again by :func:`read_brat`.

    Raises:
        FormatError: Naming the document, for an id that is not a plain file name or repeats,
            or a concept id that a normalization line cannot hold (one with spaces, tabs or line
            breaks, or a dictionary name).
        OutputError: Naming the file, when ``<id>.txt`` or ``<id>.ann`` already exists.
        ValueError: When an entity does not match the text.
    """
    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_files(folder, _TEMP_FOLDER)
    seen: set[str] = set()
    with sigterm_as_interrupt():
        tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".xlnel-brat."))
        try:
            for doc in docs:
                _check_id(doc, folder, seen)
                check_entities(doc)
                lines = _ann_lines(doc, db)
                (tmp / f"{doc.id}.txt").write_text(doc.text, encoding="utf-8", newline="")
                (tmp / f"{doc.id}.ann").write_text("".join(lines), encoding="utf-8",
                                                   newline="\n")
            _move_in(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            if created:  # leave no empty folder behind either
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    logger.info("wrote %d documents to %s", len(seen), folder)
