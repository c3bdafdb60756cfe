"""Tests of the PubTator reader and writer."""

from __future__ import annotations

import gzip
import logging
import re
from pathlib import Path

import pytest

from xlnel.errors import FormatError
from xlnel.io import iter_pubtator, read_pubtator, write_pubtator
from xlnel.io.concept_ids import parse_concept_ids
from xlnel.types import Document, Link

TITLE = "Lithium carbonate toxicity in a newborn infant."
ABSTRACT = "A newborn with tricuspid regurgitation and atrial flutter."
SAMPLE = (
    f"6794356|t|{TITLE}\n"
    f"6794356|a|{ABSTRACT}\n"
    "6794356\t0\t17\tLithium carbonate\tChemical\tD016651\n"
    "6794356\t18\t26\ttoxicity\tDisease\tD064420\n"
    "6794356\t63\t86\ttricuspid regurgitation\tDisease\t-1\n"
    "6794356\t91\t105\tatrial flutter\tDisease\tD001282|D006331\tatrial|flutter\n"
    "6794356\tCID\tD016651\tD064420\n"
    "\n"
    "25763772|t|DCTN4 as a modifier\n"
    "25763772|a|\n"
    "25763772\t11\t19\tmodifier\tT103\tUMLS:C4308010\n"
    "25763772\t0\t5\tDCTN4\tT103\tUMLS:C1|MESH:D2\n"
)


def _write(tmp_path: Path, content: str, name: str = "corpus.pubtator") -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def test_read_text_ids_and_relations(tmp_path: Path) -> None:
    docs = read_pubtator(_write(tmp_path, SAMPLE))
    assert [d.id for d in docs] == ["6794356", "25763772"]
    first = docs[0]
    assert first.text == f"{TITLE} {ABSTRACT}"
    assert first.entities[0] == Link(0, 17, "Lithium carbonate", ("D016651",), "Chemical")
    assert first.entities[2].concept_ids == ()
    assert first.entities[3].concept_ids == ("D001282", "D006331")
    assert first.metadata["relations"] == [("CID", "D016651", "D064420")]
    assert first.metadata["annotation_extras"] == [(91, 105, "atrial|flutter")]
    for link in first.entities:
        assert first.text[link.start : link.end] == link.text


def test_prefixes_stripped_and_entities_sorted(tmp_path: Path) -> None:
    doc = read_pubtator(_write(tmp_path, SAMPLE))[1]
    assert doc.text == "DCTN4 as a modifier"  # no space before an empty abstract
    assert [(e.start, e.concept_ids) for e in doc.entities] == [
        (0, ("C1", "D2")),
        (11, ("C4308010",)),
    ]


def test_iter_pubtator_streams(tmp_path: Path) -> None:
    iterator = iter_pubtator(_write(tmp_path, SAMPLE))
    assert next(iterator).id == "6794356"
    assert next(iterator).id == "25763772"
    with pytest.raises(StopIteration):
        next(iterator)


def test_no_trailing_blank_line_and_several_blank_lines(tmp_path: Path) -> None:
    content = SAMPLE.replace("\n\n", "\n\n\n\n").rstrip("\n")
    assert len(read_pubtator(_write(tmp_path, content))) == 2


def test_gzip_input(tmp_path: Path) -> None:
    path = tmp_path / "corpus.pubtator.gz"
    path.write_bytes(gzip.compress(SAMPLE.encode("utf-8")))
    assert read_pubtator(path) == read_pubtator(_write(tmp_path, SAMPLE))


def test_round_trip(tmp_path: Path) -> None:
    source = _write(tmp_path, SAMPLE)
    docs = read_pubtator(source)
    out = tmp_path / "out.pubtator"
    write_pubtator(out, docs)
    assert read_pubtator(out) == docs
    # Prefixes are dropped, entities sorted, relations and extra fields kept.
    expected = (
        SAMPLE.replace("UMLS:", "")
        .replace("MESH:", "")
        .replace(
            "25763772\t11\t19\tmodifier\tT103\tC4308010\n25763772\t0\t5\tDCTN4\tT103\tC1|D2\n",
            "25763772\t0\t5\tDCTN4\tT103\tC1|D2\n25763772\t11\t19\tmodifier\tT103\tC4308010\n",
        )
    )
    assert out.read_text(encoding="utf-8") == expected + "\n"


