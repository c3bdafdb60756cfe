"""Tests of the BioC JSON reader and writer (PubTator3's ``biocjson`` export)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from xlnel.errors import FormatError
from xlnel.io import (
    guess_format,
    read_bioc,
    read_bioc_json,
    read_documents,
    read_pubtator,
    write_bioc,
    write_bioc_json,
    write_documents,
)
from xlnel.io.documents import iter_documents
from xlnel.outputs import corpus_output_format
from xlnel.types import Document, Link

TITLE = "Lithium toxicity in a newborn."
ABSTRACT = "Ovarian and breast cancer."


def _annotation(ann_id: str, start: int, text: str, **infons: Any) -> dict[str, Any]:
    return {"id": ann_id, "infons": infons, "text": text,
            "locations": [{"offset": start, "length": len(text)}]}


# PubTator3's export: extra document fields, infons that are not strings, ids in ``identifier``.
PUBTATOR3_DOC: dict[str, Any] = {
    "_id": "6794356|None", "id": "6794356", "pmid": 6794356, "journal": "J Pediatr",
    "authors": ["Doe J"], "infons": {},
    "passages": [
        {"infons": {"type": "title", "section_type": "TITLE"}, "offset": 0, "text": TITLE,
         "sentences": [], "relations": [],
         "annotations": [_annotation("1", 0, "Lithium", identifier="MESH:D008094",
                                     type="Chemical", database="ncbi_mesh", valid=True,
                                     normalized=[8094])]},
        {"infons": {"type": "abstract"}, "offset": len(TITLE) + 1, "text": ABSTRACT,
         "sentences": [], "relations": [],
         "annotations": [
             _annotation("2", len(TITLE) + 1, "Ovarian and breast cancer", type="Disease",
                         identifier="MESH:D010051|MESH:D001943",
                         CompositeRole="CompositeMention"),
             {"id": "3", "text": "Ovarian cancer",
              "infons": {"type": "Disease", "identifier": "D010051",
                         "CompositeRole": "IndividualMention"},
              "locations": [{"offset": len(TITLE) + 1, "length": 7},
                            {"offset": len(TITLE) + 20, "length": 6}]}]}],
    "relations": [{"id": "R1", "infons": {"type": "Association"},
                   "nodes": [{"refid": "1", "role": "Chemical"}]}]}
SENTENCES_DOC: dict[str, Any] = {
    "id": "2", "infons": {"year": "2001"},
    "passages": [{"offset": 0, "infons": {}, "text": "", "annotations": [], "sentences": [
        {"offset": 0, "text": "Insulin.", "infons": {}, "annotations": []},
        {"offset": 9, "text": "Fever.", "infons": {},
         "annotations": [_annotation("T1", 9, "Fever", identifier="MESH:D005334",
                                     type="Disease")]}]}]}
EXPECTED = [
    Document("6794356", f"{TITLE} {ABSTRACT}", (
        Link(0, 7, "Lithium", ("D008094",), "Chemical"),
        Link(31, 56, "Ovarian and breast cancer", ("D010051", "D001943"), "Disease"))),
    Document("2", "Insulin. Fever.", (Link(9, 14, "Fever", ("D005334",), "Disease"),)),
]


def _write(tmp_path: Path, value: Any, name: str = "corpus.json", *, lines: bool = False
           ) -> Path:
    path = tmp_path / name
    if lines:
        path.write_text("".join(json.dumps(item) + "\n" for item in value), encoding="utf-8")
    else:
        path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


def _plain(docs: list[Document]) -> list[tuple[str, str, tuple[Link, ...]]]:
    return [(d.id, d.text, d.entities) for d in docs]


@pytest.mark.parametrize("shape", ["pubtator3", "collection", "list", "lines"])
def test_every_shape_of_file_reads_the_same_documents(tmp_path: Path, shape: str) -> None:
    docs = [PUBTATOR3_DOC, SENTENCES_DOC]
    value: Any = {
        "pubtator3": {"PubTator3": docs},
        "collection": {"source": "PubTator", "date": "2025", "key": "BioC.key", "infons": {},
                       "documents": docs},
        "list": docs, "lines": docs}[shape]
    path = _write(tmp_path, value, lines=shape == "lines")
    assert guess_format(path) == "biocjson"
    assert _plain(read_documents(path)) == _plain(EXPECTED)


def test_metadata_keeps_passages_fields_infons_and_relations(tmp_path: Path) -> None:
    first, second = read_bioc_json(_write(tmp_path, {"PubTator3": [PUBTATOR3_DOC,
                                                                   SENTENCES_DOC]}))
    assert first.metadata["title"] == TITLE
    assert first.metadata["bioc_fields"] == {"_id": "6794356|None", "pmid": 6794356,
                                             "journal": "J Pediatr", "authors": ["Doe J"]}
    assert first.metadata["bioc_passages"][1] == {"offset": 31, "length": len(ABSTRACT),
                                                  "infons": {"type": "abstract"}}
    assert first.metadata["bioc_relations"] == [
        {"id": "R1", "infons": {"type": "Association"}, "nodes": [["1", "Chemical"]]}]
    assert second.metadata["bioc_infons"] == {"year": "2001"}


def test_a_single_document_and_a_gzipped_file(tmp_path: Path) -> None:
    path = tmp_path / "doc.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(SENTENCES_DOC, handle)
    assert _plain(read_documents(path)) == _plain(EXPECTED[1:])


def test_write_then_read_keeps_everything(tmp_path: Path) -> None:
    docs = read_bioc_json(_write(tmp_path, {"PubTator3": [PUBTATOR3_DOC, SENTENCES_DOC]}))
    predicted = Link(0, 7, "Lithium", ("D008094",), "Chemical", 0.75, "concept", "Lithium",
                     None, "lithium", "kb", (("D016651", 0.5, 0.8),))
    docs[0] = Document(docs[0].id, docs[0].text, (*docs[0].entities, predicted),
                       docs[0].metadata)
    out = tmp_path / "out.bioc.json"
    write_documents(out, docs)
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [d["id"] for d in written["documents"]] == ["6794356", "2"]
    assert written["documents"][0]["pmid"] == 6794356
    back = read_documents(out)
    assert [(d.id, d.text, set(d.entities), d.metadata) for d in back] == [
        (d.id, d.text, set(d.entities), d.metadata) for d in docs]
    # BioC XML holds the same
    write_bioc(tmp_path / "out.xml", back)
    assert _plain(read_bioc(tmp_path / "out.xml")) == _plain(back)


def test_pubtator_round_trip_is_exact(tmp_path: Path) -> None:
    """PubTator's seventh field (BC5CDR's names of composite parts), relations and an id field
    with a part of no concept (``D001943|-1``) survive."""
    text = ("1|t|Ovarian and breast cancer.\n1|a|After lithium.\n"
            "1\t0\t25\tOvarian and breast cancer\tDisease\tD010051|D001943\t"
            "Ovarian cancer|breast cancer\n"
            "1\t12\t25\tbreast cancer\tDisease\tD001943|-1\tbreast cancer|cancer\n"
            "1\t33\t40\tlithium\tChemical\tD008094\n"
            "1\tCID\tD008094\tD010051\n\n")
    (tmp_path / "c.pubtator").write_text(text, encoding="utf-8")
    docs = read_pubtator(tmp_path / "c.pubtator")
    for name in ("c.bioc.json", "c.xml", "c.jsonl"):
        write_documents(tmp_path / name, docs)
        write_documents(tmp_path / "back.pubtator", read_documents(tmp_path / name))
        assert (tmp_path / "back.pubtator").read_text(encoding="utf-8") == text, name


def test_formats_are_told_by_name_and_content(tmp_path: Path) -> None:
    jsonl = tmp_path / "plain.json"
    write_documents(jsonl, EXPECTED)  # .json is written as JSONL, as before
    assert guess_format(jsonl) == "jsonl"
    assert _plain(read_documents(jsonl)) == _plain(EXPECTED)
    assert guess_format(tmp_path / "x.bioc.json.gz", for_writing=True) == "biocjson"
    assert guess_format(tmp_path / "x.biocjson", for_writing=True) == "biocjson"
    assert corpus_output_format(tmp_path / "pred.bioc.json") == "biocjson"
    assert corpus_output_format(tmp_path / "pred.json") == "jsonl"
    # BioC JSON given to the JSONL reader says what it is
    with pytest.raises(FormatError, match="looks like BioC JSON"):
        list(iter_documents(_write(tmp_path, [SENTENCES_DOC], lines=True), "jsonl"))
    with pytest.raises(FormatError, match="several lines is not JSON Lines"):
        list(iter_documents(_write(tmp_path, SENTENCES_DOC), "jsonl"))
    with pytest.raises(FormatError, match="looks like an xlnel JSONL document"):
        list(iter_documents(jsonl, "biocjson"))


_DOC = '{"id": "a", "passages": [{"offset": 0, "text": "fever"}]}'


@pytest.mark.parametrize(("content", "line", "message"), [
    ('{"documents": [\n' + _DOC + ',\n{"id": "b", "passages": [{"text": "x"}]}]}', 3,
     'passage without an "offset"'),
    ('{"documents": [\n' + _DOC + ',\n' + _DOC + "]}", 3, "document id 'a' already used on "
     "line 2"),
    ('[{"passages": []}]', 1, 'document without an "id"'),
    ('[{"id": ["a"], "passages": []}]', 1, "document id \\['a'\\] must be a string"),
    ('[{"id": "a", "passages": {"offset": 0}}]', 1, "passages of document 'a' must be a list, "
     "not an object"),
    ('[{"id": "a", "passages": [{"offset": -1, "text": "x"}]}]', 1,
     "offset of a passage '-1' is not a non-negative integer"),
    ('[{"id": "a", "passages": [{"offset": true, "text": "x"}]}]', 1, "'true' is not"),
    ('[{"id": "a", "passages": [{"offset": 0, "text": 3}]}]', 1, "must be a string, not a "
     "number"),
    ('[{"id": "a", "passages": [{"offset": 0, "text": "fever", "annotations": [{"id": "1"}]}]}]',
     1, 'annotation \'1\' has no "locations"'),
    ('[{"id": "a", "passages": [{"offset": 0, "text": "fever", "annotations": [{"id": "1", '
     '"locations": [{"offset": 2, "length": 9}]}]}]}]', 1, "beyond the text"),
    ('[{"id": "a", "passages": [{"offset": 0, "text": "fever", "annotations": [{"id": "1", '
     '"text": "cough", "locations": [{"offset": 0, "length": 5}]}]}]}]', 1, "differs"),
    ('[{"id": "a", "passages": [{"offset": 0, "text": "x", "infons": [1]}]}]', 1,
     "infons of a passage must be a JSON object"),
    ('{"documents": [\n' + _DOC + '\n{"id": "b"}]}', 3, "expected ',' or ']'"),
    ('{"documents": [' + _DOC + ", ", 1, "not valid JSON"),
    ('{"documents": 3}', 1, '"documents" must be a list of documents, not a number'),
    ('{"source": "x"}', 1, 'neither "documents"'),
    ("\n\n  ", None, "empty file"),
    (_DOC + '\n\n{"id": "b", "passages": [\n', 3, "not valid JSON"),
    ("\n\n" + _DOC + "\n" + _DOC, 4, "document id 'a' already used on line 3"),
    (_DOC + "\n7\n", 2, "collection, document or list of documents, found '7'"),
    ("true", 1, "expected a BioC JSON collection"),
    ("[" * 100_000, 1, "not valid JSON|nested too deeply"),
])
def test_faults_name_the_line(tmp_path: Path, content: str, line: int | None, message: str
                              ) -> None:
    path = tmp_path / "bad.bioc.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=message) as caught:
        read_bioc_json(path)
    assert caught.value.line == line


@pytest.mark.parametrize("indent", [None, 1])
def test_a_small_window_reads_the_same_and_names_the_same_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indent: int | None) -> None:
    """Values cut by the window's end are decoded again with more lines."""
    from xlnel.io import bioc_json

    docs = [{**SENTENCES_DOC, "id": str(n)} for n in range(30)]
    path = tmp_path / "c.bioc.json"
    path.write_text(json.dumps({"source": "x", "documents": docs}, indent=indent),
                    encoding="utf-8")
    whole = read_bioc_json(path)
    bad = path.read_text(encoding="utf-8").replace('"29"', '"28"')
    (tmp_path / "bad.bioc.json").write_text(bad, encoding="utf-8")
    with pytest.raises(FormatError, match="already used") as whole_error:
        read_bioc_json(tmp_path / "bad.bioc.json")
    monkeypatch.setattr(bioc_json, "_WINDOW", 16)
    assert read_bioc_json(path) == whole
    with pytest.raises(FormatError, match="already used") as small_error:
        read_bioc_json(tmp_path / "bad.bioc.json")
    assert str(small_error.value) == str(whole_error.value)
    (tmp_path / "cut.bioc.json").write_text(bad[:-40], encoding="utf-8")
    with pytest.raises(FormatError, match="not valid JSON") as cut:
        read_bioc_json(tmp_path / "cut.bioc.json")
    assert cut.value.line == bad[:-40].rstrip().count("\n") + 1
    at = [m.start() for m in re.finditer('"2001"', bad)][24]  # break the 25th document
    broken = bad[:at] + '"2001" "2002"' + bad[at + 6:]
    (tmp_path / "broken.bioc.json").write_text(broken, encoding="utf-8")
    with pytest.raises(FormatError, match="not valid JSON") as small_broken:
        read_bioc_json(tmp_path / "broken.bioc.json")
    monkeypatch.setattr(bioc_json, "_WINDOW", 1 << 20)
    with pytest.raises(FormatError, match="not valid JSON") as whole_broken:
        read_bioc_json(tmp_path / "broken.bioc.json")
    assert str(small_broken.value) == str(whole_broken.value)  # same line, same column


