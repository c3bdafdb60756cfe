"""Knowledge-base spec options (``?types=``, ``groups=``, ``lang=``, ``sab=``) and UMLS semantic
types and groups."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlnel.errors import FormatError
from xlnel.io import load_kb, read_mrconso, read_mrsty
from xlnel.io.kb import kb_files
from xlnel.io.kb_options import KbOptions, semantic_groups, split_options

MRCONSO = (
    "C0011849|ENG|P|L1|PF|S1|Y|A1||||MSH|MH|D003920|Diabetes Mellitus|0|N||\n"
    "C0011849|HEB|P|L2|PF|S2|Y|A2||||MSHHEB|MH|D003920|סוכרת|0|N||\n"
    "C0021641|ENG|P|L3|PF|S3|Y|A3||||MSH|MH|D007328|Insulin|0|N||\n"
    "C0021641|ENG|S|L4|PF|S4|Y|A4||||RXNORM|IN|5856|insulin human|0|N||\n"
    "C0018787|ENG|P|L5|PF|S5|Y|A5||||MSH|MH|D006321|Heart|0|N||\n"
)
MRSTY = (
    "C0011849|T047|B2.2.1.2.1|Disease or Syndrome|AT1|256|\n"
    "C0021641|T116|A1.4.1.2.1.7|Amino Acid, Peptide, or Protein|AT2|256|\n"
    "C0021641|T121|A1.4.1.1.1|Pharmacologic Substance|AT3|256|\n"
    "C0018787|T023|A1.2.3.1|Body Part, Organ, or Organ Component|AT4|256|\n"
)
TSV = "concept_id\tname\ttype\nD1\tfever\tDisease\nC1\taspirin\tChemical\nX1\tmorning\t\n"
OBO = """format-version: 1.2

[Term]
id: HP:0000001
name: All

[Term]
id: HP:0000118
name: Phenotypic abnormality
is_a: HP:0000001 ! All

[Term]
id: HP:0001250
name: Seizure
is_a: HP:0000118 ! Phenotypic abnormality

[Term]
id: HP:0012823
name: Clinical modifier
is_a: HP:0000001 ! All