def test_write_document_from_another_format(tmp_path: Path) -> None:
    text = "line one\nline\ttwo"
    doc = Document("p1", text, (Link(9, 17, "line\ttwo", ("C1", "C2"), "Disorder"),))
    out = tmp_path / "out.pubtator"
    write_pubtator(out, [doc])
    back = read_pubtator(out)[0]
    assert back.text == "line one line two"
    assert back.entities == (Link(9, 17, "line two", ("C1", "C2"), "Disorder"),)


@pytest.mark.parametrize(
    ("text", "title", "lines"),
    [
        ("She had seizures.", None, "p|t|She had seizures.\np|a|\n"),
        ("Title. Abstract.", "Title.", "p|t|Title.\np|a|Abstract.\n"),
        ("Title. ", "Title.", "p|t|Title. \np|a|\n"),  # read so from a BioC title passage
        ("", None, "p|t|\np|a|\n"),
    ],
)
def test_written_text_reads_back_exactly(tmp_path: Path, text: str, title: str | None,
                                         lines: str) -> None:
    out = tmp_path / "out.pubtator"
    write_pubtator(out, [Document("p", text, (), {} if title is None else {"title": title})])
    assert out.read_text(encoding="utf-8") == lines + "\n"
    assert read_pubtator(out)[0].text == text


def test_write_rejects_inconsistent_entity(tmp_path: Path) -> None:
    doc = Document("p1", "abc", (Link(0, 2, "xy"),))
    with pytest.raises(ValueError, match="'xy'"):
        write_pubtator(tmp_path / "out.pubtator", [doc])
    assert not (tmp_path / "out.pubtator").exists()


HEAD = "1|t|Title here\n1|a|Abstract text.\n"


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        (HEAD + "1\tx\t5\tTitle\tT\t-1\n", 3, "'x' is not an integer"),
        (HEAD + "1\t0\t5.5\tTitle\tT\t-1\n", 3, "'5.5' is not an integer"),
        (HEAD + "1\t\u0660\t5\tTitle\tT\t-1\n", 3, "'\u0660' is not an integer"),
        (HEAD + "1\t0_0\t5\tTitle\tT\t-1\n", 3, "'0_0' is not an integer"),
        (HEAD + "1\t+0\t5\tTitle\tT\t-1\n", 3, "'+0' is not an integer"),
        (HEAD + "1\t 0\t5\tTitle\tT\t-1\n", 3, "' 0' is not an integer"),
        (HEAD + "1\t0\t5 \tTitle\tT\t-1\n", 3, "'5 ' is not an integer"),
        (HEAD + "1\t5\t5\tTitle\tT\t-1\n", 3, "5-5"),
        (HEAD + "1\t20\t99\ttext.\tT\t-1\n", 3, "end offset 99"),
        (HEAD + "1\t0\t5\tTitles\tT\t-1\n", 3, "'Titles' differs"),
        (HEAD + "2\t0\t5\tTitle\tT\t-1\n", 3, "'2' inside document '1'"),
        ("1|a|Abstract\n", 1, "without a |t| line"),
        ("1|t|Title\n\n", 1, "no |a| line"),
        ("1|t|Title\n2|t|Other\n2|a|x\n", 1, "no |a| line"),
        ("1|t|Title\n2|a|Abstract\n", 2, "follows the |t| line of '1'"),
        ("1|t|Title\n1\t0\t5\tTitle\tT\t-1\n", 2, "before the |a| line"),
        ("1\t0\t5\tTitle\tT\t-1\n", 1, "annotation line before any document"),
        (HEAD + "\n1\t0\t5\tTitle\tT\t-1\n", 4, "annotation line after the blank line that "
         "ends document '1' (blank lines separate documents"),
        (HEAD + "\n2|t|x\n2|a|y\n\n" + HEAD, 7, "document id '1' already used on line 1"),
        (HEAD + HEAD, 3, "document id '1' already used on line 1"),
        (HEAD + "garbage line\n", 3, "matches no PubTator line kind"),
        (HEAD + "1\t0\t5\n", 3, "matches no PubTator line kind"),
        (HEAD + "1\t0\t5\tTitle\n", 3, "annotation line has no type column"),
    ],
)
def test_malformed(tmp_path: Path, content: str, line: int, message: str) -> None:
    path = _write(tmp_path, content, "bad.pubtator")
    with pytest.raises(FormatError) as info:
        read_pubtator(path)
    assert f"bad.pubtator:{line}:" in str(info.value)
    assert message in str(info.value)
    assert info.value.line == line


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.pubtator"):
        read_pubtator(tmp_path / "nope.pubtator")


