"""Tests of the atomic-write and line-reading helpers."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from xlnel.errors import FormatError, OutputError
from xlnel.io import write_jsonl
from xlnel.io._atomic import atomic_dir, atomic_path, atomic_write, iter_lines, open_binary
from xlnel.types import Document


def test_atomic_write_replaces_only_when_complete(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_write(path) as handle:
        handle.write("partial")
        raise RuntimeError("disk full")
    assert path.read_text(encoding="utf-8") == "old"
    assert list(tmp_path.iterdir()) == [path]


def test_atomic_write_failure_leaves_no_file(tmp_path: Path) -> None:
    def docs() -> Iterator[Document]:
        yield Document("a", "text")
        raise OSError("source vanished")

    path = tmp_path / "sub" / "out.jsonl.gz"
    with pytest.raises(OSError, match="vanished"):
        write_jsonl(path, docs())
    assert list(path.parent.iterdir()) == []


def test_atomic_write_gzip_and_folder_creation(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "out.txt.gz"
    with atomic_write(path) as handle:
        handle.write("héllo\n")
    assert gzip.decompress(path.read_bytes()) == "héllo\n".encode()


def test_atomic_write_keeps_existing_mode(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old", encoding="utf-8")
    path.chmod(0o640)
    with atomic_write(path) as handle:
        handle.write("new")
    assert path.read_text(encoding="utf-8") == "new"
    assert path.stat().st_mode & 0o777 == 0o640


def test_atomic_path_gives_a_new_file_the_umask_mode(tmp_path: Path) -> None:
    # safetensors (like mkstemp) makes owner-only files; a plain open() honours the umask
    old_umask = os.umask(0o027)
    try:
        with atomic_path(tmp_path / "w.bin") as tmp:
            tmp.unlink()
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT, 0o600)
            os.close(fd)
    finally:
        os.umask(old_umask)
    assert (tmp_path / "w.bin").stat().st_mode & 0o777 == 0o640


def test_atomic_dir_gives_the_folder_the_umask_mode(tmp_path: Path) -> None:
    # a saved pipeline or model folder gets the mode mkdir gives it (mkdtemp's is owner-only)
    old_umask = os.umask(0o027)
    try:
        with atomic_dir(tmp_path / "model") as tmp:
            (tmp / "a.json").write_text("{}", encoding="utf-8")
        (tmp_path / "plain").mkdir()
    finally:
        os.umask(old_umask)
    assert (tmp_path / "model").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "plain").stat().st_mode & 0o777 == 0o750


def test_iter_lines_keeps_spaces_and_handles_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("\ufeffa \r\n b\rc\n\nlast".encode())
    assert list(iter_lines(path)) == [(1, "a "), (2, " b\rc"), (3, ""), (4, "last")]


def test_iter_lines_bad_gzip(tmp_path: Path) -> None:
    path = tmp_path / "in.txt.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(FormatError, match="in.txt.gz:1: not a valid gzip"):
        list(iter_lines(path))


def test_iter_lines_bad_utf8_names_line(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"ok\nok\n\xffbad\n")
    with pytest.raises(FormatError, match="in.txt:3: not valid UTF-8"):
        list(iter_lines(path))


def test_atomic_path_replaces_on_success_and_keeps_old_file_on_failure(tmp_path):
    from xlnel.io import atomic_path

    target = tmp_path / "sub" / "weights.bin"
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp.exists()
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"partial")
        raise RuntimeError("writer failed")
    assert target.read_bytes() == b"new"
    assert [p.name for p in target.parent.iterdir()] == ["weights.bin"]


def test_atomic_dir_replaces_or_keeps_and_cleans_up(tmp_path: Path) -> None:
    from xlnel.io._atomic import atomic_dir

    target = tmp_path / "model"
    with atomic_dir(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".model.")
        (tmp / "a.txt").write_text("first", encoding="utf-8")
    assert (target / "a.txt").read_text(encoding="utf-8") == "first"
    with pytest.raises(RuntimeError), atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("broken", encoding="utf-8")
        raise RuntimeError("killed")
    assert (target / "a.txt").read_text(encoding="utf-8") == "first"
    with atomic_dir(target, "keep") as tmp:  # another writer finished first: theirs stays
        (tmp / "a.txt").write_text("second", encoding="utf-8")
    assert (target / "a.txt").read_text(encoding="utf-8") == "first"
    with atomic_dir(target) as tmp:
        (tmp / "b.txt").write_text("third", encoding="utf-8")
    assert sorted(p.name for p in target.iterdir()) == ["b.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["model"]  # no temporaries left


def test_paths_the_system_would_refuse_are_refused_first(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    cases = [(lambda: atomic_write(tmp_path / "folder"), OutputError,
              "folder is a folder; give the path of a file"),
             (lambda: atomic_write(tmp_path / "file" / "a" / "b.jsonl"), OutputError,
              r"file/a/b\.jsonl: .*file is a file, not a folder"),
             (lambda: atomic_dir(tmp_path / "file"), OutputError,
              "file is a file; give the path of a folder"),
             (lambda: open_binary(tmp_path / "folder"), IsADirectoryError,
              "folder is a folder, not a file")]
    for opened, error, message in cases:
        with pytest.raises(error, match=message), opened():
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]