def test_documents_before_a_fault_are_yielded(tmp_path: Path) -> None:
    path = tmp_path / "c.bioc.json"
    path.write_text(_DOC + "\n" + '{"id": "b", "passages": [{"text": "x"}]}\n', encoding="utf-8")
    stream = iter_documents(path)
    assert next(stream).id == "a"
    with pytest.raises(FormatError, match="line 2|:2"):
        next(stream)


@pytest.mark.parametrize("doc_id", ["", " d", "d\x01"])
def test_ids_a_reader_would_change_are_refused(tmp_path: Path, doc_id: str) -> None:
    with pytest.raises(ValueError, match="cannot be written to BioC"):
        write_bioc_json(tmp_path / "c.bioc.json", [Document(doc_id, "text")])
    assert not (tmp_path / "c.bioc.json").exists()


def test_convert_command_reads_and_writes_bioc_json(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from xlnel.cli.main import app

    runner = CliRunner()
    source = _write(tmp_path, {"PubTator3": [PUBTATOR3_DOC]}, "export.json")
    out = tmp_path / "c.bioc.json.gz"
    result = runner.invoke(app, ["convert", str(source), str(out)])
    assert result.exit_code == 0, result.output
    assert "converted 1 documents (2 mentions)" in result.output
    assert _plain(read_documents(out)) == _plain(EXPECTED[:1])
    result = runner.invoke(app, ["convert", "-", str(tmp_path / "d.jsonl"), "--from",
                                 "biocjson"], input=source.read_bytes())
    assert result.exit_code == 0, result.output
    assert _plain(read_documents(tmp_path / "d.jsonl")) == _plain(EXPECTED[:1])


def test_convert_writes_jsonl_to_the_standard_output(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from xlnel.cli.main import app

    source = _write(tmp_path, {"PubTator3": [PUBTATOR3_DOC, SENTENCES_DOC]}, "export.json")
    result = CliRunner().invoke(app, ["convert", str(source), "-"])
    assert result.exit_code == 0, result.output
    assert "converted 2 documents (3 mentions) into the standard output" in result.stderr
    lines = result.stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["6794356", "2"]
    piped = CliRunner().invoke(app, ["convert", "-", str(tmp_path / "c.jsonl.gz")],
                               input=result.stdout)
    assert piped.exit_code == 0, piped.output
    assert _plain(read_documents(tmp_path / "c.jsonl.gz")) == _plain(EXPECTED)


def test_a_key_given_twice_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "c.bioc.json"
    path.write_text('{"documents": [\n{"id": "1", "passages": []},\n'
                    '{"id": "2", "passages": [{"offset": 0, "text": "a"}], "passages": []}\n]}',
                    encoding="utf-8")
    with pytest.raises(FormatError, match="c.bioc.json:3: the key 'passages' is given twice"):
        read_bioc_json(path)


def test_a_list_of_ids_in_an_id_infon_is_read_as_a_jsonl_list_is(tmp_path: Path) -> None:
    path = tmp_path / "c.bioc.json"
    annotation = {"id": "0", "infons": {"type": "Disease", "identifier": ["MESH:D1", "D2"],
                                        "other": ["a", "b"]},
                  "locations": [{"offset": 0, "length": 5}]}
    path.write_text(json.dumps({"documents": [{"id": "1", "passages": [
        {"offset": 0, "text": "fever", "annotations": [annotation]}]}]}), encoding="utf-8")
    # the ids, not one id made of the list's JSON text
    assert read_bioc_json(path)[0].entities == (Link(0, 5, "fever", ("D1", "D2"), "Disease"),)
    annotation["infons"]["identifier"] = []
    path.write_text(json.dumps({"documents": [{"id": "1", "passages": [
        {"offset": 0, "text": "fever", "annotations": [annotation]}]}]}), encoding="utf-8")
    assert read_bioc_json(path)[0].entities == (Link(0, 5, "fever", (), "Disease"),)
