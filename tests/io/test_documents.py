"""Tests of format sniffing in read_documents / write_documents."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from xlnel.io import guess_format, read_documents, write_documents
from xlnel.types import Document, Link

DOCS = [
    Document("d1", "Insulin for diabetes.", (Link(12, 20, "diabetes", ("C0011849",), "Disorder"),)),
    Document("d2", "No mentions here.", ()),
]


@pytest.mark.parametrize(
    "name", ["c.jsonl", "c.json", "c.jsonl.gz", "c.pubtator", "c.pubtator.gz", "c.txt", "brat"]
)
def test_write_then_read_every_format(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    write_documents(path, DOCS)
    back = read_documents(path)
    assert [(d.id, d.entities) for d in back] == [(d.id, d.entities) for d in DOCS]
    assert [d.text.rstrip() for d in back] == [d.text for d in DOCS]


def test_guess_format(tmp_path: Path) -> None:
    write_documents(tmp_path / "c.pubtator", DOCS)
    (tmp_path / "c.pubtator").rename(tmp_path / "corpus.txt")
    assert guess_format(tmp_path / "corpus.txt") == "pubtator"
    assert guess_format(tmp_path) == "brat"
    assert guess_format(tmp_path / "x.JSONL.gz", for_writing=True) == "jsonl"
    assert guess_format(tmp_path / "folder", for_writing=True) == "brat"
    plain = tmp_path / "notes.txt"
    plain.write_text("just text\n", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot tell the corpus format"):
        guess_format(plain)
    with pytest.raises(FileNotFoundError, match="absent.jsonl"):
        read_documents(tmp_path / "absent.jsonl")


def test_explicit_format(tmp_path: Path) -> None:
    path = tmp_path / "corpus.data"
    write_documents(path, DOCS, format="jsonl")
    assert read_documents(path, format="JSONL") == read_documents(path, format="jsonl")
    with pytest.raises(ValueError, match="unknown corpus format 'xml'"):
        read_documents(path, format="xml")


def test_gzip_pubtator_is_compressed(tmp_path: Path) -> None:
    path = tmp_path / "c.pubtator.gz"
    write_documents(path, DOCS)
    assert gzip.decompress(path.read_bytes()).startswith(b"d1|t|Insulin for diabetes.")
