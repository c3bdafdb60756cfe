"""``corpus_texts``: the texts a ``--corpus`` file gives the builder."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from xlnel.dictionary.corpus_evidence import corpus_texts
from xlnel.errors import FormatError


def test_plain_text_gives_one_text_per_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes("\ufeffred cell\r\nkidney\n".encode())
    assert list(corpus_texts([path])) == ["red cell", "kidney"]


def test_gzip_plain_text_is_decompressed(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt.gz"
    path.write_bytes(gzip.compress(b"red cell\nkidney\n"))
    assert list(corpus_texts([path])) == ["red cell", "kidney"]


def test_document_files_give_their_texts(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "d1", "text": "red cell", "entities": []}\n', encoding="utf-8")
    assert list(corpus_texts([path])) == ["red cell"]


def test_bad_plain_text_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"fine\n\xff\xfe bad\n")
    with pytest.raises(FormatError, match=r"notes\.txt.*2|2.*notes\.txt"):
        list(corpus_texts([path]))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        list(corpus_texts([tmp_path / "missing.txt"]))
