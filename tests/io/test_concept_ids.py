"""The one concept-id rule (xlnel.io.concept_ids), read and written alike by every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlnel.errors import FormatError
from xlnel.io import read_documents, write_documents
from xlnel.io.concept_ids import kept_id_field, parse_concept_ids
from xlnel.types import Document, Link

TMVAR = "tmVar:p|SUB|V|600|E;HGVS:p.V600E;VariantGroup:0;CorrespondingGene:673"
# (id field as a corpus writes it, the concept ids it stands for)
AWKWARD = [
    ("MESH:D001234", ("D001234",)),
    ("umls:C0011849", ("C0011849",)),
    ("  D001234 ", ("D001234",)),
    ("D1|D2", ("D1", "D2")),
    ("MESH:D1 | MESH:D2", ("D1", "D2")),
    ("D1,D2", ("D1", "D2")),
    ("MESH:D1, OMIM:607634", ("D1", "OMIM:607634")),
    ("D002544|-1", ("D002544",)),
    ("D1|D1", ("D1",)),
    ("-1", ()),
    ("-", ()),
    ("", ()),
    (" ", ()),
    ("HP:0000001", ("HP:0000001",)),
    ("MESH:D1;MESH:D2", ("D1;D2",)),
    # PubTator3's variant ids hold tmVar's own '|': one id, whole
    (TMVAR, (TMVAR,)),
    (" tmvar:c|DEL|1,2|A ", ("tmvar:c|DEL|1,2|A",)),
    # a name standing for an id keeps its comma; so does a chemical name
    ("Diabetes Mellitus, Type 2", ("Diabetes Mellitus, Type 2",)),
    ("1,2-dichloroethane", ("1,2-dichloroethane",)),
    ("סוכרת", ("סוכרת",)),
]
TEXT = "מחלת סוכרת"


@pytest.mark.parametrize(("field", "ids"), AWKWARD)
def test_the_rule(field: str, ids: tuple[str, ...]) -> None:
    assert parse_concept_ids(field) == ids


def test_kept_field_gives_back_what_the_ids_alone_would_not() -> None:
    assert kept_id_field("D002544|-1") == "D002544|-1"
    assert kept_id_field("MESH:D1,MESH:D2") == "D1,D2"
    assert kept_id_field("MESH:D1|D2") is None
    assert kept_id_field("-1") is None


def _pubtator(tmp_path: Path, field: str) -> Path:
    path = tmp_path / "c.pubtator"
    path.write_text(f"1|t|{TEXT}\n1|a|\n1\t5\t10\tסוכרת\tDisease\t{field}\n\n",
                    encoding="utf-8")
    return path


def _jsonl(tmp_path: Path, field: str) -> Path:
    path = tmp_path / "c.jsonl"
    entity = {"start": 5, "end": 10, "text": "סוכרת", "type": "Disease", "concept_id": field}
    path.write_text(json.dumps({"id": "1", "text": TEXT, "entities": [entity]}) + "\n",
                    encoding="utf-8")
    return path


def _bioc(tmp_path: Path, field: str) -> Path:
    path = tmp_path / "c.xml"
    path.write_text(
        f"<collection><document><id>1</id><passage><offset>0</offset><text>{TEXT}</text>"
        f'<annotation id="0"><infon key="type">Disease</infon><infon key="identifier">{field}'
        '</infon><location offset="5" length="5"/><text>סוכרת</text></annotation>'
        "</passage></document></collection>", encoding="utf-8")
    return path


def _bioc_json(tmp_path: Path, field: str) -> Path:
    path = tmp_path / "c.bioc.json"
    annotation = {"id": "0", "infons": {"type": "Disease", "identifier": field},
                  "text": "סוכרת", "locations": [{"offset": 5, "length": 5}]}
    path.write_text(json.dumps({"documents": [{"id": "1", "passages": [
        {"offset": 0, "text": TEXT, "annotations": [annotation]}]}]}), encoding="utf-8")
    return path


def _brat(tmp_path: Path, field: str) -> Path:
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "1.txt").write_text(TEXT, encoding="utf-8")
    # a BRAT reference is one token: the field's spaces cannot be written there
    reference = "".join(field.split()) or "-1"
    (folder / "1.ann").write_text(f"T1\tDisease 5 10\tסוכרת\nN1\tReference T1 {reference}\tx\n",
                                  encoding="utf-8")
    return folder


WRITERS = {"pubtator": _pubtator, "jsonl": _jsonl, "bioc": _bioc, "biocjson": _bioc_json,
           "brat": _brat}


@pytest.mark.parametrize(("fmt", "field", "ids"), [
    (fmt, field, ids) for fmt in sorted(WRITERS) for field, ids in AWKWARD
    # a BRAT reference is one token, which cannot hold a name with spaces
    if fmt != "brat" or not any(" " in one for one in ids)])
def test_every_format_reads_an_id_field_alike(tmp_path: Path, fmt: str, field: str,
                                              ids: tuple[str, ...]) -> None:
    (doc,) = read_documents(WRITERS[fmt](tmp_path, field), fmt)
    assert doc.entities == (Link(5, 10, "סוכרת", ids, "Disease"),)


def test_a_jsonl_list_of_ids_is_read_item_by_item(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    entity = {"start": 5, "end": 10, "concept_id": ["MESH:D1", "-1", "D2|D3", " D1"],
              "id_kind": "concept"}
    path.write_text(json.dumps({"id": "1", "text": TEXT, "entities": [entity]}) + "\n",
                    encoding="utf-8")
    assert read_documents(path)[0].entities == (
        Link(5, 10, "סוכרת", ("D1", "D2", "D3"), id_kind="concept"),)
    entity["concept_id"] = "-1"
    path.write_text(json.dumps({"id": "1", "text": TEXT, "entities": [entity]}) + "\n",
                    encoding="utf-8")
    # no concept, so no kind of id either: the writers write none for it
    assert read_documents(path)[0].entities == (Link(5, 10, "סוכרת"),)


@pytest.mark.parametrize("name", ["c.jsonl", "c.pubtator", "c.xml", "c.bioc.json", "brat"])
@pytest.mark.parametrize("concept_id", ["-1", "", " ", "a|b", "D1,D2"])
def test_every_writer_refuses_an_id_that_would_not_read_back(tmp_path: Path, name: str,
                                                             concept_id: str) -> None:
    doc = Document("d1", TEXT, (Link(5, 10, "סוכרת", ("C1", concept_id)),))
    with pytest.raises(FormatError, match=f"document 'd1': concept id {concept_id!r} cannot"):
        write_documents(tmp_path / name, [doc])
    assert not (tmp_path / name).exists()


# A small corpus with what each format must carry: Hebrew text, overlapping and nested spans,
# composite ids (read with '|' and with ','), a mention of no concept, a document without
# annotations, and prefixes the rule removes.
HEBREW = "אני חולה סוכרת סוג 2 ולוקח אינסולין"
CORPUS_LINES = [
    {"id": "h1", "text": HEBREW, "entities": [
        {"start": 4, "end": 14, "text": "חולה סוכרת", "type": "Disorder",
         "concept_id": "MESH:D003920|UMLS:C0011849"},
        {"start": 9, "end": 20, "text": "סוכרת סוג 2", "type": "Disorder",
         "concept_id": "D003924,C0011860"},
        {"start": 9, "end": 14, "text": "סוכרת", "type": "Disorder", "concept_id": "-1"},
        {"start": 27, "end": 35, "text": "אינסולין", "type": "Chemical",
         "concept_id": "D007328|-1"}]},
    {"id": "h2", "text": "אין כאן אזכורים", "entities": []},
]
EXPECTED = [
    Document("h1", HEBREW, (Link(4, 14, "חולה סוכרת", ("D003920", "C0011849"), "Disorder"),
                            Link(9, 14, "סוכרת", (), "Disorder"),
                            Link(9, 20, "סוכרת סוג 2", ("D003924", "C0011860"), "Disorder"),
                            Link(27, 35, "אינסולין", ("D007328",), "Chemical"))),
    Document("h2", "אין כאן אזכורים"),
]


def test_a_corpus_goes_round_every_format_unchanged(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    source.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n"
                              for line in CORPUS_LINES), encoding="utf-8")
    path, docs = source, read_documents(source)
    for name in ["c.pubtator", "c.xml", "c.bioc.json", "brat", "back.jsonl"]:
        assert [(d.id, d.text, d.entities) for d in docs] == [
            (d.id, d.text, d.entities) for d in EXPECTED], f"read from {path.name}"
        path = tmp_path / name
        write_documents(path, docs)
        docs = read_documents(path)
    assert [(d.id, d.text, d.entities) for d in docs] == [
        (d.id, d.text, d.entities) for d in EXPECTED]


@pytest.mark.parametrize("name", ["c.pubtator", "c.xml", "c.bioc.json", "brat", "c.jsonl"])
def test_a_tmvar_id_goes_round_every_format_whole(tmp_path: Path, name: str) -> None:
    doc = Document("1", TEXT, (Link(5, 10, "סוכרת", (TMVAR,), "Mutation"),))
    write_documents(tmp_path / name, [doc])
    assert [d.entities for d in read_documents(tmp_path / name)] == [doc.entities]
