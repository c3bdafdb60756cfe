"""Tests of format sniffing in read_documents / write_documents."""

from __future__ import annotations

import gzip
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from xlnel.errors import FormatError
from xlnel.evaluation.files import evaluate_files
from xlnel.io import guess_format, read_documents, write_documents
from xlnel.io.documents import format_documents, read_annotated_documents
from xlnel.types import Document, Link

DOCS = [
    Document("d1", "Insulin for diabetes.", (Link(12, 20, "diabetes", ("C0011849",), "Disorder"),)),
    Document("d2", "No mentions here.", ()),
]


@pytest.mark.parametrize(
    "name", ["c.jsonl", "c.json", "c.jsonl.gz", "c.pubtator", "c.pubtator.gz", "c.txt", "c.xml",
             "c.bioc.xml.gz", "c.bioc", "brat"]
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
    assert guess_format(tmp_path / "x.BioC.XML", for_writing=True) == "bioc"
    plain = tmp_path / "notes.txt"
    plain.write_text("just text\n", encoding="utf-8")
    assert guess_format(plain) == "text"
    (tmp_path / "notes.csv").write_text("a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot tell the corpus format"):
        guess_format(tmp_path / "notes.csv")
    with pytest.raises(FileNotFoundError, match="absent.jsonl"):
        read_documents(tmp_path / "absent.jsonl")


@pytest.mark.parametrize(("name", "doc_id"), [
    ("note.txt", "note"), ("note.txt.gz", "note"), ("visit.2024.TXT", "visit.2024"),
])
def test_plain_text_file_is_one_document(tmp_path: Path, name: str, doc_id: str) -> None:
    text = "\ufeffFever since Monday.\r\n\r\nNo rash.\n"  # kept as it is: offsets count all
    path = tmp_path / name
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    assert read_documents(path) == [Document(doc_id, text)]
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert read_documents(empty) == [Document("empty", "")]
    (tmp_path / "latin1.txt").write_bytes("cafe\nfi\xe8vre".encode("latin-1"))
    with pytest.raises(FormatError, match=r"latin1\.txt:2: not valid UTF-8"):
        read_documents(tmp_path / "latin1.txt")


def test_plain_text_is_read_only_and_not_a_gold_corpus(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("Fever.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="text is a format for reading plain texts"):
        write_documents(tmp_path / "out.data", DOCS, format="text")
    with pytest.raises(ValueError, match=r"gold .*notes.txt is a plain-text file"):
        read_annotated_documents(plain, "gold")
    with pytest.raises(ValueError, match="plain-text file"):
        evaluate_files(plain, plain)
    write_documents(tmp_path / "c.txt", DOCS)  # a .txt written is PubTator, and reads back
    assert read_annotated_documents(tmp_path / "c.txt")[0].entities == DOCS[0].entities


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


class _Recorder(io.StringIO):
    """A text stream recording what had been written at each flush."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[str] = []

    def flush(self) -> None:
        self.flushed.append(self.getvalue())


@pytest.mark.parametrize("fmt, name", [("jsonl", "c.jsonl"), ("pubtator", "c.pubtator"),
                                       ("bioc", "c.xml"), ("biocjson", "c.bioc.json")])
def test_a_stream_gets_the_bytes_of_the_file(tmp_path: Path, fmt: str, name: str) -> None:
    write_documents(tmp_path / name, DOCS)
    assert "".join(format_documents(DOCS, fmt)) == (tmp_path / name).read_text(encoding="utf-8")
    stream = _Recorder()
    write_documents(stream, DOCS, fmt)
    assert stream.getvalue() == (tmp_path / name).read_text(encoding="utf-8")
    # flushed once each document is written whole, then at the end
    first = "".join(format_documents(DOCS[:1], fmt))
    head = first if fmt in ("jsonl", "pubtator") else first[:first.index(DOCS[0].text)]
    assert stream.flushed[0].startswith(head) and DOCS[1].id not in stream.flushed[0]
    assert stream.flushed[-1] == stream.getvalue()


def test_a_stream_is_written_a_document_at_a_time() -> None:
    def docs() -> Iterator[Document]:
        yield DOCS[0]
        raise RuntimeError("the second document never comes")

    stream = io.StringIO()
    with pytest.raises(RuntimeError):
        write_documents(stream, docs(), "pubtator")
    assert stream.getvalue().startswith("d1|t|Insulin for diabetes.\nd1|a|\nd1\t12\t20\t")
    stream = io.StringIO()
    write_documents(stream, DOCS)  # a stream without a format is JSONL
    assert [json.loads(line)["id"] for line in stream.getvalue().splitlines()] == ["d1", "d2"]


@pytest.mark.parametrize("fmt, message", [("brat", r"brat is not written as one text.*folder"),
                                          ("text", "text is not written as one text"),
                                          ("xml", "unknown corpus format 'xml'")])
def test_formats_a_stream_cannot_hold(fmt: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        format_documents(DOCS, fmt)
    with pytest.raises(ValueError, match=message):
        write_documents(io.StringIO(), DOCS, fmt)


# One document "fever and cough" whose one mention is given by ``{start}``, ``{end}`` and
# ``{mention}`` in each format, on the file's line ``LINE``.
FAULT_FILES = {
    "c.jsonl": ('{{"id": "1", "text": "fever and cough", "entities": [{{"start": {start}, '
                '"end": {end}, "text": "{mention}"}}]}}\n', 1),
    "c.pubtator": ("1|t|fever and cough\n1|a|\n1\t{start}\t{end}\t{mention}\tSign\tD1\n", 3),
    "c.xml": ("<collection><document><id>1</id><passage><offset>0</offset>\n"
              "<text>fever and cough</text>\n<annotation id='0'>"
              "<location offset='{start}' length='{length}'/><text>{mention}</text></annotation>"
              "</passage></document></collection>", 3),
    "c.bioc.json": ('{{"documents": [\n{{"id": "1", "passages": [{{"offset": 0, '
                    '"text": "fever and cough", "annotations": [{{"id": "0", "text": '
                    '"{mention}", "locations": [{{"offset": {start}, "length": {length}}}]}}]}}]}}'
                    "\n]}}", 2),
    "brat": ("T1\tSign {start} {end}\t{mention}\n", 1),
}


def _fault_file(tmp_path: Path, name: str, start: int, end: int, mention: str) -> tuple[Path, str]:
    template, line = FAULT_FILES[name]
    content = template.format(start=start, end=end, length=end - start, mention=mention)
    path = tmp_path / name
    if name == "brat":
        path.mkdir()
        (path / "1.txt").write_text("fever and cough", encoding="utf-8")
        (path / "1.ann").write_bytes(content.encode("utf-8"))
        return path, f"1.ann:{line}:"
    path.write_bytes(content.encode("utf-8"))
    return path, f"{name}:{line}:"


@pytest.mark.parametrize("name", sorted(FAULT_FILES))
def test_every_reader_names_file_line_and_value_of_a_bad_mention(tmp_path: Path,
                                                                 name: str) -> None:
    path, where = _fault_file(tmp_path, name, 10, 99, "cough")
    with pytest.raises(FormatError, match=rf"{re.escape(where)} .*\b99\b"):
        read_documents(path)
    (tmp_path / "mismatch").mkdir()
    path, where = _fault_file(tmp_path / "mismatch", name, 10, 15, "couch")
    with pytest.raises(FormatError, match=rf"{re.escape(where)} .*'couch' differs from the text"
                                          r" at .*'cough'"):
        read_documents(path)


@pytest.mark.parametrize("name", sorted(FAULT_FILES))
def test_every_reader_takes_crlf_line_ends_and_a_byte_order_mark(tmp_path: Path,
                                                                 name: str) -> None:
    path, _ = _fault_file(tmp_path, name, 10, 15, "cough")
    target = path / "1.ann" if name == "brat" else path
    target.write_bytes(b"\xef\xbb\xbf" + target.read_bytes().replace(b"\n", b"\r\n"))
    (doc,) = read_documents(path)
    assert (doc.id, doc.text, [(e.start, e.end, e.text) for e in doc.entities]) == (
        "1", "fever and cough", [(10, 15, "cough")])


@pytest.mark.parametrize("name", ["c.jsonl", "c.pubtator", "c.xml", "c.bioc.json", "brat"])
def test_no_writer_repeats_a_document_id(tmp_path: Path, name: str) -> None:
    # every reader refuses a file that repeats an id, so no writer makes one
    docs = [DOCS[0], DOCS[1], Document("d1", "Another text.")]
    with pytest.raises(FormatError, match="document id 'd1' is used"):
        write_documents(tmp_path / name, docs)
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("fmt", ["jsonl", "pubtator", "bioc", "biocjson"])
def test_no_stream_repeats_a_document_id(fmt: str) -> None:
    with pytest.raises(FormatError, match="document id 'd1' is used by documents 1 and 2"):
        "".join(format_documents([DOCS[0], DOCS[0]], fmt))


@pytest.mark.parametrize("name", ["a.jsonl", "a.pubtator", "a.xml", "a.bioc.json", "brat"])
@pytest.mark.parametrize(("doc", "where"), [
    (Document("d1", "ab\ud800c", (Link(0, 1, "a"),)), r"its text holds .* at character 2"),
    (Document("d1", "abc", (Link(0, 1, "a", type="T\udc00"),)),
     r"entity 0 \(0-1\) \['type'\] holds .* at character 1"),
    (Document("d1", "abc", metadata={"note": "\ud800"}), r"its metadata \['note'\] holds"),
])
def test_writers_refuse_lone_surrogates_naming_the_document(tmp_path: Path, name: str,
                                                            doc: Document, where: str) -> None:
    # a lone surrogate cannot be encoded as UTF-8: the writer names where it is, writes nothing
    with pytest.raises(ValueError, match=rf"document 'd1': {where}.*not Unicode text"):
        write_documents(tmp_path / name, [Document("d0", "fine"), doc])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["a.jsonl", "a.pubtator", "a.xml", "a.bioc.json", "brat"])
@pytest.mark.parametrize(("link", "what"), [
    (Link(0, 1, "a", score=float("nan")), "score nan"),
    (Link(0, 1, "a", score=float("-inf")), "score -inf"),
    (Link(0, 1, "a", ("C1",), score=0.5, alternatives=(("C2", float("inf"), 0.5),)),
     "alternative 'C2' score inf"),
])
def test_writers_refuse_non_finite_scores_naming_the_mention(tmp_path: Path, name: str,
                                                             link: Link, what: str) -> None:
    # no format holds NaN or an infinity faithfully (BioC would drop it, JSON has neither)
    with pytest.raises(ValueError, match=rf"document '1': mention 'a' at 0-1: {what} is not a "
                                         "finite number"):
        write_documents(tmp_path / name, [Document("1", "ab", (link,))])
    assert list(tmp_path.iterdir()) == []


def test_bioc_refuses_non_finite_alternatives_on_reading(tmp_path: Path) -> None:
    path = tmp_path / "a.xml"
    write_documents(path, [Document("1", "ab", (Link(0, 1, "a", ("C1",), score=0.5,
                                                     alternatives=(("C2", 0.25, 0.5),)),))])
    path.write_text(path.read_text(encoding="utf-8").replace("0.25", "NaN"), encoding="utf-8")
    with pytest.raises(FormatError, match="finite number score"):
        read_documents(path)