def test_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.pubtator"
    path.write_bytes(HEAD.encode() + b"\xff\xfe\n")
    with pytest.raises(FormatError, match="bad.pubtator:3: not valid UTF-8"):
        read_pubtator(path)


def test_semicolon_joined_id_stays_one_id_with_every_prefix_stripped() -> None:
    assert parse_concept_ids("MESH:D1;MESH:D2") == ("D1;D2",)
    assert parse_concept_ids("MESH:D1;MESH:D2|UMLS:C3") == ("D1;D2", "C3")


@pytest.mark.parametrize(
    ("relations", "message"),
    [
        ("abc", "relations 'abc' are not a list"),
        ({"CID": ["D1", "D2"]}, "are not a list"),
        ([{"type": "CID", "arg1": "D1", "arg2": "D2"}], "is not a list of three strings"),
        (["CID"], "relation 'CID' is not a list of three strings"),
        ([["CID", "D1"]], "is not a list of three strings"),
        ([["CID", "D1", "D2", "D3"]], "is not a list of three strings"),
        ([["CID", "D1", 2]], "is not a list of three strings"),
        ([["CID", "D1\tx", "D2"]], "holds a tab or line break"),
        ([["CID", "D1", "D2\n"]], "holds a tab or line break"),
        ([["1", "2", "D2"]], "would read back as a mention"),
    ],
)
def test_write_refuses_relations_of_another_shape(tmp_path: Path, relations: object,
                                                   message: str) -> None:
    out = tmp_path / "out.pubtator"
    with pytest.raises(FormatError, match="document 'p1': ") as info:
        write_pubtator(out, [Document("p1", "T. A.", (), {"relations": relations})])
    assert message in str(info.value)
    assert not out.exists()


def test_relations_read_from_jsonl_written_back(tmp_path: Path) -> None:
    doc = Document("p1", "T. A.", (), {"title": "T.", "relations": [["CID", "D1", "D2"]]})
    out = tmp_path / "out.pubtator"
    write_pubtator(out, [doc])
    assert out.read_text(encoding="utf-8") == "p1|t|T.\np1|a|A.\np1\tCID\tD1\tD2\n\n"
    assert read_pubtator(out)[0].metadata["relations"] == [("CID", "D1", "D2")]


COMPOSITE = (
    "1|t|Artery and sinus occlusion.\n"
    "1|a|Ab.\n"
    "1\t0\t26\tArtery and sinus occlusion\tDisease\tD002544|-1\tartery occlusion|sinus occlusion\n"
    "1\t11\t16\tsinus\tAnatomy\tMESH:D1|D1\n"
    "1\t17\t26\tocclusion\tDisease\t-\n"
    "\n"
)


def test_id_fields_the_ids_alone_would_not_give_back_are_written_back(tmp_path: Path) -> None:
    docs = read_pubtator(_write(tmp_path, COMPOSITE))
    # evaluation sees the concept ids only: -1 (no concept) is not one
    assert [link.concept_ids for link in docs[0].entities] == [("D002544",), ("D1",), ()]
    assert docs[0].metadata["concept_id_fields"] == [
        (0, 26, "D002544|-1"), (11, 16, "D1|D1"), (17, 26, "-")]
    out = tmp_path / "out.pubtator"
    write_pubtator(out, docs)
    assert out.read_text(encoding="utf-8") == COMPOSITE.replace("MESH:", "")
    assert read_pubtator(out) == docs


