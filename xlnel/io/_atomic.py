"""File helpers shared by the readers and writers: atomic writes and gzip-transparent reading.

Writers never leave a half-written file behind: they write to a temporary file in the target's
folder and move it into place with :func:`os.replace` only once everything was written. A
termination request (SIGTERM, as sent by ``kill``, a job scheduler or a container stop) is
handled like Ctrl-C while a temporary file exists, so it is removed; one left by a process that
was killed outright (SIGKILL, power loss) is removed by the next write of the same target.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import logging
import os
import re
import secrets
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, BinaryIO, Literal, cast

from xlnel.errors import FormatError, OutputError
from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["ONE_LINE", "STDIN", "atomic_dir", "atomic_write", "distinct_ids", "is_gzip",
           "is_stdin", "iter_lines", "open_binary", "open_text", "read_text",
           "remove_stale_files", "sigterm_as_interrupt", "write_corpus", "write_tsv"]

#: The input name that stands for the standard input (``xlnel link PIPELINE -``).
STDIN = "-"
#: Tabs and line breaks would break the lines of a tab-separated file; a space each keeps the
#: length (and so every offset) of a text.
ONE_LINE = str.maketrans({"\t": " ", "\n": " ", "\r": " "})

#: When this process started (as far as xlnel can tell: when it was imported). A temporary file
#: older than that cannot belong to a write of this process.
PROCESS_START = time.time()


def is_gzip(path: str | Path) -> bool:
    """Whether ``path`` names a gzip file (by its ``.gz`` suffix)."""
    return Path(path).suffix.lower() == ".gz"


def is_stdin(path: str | Path) -> bool:
    """Whether ``path`` is :data:`STDIN`, the name of the standard input."""
    return str(path) == STDIN


@contextlib.contextmanager
def open_binary(path: str | Path) -> Iterator[BinaryIO]:
    """Open a file for reading bytes, decompressed when its name ends with ``.gz``; ``-`` is
    the standard input (read as it comes, and left open).

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        IsADirectoryError: When it is a folder.
    """
    if is_stdin(path):
        yield sys.stdin.buffer
        return
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder, not a file")
    with gzip.open(path, "rb") if is_gzip(path) else open(path, "rb") as handle:
        yield cast(BinaryIO, handle)


def open_text(path: str | Path, newline: str | None = None) -> IO[str]:
    """Open a UTF-8 text file for reading, decompressing it when its name ends with ``.gz``.

    Args:
        path: File to open.
        newline: Passed to :func:`open`; ``""`` keeps ``\\r\\n`` untranslated.

    Returns:
        A text stream.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        IsADirectoryError: When ``path`` is a folder.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8", newline=newline)
    return open(path, encoding="utf-8", newline=newline)


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Stream the lines of a UTF-8 text file with their 1-based numbers, without the line end.

    Only ``\\n`` or ``\\r\\n`` ends a line, and only the line end is removed: spaces and other
    characters count in corpus offsets. A byte-order mark at the start is dropped.

    Args:
        path: UTF-8 text file, optionally gzip-compressed (``.gz``), or ``-`` for the standard
            input.

    Yields:
        ``(line_number, line)`` pairs.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: When a line is not valid UTF-8 or a ``.gz`` file is not valid gzip.
    """
    path = Path(path)
    lineno = 0
    # Lines are read as bytes and decoded one by one so that a decoding error names its line.
    with open_binary(path) as handle:
        try:
            for lineno, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise FormatError(
                        f"not valid UTF-8 text ({exc.reason} at byte {exc.start})", path, lineno
                    ) from None
                if line.endswith("\n"):
                    line = line[:-2] if line.endswith("\r\n") else line[:-1]
                yield lineno, line.removeprefix("\ufeff") if lineno == 1 else line
        except (gzip.BadGzipFile, EOFError) as exc:
            raise FormatError(f"not a valid gzip file ({exc})", path, lineno + 1) from exc


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signum}")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into :class:`KeyboardInterrupt` inside the block, so clean-up code runs.

    Only in the main thread and only where SIGTERM still has its default action (which kills
    the process without running any ``finally``); a handler the application set is kept.
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def remove_stale_files(folder: Path, pattern: re.Pattern[str]) -> None:
    """Remove the files and folders of ``folder`` whose names match ``pattern`` and that are
    older than this process: the temporaries of a writer that was killed.

    Raises nothing: a file another process removed first, or one that cannot be removed, is
    left alone.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime >= PROCESS_START:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            logger.info("removed %s, left by an interrupted write", entry.path)
        except OSError:
            continue


