"""Tests of the knowledge-base table writer and ``xlnel kb --out``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.io import load_kb, read_kb_tsv
from xlnel.io.kb_write import write_kb_tsv
from xlnel.types import Concept

CONCEPTS = [Concept("C1", ("Diabetes", "Sugar disease"), ("T047", "Disease or Syndrome")),
            Concept("HP:0001250", ("Seizure",))]


def test_written_table_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "kb.tsv.gz"
    assert write_kb_tsv(path, CONCEPTS) == (2, 3)
    back = read_kb_tsv(path)
    assert [(c.id, c.names, c.types) for c in back] == [(c.id, c.names, c.types)
                                                      for c in CONCEPTS]


@pytest.mark.parametrize("concept", [Concept("C1", ("a\tb",)), Concept("C1", ()),
                                     Concept("C1", ("a",), ("x|y",)), Concept(" ", ("a",))])
def test_unwritable_concepts_are_refused(tmp_path: Path, concept: Concept) -> None:
    with pytest.raises(ValueError, match="C1|' '"):
        write_kb_tsv(tmp_path / "kb.tsv", [concept])
    assert not (tmp_path / "kb.tsv").exists()


def test_kb_command_writes_the_loaded_concepts(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "pa.tsv"
    r = runner.invoke(app, ["kb", "hpo?types=Phenotypic abnormality", "--out", str(out)])
    assert r.exit_code == 0, r.output
    expected = load_kb("hpo?types=Phenotypic abnormality")
    assert [(c.id, c.names, c.types) for c in load_kb(f"tsv:{out}")] == [
        (c.id, c.names, c.types) for c in expected]
    r = runner.invoke(app, ["kb", f"tsv:{out}", "--out", str(out)])
    assert r.exit_code != 0 and "is the input" in str(r.exception)
    r = runner.invoke(app, ["kb", "hpo", "--out", str(tmp_path / "kb.csv")])
    assert r.exit_code != 0 and "written as .tsv" in str(r.exception)


@pytest.mark.parametrize("concept_id", ["-1", "a|b", "D1,D2"])
def test_ids_that_would_not_read_back_as_one_are_refused(tmp_path: Path, concept_id: str) -> None:
    # a names list gives any name as an id; the table would read it back as no id or several
    with pytest.raises(ValueError, match=f"concept id '{concept_id}' would be read back from the "
                                         "table as"):
        write_kb_tsv(tmp_path / "kb.tsv", [Concept(concept_id, ("a",))])
    assert not (tmp_path / "kb.tsv").exists()
