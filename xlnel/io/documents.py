"""Read and write corpora in any supported format, chosen by name or from the path.

Formats: ``jsonl`` (``.jsonl``, ``.json``), ``pubtator`` (``.pubtator``, or a ``.txt`` file whose
first line is a PubTator title line), ``bioc`` (BioC XML: ``.xml``, ``.bioc``), ``biocjson``
(BioC JSON, PubTator3's export: ``.bioc.json``, ``.biocjson``, or a ``.json`` file that starts
as BioC JSON does), ``brat`` (a folder of ``.txt`` + ``.ann`` files) and, for reading only,
``text`` (any other ``.txt`` file: its whole text is one document without annotations, its id
the file name without extensions, as a BRAT text is). Files may be gzip-compressed
(``corpus.jsonl.gz``); ``-`` reads the standard input.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from xlnel.errors import FormatError
from xlnel.io._atomic import distinct_ids, is_stdin, iter_lines, open_binary, read_text
from xlnel.io.bioc import bioc_text, iter_bioc, write_bioc
from xlnel.io.bioc_json import bioc_json_text, iter_bioc_json, looks_like_bioc_json, write_bioc_json
from xlnel.io.brat import NO_BRAT_FILES, brat_files, read_brat, write_brat
from xlnel.io.jsonl import iter_jsonl, jsonl_text, write_jsonl
from xlnel.io.pubtator import iter_pubtator, pubtator_text, write_pubtator
from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["FORMATS", "READ_ONLY_FORMATS", "STREAM_FORMATS", "check_source", "corpus_extension",
           "WRITABLE_FORMATS", "format_documents", "guess_format", "iter_documents",
           "read_annotated_documents", "read_documents", "write_documents"]

FORMATS = ("jsonl", "pubtator", "bioc", "biocjson", "brat", "text")
#: Formats that can only be read: they hold no annotations.
READ_ONLY_FORMATS = ("text",)
#: Formats that can be written.
WRITABLE_FORMATS = tuple(f for f in FORMATS if f not in READ_ONLY_FORMATS)
#: Formats written as one text, which can go to a stream (the standard output): all but BRAT,
#: a folder of files.
STREAM_FORMATS = ("jsonl", "pubtator", "bioc", "biocjson")
_EXTENSIONS = {".jsonl": "jsonl", ".json": "jsonl", ".pubtator": "pubtator", ".xml": "bioc",
               ".bioc": "bioc", ".bioc.json": "biocjson", ".biocjson": "biocjson"}
_PUBTATOR_TITLE = re.compile(r"^[^\t|]+\|t\|")
#: How much of a ``.json`` file is looked at to tell BioC JSON from JSON Lines.
_HEAD = 1 << 16


def corpus_extension(path: str | Path) -> str:
    """The lower-case extension that names a corpus format (``.gz`` looked through):
    ``.bioc.json`` for BioC JSON, else the last suffix (``''`` for none)."""
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() != ".gz"]
    if suffixes[-2:] == [".bioc", ".json"]:
        return ".bioc.json"
    return suffixes[-1] if suffixes else ""


def _sniff_json(path: Path) -> str:
    """A ``.json`` file is BioC JSON when it starts as BioC JSON does, else JSON Lines."""
    if is_stdin(path) or path.is_dir():
        return "jsonl"
    try:
        with open_binary(path) as handle:
            head = handle.read(_HEAD)
    except (OSError, EOFError):
        return "jsonl"  # the reader names the fault
    return "biocjson" if looks_like_bioc_json(head) else "jsonl"


def _looks_like_pubtator(path: Path) -> bool:
    for _, line in iter_lines(path):
        if line.strip():
            return _PUBTATOR_TITLE.match(line) is not None
    return False


def guess_format(path: str | Path, for_writing: bool = False) -> str:
    """Tell the corpus format of ``path``.

    Args:
        path: Corpus file or BRAT folder. A ``.gz`` suffix is looked through.
        for_writing: The path may not exist yet: a path without an extension is then taken
            as a BRAT folder, a ``.txt`` file as PubTator and a ``.json`` file as JSONL. When
            reading, a ``.txt`` file whose first line is not a PubTator title line is
            ``text``, a ``.json`` file that starts as BioC JSON does (a list, or the key
            ``documents``, ``PubTator3`` or ``passages``) is ``biocjson``, and ``-`` (the
            standard input) is JSONL.

    Returns:
        One of :data:`FORMATS`.

    Raises:
        FileNotFoundError: When reading and ``path`` does not exist.
        ValueError: When the format cannot be told.
    """
    path = Path(path)
    if is_stdin(path) and not for_writing:
        return "jsonl"
    if not for_writing and not path.exists():
        raise FileNotFoundError(f"no such corpus file or folder: {path}")
    if path.is_dir():
        return "brat"
    ext = corpus_extension(path)
    if ext == ".json" and not for_writing:
        return _sniff_json(path)
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    if for_writing and ext == "":
        return "brat"
    if ext == ".txt":
        return "pubtator" if for_writing or _looks_like_pubtator(path) else "text"
    raise ValueError(
        f"cannot tell the corpus format of {path}: name it (--from or --to on the command "
        f"line, format= in Python) as one of {', '.join(FORMATS)}, or use the "
        f"extension .jsonl, .json, .pubtator, .xml (BioC), .bioc.json (BioC JSON) or .txt "
        "(optionally .gz), or a BRAT folder"
    )


def check_source(path: str | Path) -> str:
    """Check, without reading it, that ``path`` is a corpus that can be read; return its format.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        ValueError: When the format cannot be told.
        FormatError: When ``path`` is a folder without BRAT ``.txt`` files.
    """
    fmt = guess_format(path)
    if fmt == "brat" and not brat_files(Path(path))[0]:
        raise FormatError(NO_BRAT_FILES, path)
    return fmt


def _check_format(format: str) -> str:
    fmt = format.lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown corpus format {format!r}; expected one of {FORMATS}")
    return fmt


def read_documents(path: str | Path, format: str | None = None) -> list[Document]:
    """Read a corpus in any supported format.

    Args:
        path: Corpus file (optionally ``.gz``) or BRAT folder.
        format: One of :data:`FORMATS`; ``None`` guesses it with :func:`guess_format`.

    Returns:
        The documents.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        ValueError: When the format is unknown or cannot be guessed.
        FormatError: When the file does not follow its format.
    """
    docs = list(iter_documents(path, format))
    logger.info("read %d documents from %s", len(docs), path)
    return docs


def read_annotated_documents(path: str | Path, role: str = "corpus",
                             format: str | None = None) -> list[Document]:
    """Read a corpus that should hold annotations (gold, training documents, predictions).

    Args:
        path: Corpus file (optionally ``.gz``) or BRAT folder; ``-`` reads the standard input.
        role: What the corpus is (``gold``, ``data.train``), for messages.
        format: One of :data:`FORMATS`; ``None`` guesses it with :func:`guess_format`.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        ValueError: When the format cannot be guessed, or ``path`` is a plain-text file, a
            folder without BRAT ``.txt``/``.ann`` files or one without any ``.ann`` file.
        FormatError: When the file does not follow its format.
    """
    fmt = guess_format(path) if format is None else _check_format(format)
    if fmt in READ_ONLY_FORMATS:
        raise ValueError(f"{role} {path} is a plain-text file, which holds no annotations; give "
                         "a JSONL, PubTator or BioC file (optionally .gz) or a BRAT folder")
    if fmt == "brat" and not brat_files(Path(path))[1]:
        if not brat_files(Path(path))[0]:
            raise ValueError(f"{role} {path} is a folder without BRAT .txt/.ann files; give a "
                             "JSONL, PubTator or BioC file, or a BRAT folder")
        raise ValueError(f"{role} {path} is a folder of texts without any BRAT .ann file, "
                         "which holds no annotations")
    return read_documents(path, fmt)


def iter_documents(path: str | Path, format: str | None = None) -> Iterator[Document]:
    """Stream a corpus one document at a time, so memory does not grow with the corpus.

    JSONL, PubTator and BioC (XML or JSON) files (optionally ``.gz``) are read lazily, a
    document at a time; a BRAT folder is read whole first (its documents are separate files,
    small by nature).

    Args:
        path: Corpus file (optionally ``.gz``) or BRAT folder.
        format: One of :data:`FORMATS`; ``None`` guesses it with :func:`guess_format`.

    Yields:
        The documents, in file order.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        ValueError: When the format is unknown or cannot be guessed.
        FormatError: When the file does not follow its format (raised when the bad line is
            reached, after the documents before it were yielded).
    """
    fmt = guess_format(path) if format is None else _check_format(format)
    logger.debug("streaming %s as %s", path, fmt)
    if is_stdin(path) and fmt == "brat":
        raise ValueError("a BRAT corpus is a folder of files, which the standard input cannot "
                         "be; give jsonl, pubtator, bioc, biocjson or text")
    if fmt == "jsonl":
        return iter_jsonl(path)
    if fmt == "pubtator":
        return iter_pubtator(path)
    if fmt == "bioc":
        return iter_bioc(path)
    if fmt == "biocjson":
        return iter_bioc_json(path)
    if fmt == "text":
        return iter([_read_plain_text(Path(path))])
    return iter(read_brat(path))


def _read_plain_text(path: Path) -> Document:
    """A plain-text file (``.txt``, optionally ``.gz``) as one document, its id the file name
    without those extensions."""
    name = "stdin" if is_stdin(path) else path.name
    for suffix in (".gz", ".txt"):
        if name.lower().endswith(suffix):
            name = name[:-len(suffix)]
    return Document(name or path.name, read_text(path))


def format_documents(docs: Iterable[Document], format: str) -> Iterator[str]:
    """The text of a corpus file of ``docs`` in ``format``, piece by piece, as it is written.

    Documents are read one at a time as the pieces are taken, so a corpus can be streamed to
    the standard output or a socket (``xlnel link PIPELINE SOURCE --to pubtator``).

    Args:
        docs: Documents to write.
        format: One of :data:`STREAM_FORMATS`.

    Raises:
        ValueError: When the format is unknown, not written as one text (``brat``, ``text``),
            or a document cannot be written (see the format's writer).
        FormatError: When a document id is used twice.
    """
    fmt = _check_format(format)
    if fmt not in STREAM_FORMATS:
        raise ValueError(f"{fmt} is not written as one text; give one of {STREAM_FORMATS}"
                         + (" (BRAT is a folder of files)" if fmt == "brat" else ""))
    return _TEXTS[fmt](distinct_ids(docs))


def write_documents(path: str | Path | IO[str], docs: Iterable[Document],
                    format: str | None = None) -> None:
    """Write a corpus in any supported format, atomically (or to a text stream).

    Args:
        path: File to write (``.gz`` compresses it) or BRAT folder; or an open text stream
            (``sys.stdout``), written a document at a time and flushed after each.
        docs: Documents to write.
        format: ``jsonl``, ``pubtator``, ``bioc``, ``biocjson`` or ``brat``; ``None`` guesses
            it from ``path`` with :func:`guess_format` (an existing folder or a name without
            extension is BRAT; a stream is JSONL).

    Raises:
        ValueError: When the format is unknown, read-only (``text``) or cannot be guessed, or
            a document cannot be written (see the format's writer).
        FormatError: When a document id is used twice (every reader would refuse the file);
            nothing is written then.
    """
    if not isinstance(path, str | Path):
        _write_stream(path, docs, format or "jsonl")
        return
    fmt = guess_format(path, for_writing=True) if format is None else _check_format(format)
    if fmt in READ_ONLY_FORMATS:
        raise ValueError(f"{fmt} is a format for reading plain texts; write {path} as one of "
                         f"{WRITABLE_FORMATS}")
    logger.debug("writing %s as %s", path, fmt)
    _WRITERS[fmt](path, docs)


def _write_stream(stream: IO[str], docs: Iterable[Document], format: str) -> None:
    def flushed() -> Iterator[Document]:
        for doc in docs:
            yield doc
            # Asked for the next document, the writer has written all of this one: show it now.
            stream.flush()

    stream.writelines(format_documents(flushed(), format))
    stream.flush()


_TEXTS: dict[str, Callable[[Iterable[Document]], Iterator[str]]] = {
    "jsonl": jsonl_text, "pubtator": pubtator_text, "bioc": bioc_text,
    "biocjson": bioc_json_text}
_WRITERS: dict[str, Callable[[str | Path, Iterable[Document]], None]] = {
    "jsonl": write_jsonl, "pubtator": write_pubtator, "bioc": write_bioc,
    "biocjson": write_bioc_json, "brat": write_brat}