_TEMP_NAME = re.compile(r"\.(.+)\.[0-9a-f]{12}\.tmp")


@functools.lru_cache(maxsize=256)
def _stale_temporaries(folder: str) -> dict[str, list[str]]:
    """The temporary files of ``folder`` older than this process, by target name.

    Listed once per folder and process, so that writing many files into one folder (a BRAT
    corpus) does not list it for each: a temporary created later is newer than the process,
    hence never stale.
    """
    found: dict[str, list[str]] = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        with contextlib.suppress(OSError):
            if match and entry.stat(follow_symlinks=False).st_mtime < PROCESS_START:
                found.setdefault(match.group(1), []).append(entry.path)
    return found


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files of writes of ``path`` that a killed process left."""
    for name in _stale_temporaries(str(path.parent)).pop(path.name, []):
        with contextlib.suppress(OSError):
            if os.stat(name, follow_symlinks=False).st_mtime < PROCESS_START:  # still old
                os.unlink(name)
                logger.info("removed %s, left by an interrupted write", name)


def read_text(path: str | Path) -> str:
    """The whole UTF-8 text of a file (optionally ``.gz``; ``-``: the standard input), line ends
    kept as they are.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: Naming the line of the first byte that is not valid UTF-8, or a ``.gz``
            file that is not valid gzip.
    """
    path = Path(path)
    try:
        with open_binary(path) as handle:
            data = handle.read()
    except (gzip.BadGzipFile, EOFError) as exc:
        raise FormatError(f"not a valid gzip file ({exc})", path) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(f"not valid UTF-8 text ({exc.reason} at byte {exc.start})", path,
                          line) from None


def _create_temp(path: Path) -> tuple[int, str]:
    # Unlike mkstemp (owner-only 0o600), mode 0o666 lets the umask decide, as for open().
    while True:
        name = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), name
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue


def create_temp_dir(target: Path) -> Path:
    """An empty folder ``.NAME.xxxxxxxx`` beside ``target``, with the mode mkdir gives."""
    # Unlike mkdtemp (owner-only 0o700), mode 0o777 lets the umask decide, as for mkdir.
    while True:
        tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}"
        try:
            tmp.mkdir(0o777)
            return tmp
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue


def check_writable(path: Path, folder: bool = False) -> None:
    """Refuse, before anything is written, a file path that is a folder, a folder path that is
    a file, and a path under a file (the system's own errors there name a temporary file)."""
    if path.is_dir() != folder and path.exists():
        raise OutputError(f"{path} is a {'file' if folder else 'folder'}; give the path of a "
                          f"{'folder' if folder else 'file'} to write")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"cannot write {path}: {parent} is a file, not a folder")
            return


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` that replaces it when the ``with`` block succeeds.

    For writers that take a file name (safetensors, numpy): on an exception the temporary file
    is removed and any previous ``path`` is left untouched. The folder is created when missing.
    The file gets the mode a plain ``open(path, "w")`` gives it: that of the file it replaces,
    else 0o666 less the umask, even when the writer recreated the temporary file with another
    mode (safetensors makes owner-only files).

    Yields:
        The temporary file's path (already created, empty).
    """
    path = Path(path)
    check_writable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(path)
    with sigterm_as_interrupt():
        fd, tmp_name = _create_temp(path)
        # created with 0o666, so its mode is the umask's, read without changing the umask
        new_mode = os.fstat(fd).st_mode & 0o777
        os.close(fd)
        try:
            yield Path(tmp_name)
            os.chmod(tmp_name, path.stat().st_mode & 0o777 if path.exists() else new_mode)
            os.replace(tmp_name, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
            raise
    logger.debug("wrote %s", path)


@contextlib.contextmanager
def atomic_write(path: str | Path, newline: str | None = "\n") -> Iterator[IO[str]]:
    """Open ``path`` for writing UTF-8 text so that it appears only once complete.

    The text goes to a temporary file in the same folder (see :func:`atomic_path`), which
    replaces ``path`` when the ``with`` block ends without an exception. A ``.gz`` name is
    written gzip-compressed.

    Args:
        path: File to create or replace; its folder is created when missing.
        newline: Passed to the text stream; the default writes ``\\n`` on every platform.

    Yields:
        A text stream to write to.
    """
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        compressed: gzip.GzipFile | None = None
        if is_gzip(path):
            # mtime=0 keeps the compressed bytes reproducible for identical content.
            compressed = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
        binary = cast(BinaryIO, raw if compressed is None else compressed)
        text = io.TextIOWrapper(binary, encoding="utf-8", newline=newline)
        try:
            yield text
            text.flush()
        finally:
            # Detach so that closing the wrapper cannot close ``raw`` before it is synced.
            text.detach()
        if compressed is not None:
            compressed.close()  # writes the gzip trailer; leaves ``raw`` open
        raw.flush()
        os.fsync(raw.fileno())


def write_tsv(path: str | Path, header: Sequence[str],
              rows: Iterable[Sequence[object]]) -> int:
    """Write a tab-separated table, header first, atomically (see :func:`atomic_write`); tabs
    and line breaks inside a field are written as spaces.

    Returns:
        The number of rows written (the header not counted).
    """
    count = 0
    with atomic_write(path) as handle:
        handle.write("\t".join(header) + "\n")
        for row in rows:
            handle.write("\t".join(str(field).translate(ONE_LINE) for field in row) + "\n")
            count += 1
    logger.info("wrote %d rows to %s", count, path)
    return count


@contextlib.contextmanager
def atomic_dir(target: str | Path, existing: Literal["replace", "keep"] = "replace",
               clean_stale: bool = True, mode: int | None = None) -> Iterator[Path]:
    """A temporary folder beside ``target`` that becomes ``target`` when the block succeeds.

    The one way xlnel writes a folder (a pipeline, a stage of the experiment cache, a model):
    readers never see a half-written one. On an exception (SIGTERM included) the temporary
    folder is removed and ``target`` is left as it was.

    Args:
        target: The folder to write; its parent is created when missing.
        existing: What to do when ``target`` exists at the end: ``replace`` it (two renames,
            the old folder removed last), or ``keep`` it and discard the new one (another
            process wrote the same content first, as in a shared cache).
        clean_stale: First remove the temporaries of writers of ``target`` killed before this
            process started (not for folders that concurrent processes write into).
        mode: Permissions of the folder; ``None`` gives the mode a plain ``mkdir`` gives
            (0o777 less the umask).

    Yields:
        The temporary folder (created, empty).
    """
    target = Path(target)
    check_writable(target, folder=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    if clean_stale:
        stale = re.compile(re.escape(f".{target.name}.") + r"(?:[a-z0-9_]{8}|old-\d+)")
        remove_stale_files(target.parent, stale)
    with sigterm_as_interrupt():
        tmp = create_temp_dir(target)
        try:
            if mode is not None:
                tmp.chmod(mode)
            yield tmp
            _install_dir(tmp, target, existing)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    logger.debug("wrote %s", target)


def _install_dir(tmp: Path, target: Path, existing: str) -> None:
    if existing == "keep" and target.exists():
        shutil.rmtree(tmp, ignore_errors=True)  # another process wrote it first; keep theirs
        return
    old = None
    if existing == "replace" and target.exists():
        old = target.with_name(f".{target.name}.old-{time.time_ns()}")
        os.rename(target, old)
    try:
        os.rename(tmp, target)
    except OSError:
        if existing != "keep" or not target.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)  # another process wrote it first; keep theirs
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_corpus(path: str | Path, docs: Iterable[Document],
                 text: Callable[[Iterable[Document]], Iterable[str]]) -> int:
    """Write the corpus file ``text(docs)`` to ``path`` atomically (see :func:`atomic_write`).

    Args:
        path: File to create or replace (``.gz`` compresses it).
        docs: Documents to write.
        text: A format's text of documents, piece by piece (such as
            :func:`xlnel.io.pubtator.pubtator_text`).

    Returns:
        The number of documents written.
    """
    count = 0

    def counted() -> Iterator[Document]:
        nonlocal count
        for doc in distinct_ids(docs):
            count += 1
            yield doc

    with atomic_write(path) as handle:
        handle.writelines(text(counted()))
    return count


def distinct_ids(docs: Iterable[Document]) -> Iterator[Document]:
    """``docs`` as they come, refusing a document id used before: every reader refuses a file
    that repeats one (evaluation pairs documents by id), so no writer makes one.

    Raises:
        FormatError: Naming the id and the documents (by position) that use it.
    """
    seen: dict[str, int] = {}
    for number, doc in enumerate(docs, start=1):
        if doc.id in seen:
            raise FormatError(f"document id {doc.id!r} is used by documents {seen[doc.id]} and "
                              f"{number}; a corpus file holds each id once")
        seen[doc.id] = number
        yield doc
