"""Tests of the BRAT standoff reader and writer."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.errors import FormatError, OutputError
from xlnel.io import read_brat, read_brat_document, write_brat
from xlnel.io.documents import read_annotated_documents, read_documents
from xlnel.types import Document, Link

runner = CliRunner()
TEXT = "Patient has diabetes mellitus.\nTreated with insulin and\r\nmetformin."
ANN = (
    "T1\tDisorder 12 29\tdiabetes mellitus\n"
    "N1\tReference T1 UMLS:C0011849\tDiabetes Mellitus\n"
    "T2\tChemical 44 51\tinsulin\n"
    "N2\tReference T2 MESH:D007328\tInsulin\n"
    "N3\tReference T2 HP:0000001\tAll\n"
    "R1\tTreats Arg1:T2 Arg2:T1\n"
    "A1\tNegated T1\n"
    "#1\tAnnotatorNotes T1\tnote\n"
    "T3\tChemical 12 20;57 66\tdiabetes metformin\n"
)


def _folder(tmp_path: Path, ann: str = ANN, text: str = TEXT, name: str = "doc1") -> Path:
    folder = tmp_path / "brat"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.txt").write_bytes(text.encode("utf-8"))
    (folder / f"{name}.ann").write_text(ann, encoding="utf-8")
    return folder


def test_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="xlnel.io.brat"):
        (doc,) = read_brat(_folder(tmp_path))
    assert doc.id == "doc1"
    assert doc.text == TEXT  # "\r\n" kept: BRAT offsets count both characters
    assert doc.entities == (
        Link(12, 29, "diabetes mellitus", ("C0011849",), "Disorder"),
        Link(12, 66, TEXT[12:66], (), "Chemical"),
        Link(44, 51, "insulin", ("D007328", "HP:0000001"), "Chemical"),
    )
    assert "discontinuous" in caplog.text


def test_missing_ann_means_no_entities(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = _folder(tmp_path)
    (folder / "doc2.txt").write_text("plain", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="xlnel.io.brat"):
        docs = read_brat(folder)
    assert [d.id for d in docs] == ["doc1", "doc2"]
    assert docs[1].entities == ()
    # beside annotated texts, a missing .ann is worth a warning
    assert "doc2.txt has no annotation file" in caplog.text


def test_folder_of_plain_texts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.txt").write_text(f"note {name}\n", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="xlnel.io.brat"):
        docs = read_brat(folder)
    assert [(d.id, d.text, d.entities) for d in docs] == [
        ("a", "note a\n", ()), ("b", "note b\n", ()), ("c", "note c\n", ())]
    # texts to link: one line for the folder, no warning per file
    assert [r.levelname for r in caplog.records] == ["INFO", "INFO"]
    assert "holds no .ann file: reading its 3 texts without entities" in caplog.text
    with pytest.raises(ValueError, match="folder of texts without any BRAT .ann file"):
        read_annotated_documents(folder, "gold")


def test_ann_without_txt(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "orphan.ann").write_text("", encoding="utf-8")
    with pytest.raises(FormatError, match="orphan.ann: annotation file has no text file"):
        read_brat(folder)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nothing"):
        read_brat(tmp_path / "nothing")


def test_round_trip(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = "A tab\there, a line\nbreak.\r\nC"
    doc = Document(
        "post-1",
        text,
        (
            Link(0, 1, "A", ("C0000001",), "Chemical_or_drug"),
            Link(2, 9, "tab\ther", ("C1", "C2"), "Disorder"),
            Link(14, 25, "line\nbreak.", (), "Disorder"),
            Link(14, 28, "line\nbreak.\r\nC", ("HP:0000001",)),
        ),
    )
    out = tmp_path / "out"
    write_brat(out, [doc])
    assert (out / "post-1.txt").read_bytes() == text.encode("utf-8")
    ann = (out / "post-1.ann").read_text(encoding="utf-8")
    assert "T3\tDisorder 14 18;19 25\tline break.\n" in ann
    assert "N1\tReference T1 UMLS:C0000001\tA\n" in ann
    assert "Reference T4 HP:0000001" in ann
    with caplog.at_level(logging.WARNING, logger="xlnel.io.brat"):
        (back,) = read_brat(out)
    assert back.entities == doc.entities[:3] + (
        Link(14, 28, text[14:28], ("HP:0000001",), "Entity"),
    )
    assert caplog.text == ""  # fragments split at line breaks only: no warning


def test_write_replaces_spaces_in_types(tmp_path: Path) -> None:
    write_brat(
        tmp_path, [Document("d", "insulin", (Link(0, 7, "insulin", (), "Chemical or drug"),))]
    )
    assert read_brat(tmp_path)[0].entities[0].type == "Chemical_or_drug"


def test_write_replaces_tabs_and_line_breaks_in_types(tmp_path: Path) -> None:
    # a tab or line break in the type would break the .ann line
    doc = Document("d", "insulin", (Link(0, 7, "insulin", (), "Chemical\tor\ndrug"),))
    write_brat(tmp_path, [doc])
    assert read_brat(tmp_path)[0].entities[0].type == "Chemical_or_drug"


@pytest.mark.parametrize("doc_id", ["", "../evil", ".hidden", "a/b"])
def test_write_rejects_unsafe_ids(tmp_path: Path, doc_id: str) -> None:
    with pytest.raises(ValueError, match="file name"):
        write_brat(tmp_path, [Document(doc_id, "x")])


@pytest.mark.parametrize(
    ("ann", "line", "message"),
    [
        ("T1\tDisorder 12 29\tdiabetes mellitus\nT2\tDisorder\tx\n", 2, "is not 'ID<TAB>Type"),
        ("T1\tDisorder 12 x\tdiabetes\n", 1, "'12 x' are not integers"),
        ("T1\tDisorder 12 \u0662\u0660\tdiabetes\n", 1, "are not integers"),
        ("T1\tDisorder +12 20\tdiabetes\n", 1, "'+12 20' are not integers"),
        ("T1\tDisorder 1_2 20\tdiabetes\n", 1, "'1_2 20' are not integers"),
        ("T1\tDisorder 12\tdiabetes\n", 1, "span '12' is not 'start end'"),
        ("T1\tDisorder 20 12\tdiabetes\n", 1, "20-12"),
        ("T1\tDisorder 12 999\tdiabetes\n", 1, "end offset 999"),
        ("T1\tDisorder 12 20\tdiabetic\n", 1, "'diabetic' differs"),
        ("T1\tDisorder 12 20\tdiabetes\nT1\tDisorder 12 20\tdiabetes\n", 2, "'T1' used twice"),
        (
            "T1\tDisorder 12 20\tdiabetes\nN1\tReference T9 UMLS:C1\tx\n",
            2,
            "unknown annotation 'T9'",
        ),
        ("N1\tReference T1\tx\n", 1, "N line is not"),
    ],
)
def test_malformed(tmp_path: Path, ann: str, line: int, message: str) -> None:
    folder = _folder(tmp_path, ann)
    with pytest.raises(FormatError) as info:
        read_brat_document(folder / "doc1.txt")
    assert f"doc1.ann:{line}:" in str(info.value)
    assert message in str(info.value)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_write_refuses_a_repeated_id_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(FormatError, match="document id '1' is used twice"):
        write_brat(out, [Document("1", "a"), Document("2", "b"), Document("1", "c")])
    assert not out.exists()  # the folder it created is removed again


def test_write_refuses_existing_files_and_keeps_them(tmp_path: Path) -> None:
    (tmp_path / "x2.ann").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputError, match=r"x2\.ann already exists"):
        write_brat(tmp_path, [Document("x1", "a"), Document("x2", "b")])
    assert _files(tmp_path) == ["x2.ann"]
    assert (tmp_path / "x2.ann").read_text(encoding="utf-8") == "mine"
    write_brat(tmp_path, [Document("x1", "a")])  # other names go in beside it
    assert _files(tmp_path) == ["x1.ann", "x1.txt", "x2.ann"]
    with pytest.raises(OutputError, match=r"x1\.txt already exists"):  # nor its own earlier files
        write_brat(tmp_path, [Document("x1", "b")])
    assert (tmp_path / "x1.txt").read_text(encoding="utf-8") == "a"


def _bad_third(docs: list[Document]) -> Iterator[Document]:
    yield from docs
    raise FormatError("invalid JSON", "in.jsonl", 3)


@pytest.mark.parametrize(
    ("docs", "error"),
    [
        (_bad_third([Document("x1", "a"), Document("x2", "b")]), FormatError),
        ([Document("x1", "a"), Document("x2", "b"), Document("../evil", "c")], FormatError),
        ([Document("x1", "a"), Document("x2", "ab", (Link(0, 1, "b"),))], ValueError),
    ],
)
def test_a_failure_leaves_the_folder_as_it_was(tmp_path: Path, docs: Iterable[Document],
                                               error: type[Exception]) -> None:
    (tmp_path / "keep.txt").write_text("k", encoding="utf-8")
    with pytest.raises(error):
        write_brat(tmp_path, docs)
    assert _files(tmp_path) == ["keep.txt"]  # no x1/x2 files, no temporary folder


def test_convert_refuses_repeated_ids_and_existing_files(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "1", "text": "a"}\n', encoding="utf-8")
    out = tmp_path / "out"
    assert runner.invoke(app, ["convert", str(source), str(out), "--to", "brat"]).exit_code == 0
    result = runner.invoke(app, ["convert", str(source), str(out), "--to", "brat"])
    assert result.exit_code != 0 and "1.txt already exists" in str(result.exception)


@pytest.mark.parametrize("concept_id", ["חולה סוכרת", "a\tb", "a\nb", " ", "MESH:a b"])
def test_write_refuses_concept_ids_a_normalization_cannot_hold(tmp_path: Path,
                                                               concept_id: str) -> None:
    doc = Document("d1", "insulin", (Link(0, 7, "insulin", ("C1", concept_id)),))
    with pytest.raises(FormatError, match=f"document 'd1': concept id {re.escape(repr(concept_id))}"
                       " cannot be written as a BRAT normalization"):
        write_brat(tmp_path / "out", [doc])
    assert not (tmp_path / "out").exists()


def test_write_refuses_dictionary_names(tmp_path: Path) -> None:
    doc = Document("d1", "insulin", (Link(0, 7, "insulin", ("סוכרת",), id_kind="dictionary_name"),))
    with pytest.raises(FormatError, match="'סוכרת' is a dictionary name"):
        write_brat(tmp_path / "out", [doc])


def test_concept_ids_read_back_as_written(tmp_path: Path) -> None:
    ids = ("C0011849", "HP:0000001", "סוכרת", "D1;D2")
    doc = Document("d1", "insulin", (Link(0, 7, "insulin", ids, "Chemical"),))
    write_brat(tmp_path, [doc])
    assert read_brat(tmp_path) == [doc]


def test_a_byte_order_mark_counts_in_the_offsets_and_is_named(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "T1\tSign 1 6\tfever\n", "\ufefffever")
    assert read_brat(folder)[0].entities == (Link(1, 6, "fever", (), "Sign"),)
    (folder / "doc1.ann").write_text("T1\tSign 0 5\tfever\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"doc1.ann:1: mention 'fever' differs .* the text "
                                          r"starts with a byte-order mark \(U\+FEFF\)"):
        read_brat(folder)


def test_a_file_given_as_the_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / "notes.pubtator").write_text("1|t|a\n1|a|\n", encoding="utf-8")
    with pytest.raises(FormatError, match="notes.pubtator: a file, not a BRAT folder"):
        read_documents(tmp_path / "notes.pubtator", "brat")


def test_upper_case_suffixes_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.TXT").write_text("fever now", encoding="utf-8")
    (tmp_path / "a.Ann").write_text("T1\tDisease 0 5\tfever\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("cough", encoding="utf-8")
    (tmp_path / "b.ANN").write_text("T1\tDisease 0 5\tcough\n", encoding="utf-8")
    docs = read_annotated_documents(tmp_path)
    assert [(d.id, [e.text for e in d.entities]) for d in docs] == [("a", ["fever"]),
                                                                   ("b", ["cough"])]


@pytest.mark.parametrize("suffix", ["txt", "ann"])
def test_suffixes_differing_only_by_case_are_refused(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "a.txt").write_text("fever", encoding="utf-8")
    (tmp_path / "a.ann").write_text("T1\tDisease 0 5\tfever\n", encoding="utf-8")
    (tmp_path / f"a.{suffix.upper()}").write_text("fever", encoding="utf-8")
    with pytest.raises(FormatError, match=rf"a\.{suffix.upper()} and a\.{suffix}.*differ only "
                                          "by case"):
        read_brat(tmp_path)
