"""``summarize_concepts`` and ``xlnel kb`` on hand-made knowledge bases."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.io.kb_summary import summarize_concepts
from xlnel.types import Concept

CONCEPTS = [
    Concept("C1", ("fever", "pyrexia"), ("Sign", "Finding"), ("UMLS:C0015967", "MSH:D005334")),
    Concept("C2", ("aspirin",), ("Drug",), ("UMLS:C0004057", "UMLS:C9999999")),
    Concept("C3", ("cough",), ("Sign",)),
    Concept("C4", ("morning",)),
]


def test_counts() -> None:
    s = summarize_concepts("x", CONCEPTS, top=2)
    assert (s.concepts, s.names, s.typed, s.distinct_types) == (4, 5, 3, 3)
    assert s.types == (("Sign", 2), ("Finding", 1))
    assert s.xrefs == (("UMLS", 2), ("MSH", 1))  # a vocabulary counts once per concept
    assert s.to_dict()["types"] == {"Sign": 2, "Finding": 1}
    assert "types of 3 concepts: Sign (2), Finding (1) and 1 more" in s.format()


def test_empty() -> None:
    s = summarize_concepts("empty", [])
    assert (s.concepts, s.names, s.types) == (0, 0, ())
    assert s.format() == "empty: 0 concepts, 0 names (0.0 a concept)\n  no types"


def test_cli(tmp_path: Path) -> None:
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\ttype\nD1\tfever\tDisease\nC1\taspirin\tChemical\n"
                  "D1\tpyrexia\tDisease\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["kb", str(kb), f"{kb}?types=Disease", "--json"])
    assert result.exit_code == 0, result.output
    first, second = (json.loads(line) for line in result.output.splitlines())
    assert (first["concepts"], first["names"], first["types"]) == (
        2, 3, {"Disease": 1, "Chemical": 1})
    assert (second["spec"], second["concepts"]) == (f"{kb}?types=Disease", 1)


def test_semantic_groups() -> None:
    concepts = [Concept("C1", ("fever",), ("T184", "Sign or Symptom")),
                Concept("C2", ("aspirin",), ("T121", "T109")),  # two CHEM types: counted once
                Concept("C3", ("heart",), ("T023",)),
                Concept("C4", ("rash",), ("T047", "Disease or Syndrome"))]
    s = summarize_concepts("umls", concepts)
    assert s.groups == (("DISO", 2), ("CHEM", 1), ("ANAT", 1))
    assert s.to_dict()["groups"] == {"DISO": 2, "CHEM": 1, "ANAT": 1}
    assert "UMLS semantic groups: DISO (2), CHEM (1), ANAT (1)" in s.format()
    assert summarize_concepts("x", [Concept("D1", ("fever",), ("Disease",))]).groups == ()


def test_types_differing_only_by_case_are_one_type_with_their_spellings() -> None:
    concepts = [Concept("D1", ("fever",), ("Disease",)),
                Concept("D2", ("cough",), ("disease",)),
                Concept("D3", ("rash",), ("disease", "DISEASE")),  # counted once
                Concept("D4", ("pain",), ("Finding",))]
    s = summarize_concepts("x", concepts)
    assert (s.distinct_types, s.types) == (2, (("disease", 3), ("Finding", 1)))
    assert s.type_spellings == (("disease", ("disease", "Disease", "DISEASE")),)
    assert s.to_dict()["type_spellings"] == {"disease": ["disease", "Disease", "DISEASE"]}
    assert "types of 4 concepts: disease (3; written disease / Disease / DISEASE), Finding (1)" \
        in s.format()
    tie = summarize_concepts("x", [Concept("D1", ("a",), ("Disease",)),
                                   Concept("D2", ("b",), ("disease",))])
    assert tie.types == (("Disease", 2),)  # equal counts: the spelling seen first


def test_cli_groups_types_by_case_as_types_selects_them(tmp_path: Path) -> None:
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\ttype\nD1\tfever\tDisease\nD2\tcough\tdisease\n"
                  "C1\taspirin\tChemical\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["kb", str(kb), f"{kb}?types=DISEASE", "--json"])
    assert result.exit_code == 0, result.output
    whole, kept = (json.loads(line) for line in result.output.splitlines())
    assert (whole["distinct_types"], whole["types"]) == (2, {"Disease": 2, "Chemical": 1})
    assert whole["type_spellings"] == {"Disease": ["Disease", "disease"]}
    assert (kept["concepts"], kept["types"]) == (2, {"Disease": 2})


def test_vocabularies_differing_only_by_case_are_one_with_their_spellings() -> None:
    concepts = [Concept("D1", ("fever",), xrefs=("UMLS:C1",)),
                Concept("D2", ("cough",), xrefs=("umls:C2", "UMLS:C3")),  # counted once
                Concept("D3", ("rash",), xrefs=("UMLS:C4", "MSH:D4"))]
    s = summarize_concepts("x", concepts)
    assert s.xrefs == (("UMLS", 3), ("MSH", 1))
    assert s.xref_spellings == (("UMLS", ("UMLS", "umls")),)
    assert s.to_dict()["xref_spellings"] == {"UMLS": ["UMLS", "umls"]}
    assert "cross-references: UMLS (3; written UMLS / umls), MSH (1)" in s.format()
