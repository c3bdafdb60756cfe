"""Concept table: preferred names and types of the linked concepts, saved with a pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import xlnel
from xlnel.config import load_config
from xlnel.dictionary.concepts import ConceptInfo, ConceptTable
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import FormatError
from xlnel.io import read_jsonl, write_jsonl
from xlnel.io.kb import read_obo
from xlnel.pipeline import train
from xlnel.types import Concept, Document, Link


def test_from_concepts_keeps_preferred_name_and_types() -> None:
    table = ConceptTable.from_concepts([Concept("C1", ("Diabetes", "DM"), ("Disease", "T047")),
                                        Concept("C2", ("Insulin",))])
    assert table.get("C1") == ConceptInfo("C1", "Diabetes", "Disease|T047")
    assert table.get("C2") == ConceptInfo("C2", "Insulin", None)
    assert table.get("C3") is None and table.get(None) is None


def test_from_dictionary_prefers_kb_names() -> None:
    d = Dictionary()
    d.add("סוכרת", "C1", "translated")
    d.add("diabetes", "C1", "kb")
    d.add("אינסולין", "C2", "annotation")
    table = ConceptTable.from_dictionary(d)
    assert table.get("C1") == ConceptInfo("C1", "diabetes")
    assert table.get("C2") == ConceptInfo("C2", "אינסולין")


def test_first_table_wins_on_update() -> None:
    table = ConceptTable([ConceptInfo("C1", "a", "T")])
    table.update(ConceptTable([ConceptInfo("C1", "b"), ConceptInfo("C2", "c")]))
    assert [info.name for info in table] == ["a", "c"]


def test_save_and_load(tmp_path: Path) -> None:
    table = ConceptTable([ConceptInfo("C1", "a\tb", "T1|T2"), ConceptInfo("C2", "c")])
    table.save(tmp_path / "concepts.tsv")
    loaded = ConceptTable.load(tmp_path / "concepts.tsv")
    assert list(loaded) == [ConceptInfo("C1", "a b", "T1|T2"), ConceptInfo("C2", "c")]
    (tmp_path / "bad.tsv").write_text("concept_id\tname\ttype\nC1\tonly two\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad.tsv:2"):
        ConceptTable.load(tmp_path / "bad.tsv")


def test_describe_fills_the_link_fields() -> None:
    d = Dictionary()
    d.add("sugar", "C1", "annotation")
    table = ConceptTable([ConceptInfo("C1", "Diabetes", "Disease")])
    doc = Document("d", "sugar and x", (Link(0, 5, "sugar", ("C1",), matched_name="sugar"),
                                        Link(10, 11, "x", ("C9",))))
    out = table.describe(doc, d).entities
    assert (out[0].concept_name, out[0].concept_type, out[0].matched_source) == (
        "Diabetes", "Disease", "annotation")
    assert (out[1].concept_name, out[1].concept_type, out[1].matched_source) == (None,) * 3


def test_jsonl_round_trip_of_the_found_fields(tmp_path: Path) -> None:
    link = Link(0, 5, "sugar", ("C1",), score=0.9, concept_name="Diabetes",
                concept_type="Disease", matched_name="sugar", matched_source="kb")
    write_jsonl(tmp_path / "o.jsonl", [Document("d", "sugar", (link,))])
    entity = json.loads((tmp_path / "o.jsonl").read_text(encoding="utf-8"))["entities"][0]
    assert entity["concept_name"] == "Diabetes" and entity["matched_source"] == "kb"
    assert read_jsonl(tmp_path / "o.jsonl")[0].entities == (link,)
    (tmp_path / "bad.jsonl").write_text(
        '{"id": "d", "text": "ab", "entities": [{"start": 0, "end": 1, "concept_name": 3}]}\n',
        encoding="utf-8")
    with pytest.raises(FormatError, match="concept_name 3"):
        read_jsonl(tmp_path / "bad.jsonl")


def test_obo_branch_types(tmp_path: Path) -> None:
    obo = ("[Term]\nid: R\nname: All\n\n[Term]\nid: A\nname: Phenotypic abnormality\nis_a: R\n\n"
           "[Term]\nid: B\nname: Seizure\nis_a: A ! Phenotypic abnormality\n\n"
           "[Term]\nid: M\nname: Mode of inheritance\nis_a: R\n\n"
           "[Term]\nid: C\nname: Both\nis_a: B\nis_a: M\n")
    (tmp_path / "t.obo").write_text(obo, encoding="utf-8")
    types = {c.id: c.types for c in read_obo(tmp_path / "t.obo", branch_types=True)}
    assert types == {"R": (), "A": ("Phenotypic abnormality",), "B": ("Phenotypic abnormality",),
                     "M": ("Mode of inheritance",),
                     "C": ("Phenotypic abnormality", "Mode of inheritance")}
    assert all(c.types == () for c in read_obo(tmp_path / "t.obo"))


def test_pipeline_links_say_what_they_found(tmp_path: Path, tiny_config: Path,
                                            tiny_kb: Path) -> None:
    typed = tmp_path / "typed.tsv"
    rows = tiny_kb.read_text(encoding="utf-8").splitlines()
    typed.write_text("\n".join([rows[0] + "\ttype"] + [r + "\tDisorder" for r in rows[1:]]) + "\n",
                     encoding="utf-8")
    cfg = load_config(tiny_config, {"filter.name": "xlnel.similarity.v1", "filter.options": {},
                                    "filter.threshold": 0.9, "dictionary.kb": [f"tsv:{typed}"]})
    train(cfg, tmp_path / "pipe")
    assert (tmp_path / "pipe" / "concepts.tsv").is_file()
    links = xlnel.load(tmp_path / "pipe").link("Known high blood pressure.")
    assert [(x.concept_id, x.concept_name, x.concept_type, x.matched_name, x.matched_source)
            for x in links] == [("C2", "hypertension", "Disorder", "high blood pressure", "kb")]
    (tmp_path / "pipe" / "concepts.tsv").unlink()  # a folder without the table still names
    links = xlnel.load(tmp_path / "pipe").link("Known high blood pressure.")
    assert (links[0].concept_name, links[0].concept_type) == ("hypertension", None)