def test_kept_id_field_yields_to_new_concept_ids(tmp_path: Path) -> None:
    doc = read_pubtator(_write(tmp_path, COMPOSITE))[0]
    relinked = [Link(e.start, e.end, e.text, ("C9",), e.type) for e in doc.entities]
    out = tmp_path / "out.pubtator"
    write_pubtator(out, [Document(doc.id, doc.text, tuple(relinked), doc.metadata)])
    assert [line.split("\t")[5] for line in out.read_text().splitlines()[2:5]] == ["C9"] * 3


def test_concept_ids_with_spaces_read_back(tmp_path: Path) -> None:
    text = "חולה סוכרת"
    doc = Document("d", text, (Link(0, 10, text, ("חולה סוכרת", "HP:0000001")),))
    out = tmp_path / "out.pubtator"
    write_pubtator(out, [doc])
    assert read_pubtator(out)[0].entities == doc.entities


@pytest.mark.parametrize("concept_id", ["a\tb", "a\nb", "a\rb", "-1", "-", " ", "MESH:-1"])
def test_write_refuses_concept_ids_that_would_not_read_back(tmp_path: Path,
                                                            concept_id: str) -> None:
    out = tmp_path / "out.pubtator"
    doc = Document("d1", "insulin", (Link(0, 7, "insulin", ("C1", concept_id)),))
    with pytest.raises(FormatError,
                       match=f"document 'd1': concept id {re.escape(repr(concept_id))}"):
        write_pubtator(out, [doc])
    assert not out.exists()


def test_tabs_in_the_text_are_read_in_the_mention_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "1|t|atrial\tflutter\n1|a|and\tfever\n"
                  "1\t0\t14\tatrial\tflutter\tDisease\tD001282\n"
                  "1\t15\t24\tand\tfever\tDisease\t-1\n\n")
    (doc,) = read_pubtator(path)
    assert doc.entities == (Link(0, 14, "atrial\tflutter", ("D001282",), "Disease"),
                            Link(15, 24, "and\tfever", (), "Disease"))
    write_pubtator(tmp_path / "out.pubtator", [doc])  # tabs written as spaces, offsets kept
    assert [(d.text, [e.start for e in d.entities]) for d in
            read_pubtator(tmp_path / "out.pubtator")] == [("atrial flutter and fever", [0, 15])]
    with pytest.raises(FormatError, match=r":3: annotation line has no type column after the "
                                          r"mention 'atrial\\tflutter'"):
        read_pubtator(_write(tmp_path, "1|t|atrial\tflutter\n1|a|\n1\t0\t14\tatrial\tflutter\n"))


def test_crlf_line_ends_and_a_byte_order_mark_read_as_plain_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.pubtator"
    path.write_bytes("\ufeff1|t|Fever.\r\n1|a|Cough.\r\n1\t7\t12\tCough\tSign\tD1\r\n\r\n"
                     .encode("utf-8"))
    (doc,) = read_pubtator(path)
    assert (doc.id, doc.text, doc.entities) == (
        "1", "Fever. Cough.", (Link(7, 12, "Cough", ("D1",), "Sign"),))


def test_line_ends_of_cr_alone_are_named(tmp_path: Path) -> None:
    path = tmp_path / "c.pubtator"
    path.write_bytes(b"1|t|Fever.\r1|a|Cough.\r1\t7\t12\tCough\tSign\tD1\r")
    with pytest.raises(FormatError, match=":1: document '1' has a |t| line but no |a| line; its "
                                          "line holds carriage returns: lines must end with LF"):
        read_pubtator(path)


def test_an_empty_file_is_no_document_with_a_warning(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    for content in ("", "\n \n"):
        with caplog.at_level(logging.WARNING, logger="xlnel.io.pubtator"):
            assert read_pubtator(_write(tmp_path, content)) == []
        assert "corpus.pubtator holds no document: it is empty or blank" in caplog.text
        caplog.clear()