[Term]
id: HP:0012828
name: Severe
is_a: HP:0012823 ! Clinical modifier
"""


def _umls(tmp_path: Path, mrsty: bool = True) -> Path:
    (tmp_path / "MRCONSO.RRF").write_text(MRCONSO, encoding="utf-8")
    if mrsty:
        (tmp_path / "MRSTY.RRF").write_text(MRSTY, encoding="utf-8")
    return tmp_path / "MRCONSO.RRF"


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_read_mrsty_codes_and_names(tmp_path: Path) -> None:
    types = read_mrsty(_file(tmp_path, "MRSTY.RRF", MRSTY))
    assert types["C0011849"] == ("T047", "Disease or Syndrome")
    assert types["C0021641"] == ("T116", "Amino Acid, Peptide, or Protein", "T121",
                                 "Pharmacologic Substance")


def test_read_mrsty_malformed(tmp_path: Path) -> None:
    with pytest.raises(FormatError,
                       match=r"MRSTY.RRF:2: MRSTY line has 4 .* \(expected 6, CUI first\)"):
        read_mrsty(_file(tmp_path, "MRSTY.RRF", MRSTY.splitlines()[0] + "\nC1|T047|x|\n"))


def test_mrconso_takes_the_semantic_types_beside_it(tmp_path: Path) -> None:
    path = _umls(tmp_path)
    concepts = {c.id: c for c in load_kb(path)}
    assert concepts["C0011849"].types == ("T047", "Disease or Syndrome")
    assert concepts == {c.id: c for c in read_mrconso(path, mrsty=tmp_path / "MRSTY.RRF")}
    assert kb_files(path) == [path, tmp_path / "MRSTY.RRF"]


@pytest.mark.parametrize(("options", "ids"), [
    ("types=T047", ["C0011849"]),
    ("types=disease or syndrome,T121", ["C0011849", "C0021641"]),
    ("types=T047&types=T023", ["C0011849", "C0018787"]),
    ("groups=DISO", ["C0011849"]),
    ("groups=chem", ["C0021641"]),
    ("groups=DISO,ANAT", ["C0011849", "C0018787"]),
    ("groups=DISO&types=T121", ["C0011849", "C0021641"]),
])
def test_mrconso_types_and_groups(tmp_path: Path, options: str, ids: list[str]) -> None:
    assert [c.id for c in load_kb(f"mrconso:{_umls(tmp_path)}?{options}")] == ids


def test_mrconso_languages_and_sources(tmp_path: Path) -> None:
    path = _umls(tmp_path)
    hebrew = load_kb(f"{path}?lang=HEB")
    assert [(c.id, c.names) for c in hebrew] == [("C0011849", ("סוכרת",))]
    both = {c.id: c.names for c in load_kb(f"{path}?lang=eng,heb")}
    assert both["C0011849"] == ("Diabetes Mellitus", "סוכרת")
    assert {c.id: c.names for c in load_kb(f"{path}?lang=all")} == both
    rxnorm = load_kb(f"{path}?sab=RXNORM&types=T121")
    assert [(c.id, c.names) for c in rxnorm] == [("C0021641", ("insulin human",))]


def test_obo_and_hpo_branches(tmp_path: Path) -> None:
    obo = _file(tmp_path, "hp.obo", OBO)
    assert [c.id for c in load_kb(f"obo:{obo}?types=Phenotypic abnormality")] == [
        "HP:0000118", "HP:0001250"]
    bundled = load_kb("hpo?types=phenotypic abnormality")
    assert bundled and all("Phenotypic abnormality" in c.types for c in bundled)
    assert len(bundled) < len(load_kb("hpo"))


def test_tsv_types(tmp_path: Path) -> None:
    path = _file(tmp_path, "kb.tsv", TSV)
    assert [c.id for c in load_kb(f"{path}?types=Disease,Chemical")] == ["D1", "C1"]


def test_a_type_no_concept_has_is_a_warning(tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    path = _file(tmp_path, "kb.tsv", TSV)
    with caplog.at_level(logging.WARNING, logger="xlnel.io.kb_options"):
        assert [c.id for c in load_kb(f"{path}?types=Disease,Diseases")] == ["D1"]
    assert "no concept has type 'Diseases'" in caplog.text


@pytest.mark.parametrize(("suffix", "error", "message"), [
    ("?types=Finding", ValueError, r"no concept .* has a type among 'Finding'; its types "
                                   r"\(concepts\): 'Disease' \(1\), 'Chemical' \(1\)"),
    ("?kind=Disease", ValueError, r"option 'kind=Disease' .* is not key=value with a key among "
                                  "types, groups, lang, sab"),
    ("?groups=DISO", ValueError, r"no concept .* has a type among group 'DISO' \(groups= reads "
                                 r"UMLS semantic types, .*\); its types \(concepts\): 'Disease'"),
    ("?groups=DISEASE", ValueError, r"'DISEASE' in .* is no UMLS semantic group; the groups: "
                                    r"ACTI \(Activities & Behaviors\), ANAT \(Anatomy\),"),
    ("?types=", ValueError, "option 'types' .* has no value"),
    ("?lang=ENG", ValueError, "lang= and sab= apply to MRCONSO files only"),
])
def test_bad_options(tmp_path: Path, suffix: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        load_kb(f"{_file(tmp_path, 'kb.tsv', TSV)}{suffix}")


def test_types_of_mrconso_need_mrsty(tmp_path: Path) -> None:
    path = _umls(tmp_path, mrsty=False)
    assert load_kb(path)[0].types == ()
    with pytest.raises(FileNotFoundError, match="types= needs the semantic types .* no MRSTY"):
        load_kb(f"{path}?types=T047")


def test_a_question_mark_in_an_existing_file_name_is_the_name(tmp_path: Path) -> None:
    path = _file(tmp_path, "kb.tsv?types=Disease", TSV)
    assert len(load_kb(f"tsv:{path}")) == 3
    assert split_options("x.tsv?types=A,B&sab=M", exists=False) == (
        "x.tsv", KbOptions(types=("A", "B"), sources=("M",)))
    assert split_options("x.tsv?types=A", exists=True) == ("x.tsv?types=A", KbOptions())


def test_kb_files_of_a_spec_with_options(tmp_path: Path) -> None:
    path = _file(tmp_path, "kb.tsv", TSV)
    assert kb_files(f"tsv:{path}?types=Disease") == kb_files(path) == [path]
    assert kb_files("hpo?types=Phenotypic abnormality") == kb_files("hpo") == []
    assert kb_files(tmp_path / "missing.tsv") == kb_files(tmp_path / "missing") == []
    obo = _file(tmp_path, "hp.obo", OBO)  # an HPO release of one's own is read, so counted
    assert kb_files(f"hpo:{obo}?types=Phenotypic abnormality") == [obo]


def test_semantic_groups_by_type_name(tmp_path: Path) -> None:
    # a TSV typed by semantic type names (as an export of UMLS may be) is grouped too
    path = _file(tmp_path, "kb.tsv", "concept_id\tname\ttype\nC1\tfever\tSign or Symptom\n"
                                     "C2\taspirin\tPharmacologic Substance\n")
    assert [c.id for c in load_kb(f"{path}?groups=DISO")] == ["C1"]


def test_a_group_no_concept_is_in_is_a_warning(tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="xlnel.io.kb_options"):
        assert [c.id for c in load_kb(f"{_umls(tmp_path)}?groups=DISO,DEVI")] == ["C0011849"]
    assert "no concept is in semantic group 'DEVI'" in caplog.text
    assert "no concept has type" not in caplog.text  # the groups' other types are not listed


def test_groups_of_mrconso_need_mrsty(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="groups= needs the semantic types"):
        load_kb(f"{_umls(tmp_path, mrsty=False)}?groups=DISO")


def test_an_unknown_group_fails_before_the_file_is_read() -> None:
    with pytest.raises(ValueError, match="'XYZ' in .* is no UMLS semantic group"):
        split_options("/nowhere/MRCONSO.RRF?groups=XYZ", exists=False)


def test_the_shipped_semantic_groups() -> None:
    groups = semantic_groups()
    assert len(groups) == 15
    assert sum(len(g.types) for g in groups.values()) == 133  # 127 current, 6 retired types
    assert ("T047", "Disease or Syndrome") in groups["DISO"].types
    assert groups["CHEM"].name == "Chemicals & Drugs"


@pytest.mark.parametrize(("text", "message"), [
    ("DISO\tDisorders\tT047\n", r"groups.tsv:2: expected 4 tab-separated fields"),
    ("DISO\tDisorders\tT047\tDisease\nCHEM\tChemicals\tT047\tX\n",
     r"groups.tsv:3: T047 is already in a group \(line 2\)"),
    ("DISO\tDisorders\tT047\tDisease\nDISO\tDiseases\tT048\tX\n",
     r"groups.tsv:3: group DISO is named 'Diseases' here and 'Disorders' before"),
])
def test_malformed_semantic_groups(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        semantic_groups(_file(tmp_path, "groups.tsv", "# comment\n" + text))
