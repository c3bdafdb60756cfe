"""``xlnel dictionary lookup`` and ``lookup_terms`` on hand-worked cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.analysis.lookup import DictionaryLookup
from xlnel.analysis.terms import display_names, lookup_terms
from xlnel.cli.main import app
from xlnel.dictionary.dictionary import Dictionary, Entry

# C1: a rendering first, then its English (kb) name; C2 only a rendering.
ENTRIES = [Entry("hypertension arterielle", "C1", "composed", 0.9), Entry("Hypertension", "C1"),
           Entry("hypotension arterielle", "C2", "composed", 0.8), Entry("kkkk", "C3", "kb")]


@pytest.fixture()
def dict_path(tmp_path: Path) -> Path:
    path = tmp_path / "dict.tsv"
    Dictionary(ENTRIES).save(path)
    return path


def test_display_names_prefer_the_knowledge_base_name() -> None:
    assert display_names(Dictionary(ENTRIES)) == {"C1": "Hypertension",
                                                  "C2": "hypotension arterielle", "C3": "kkkk"}


def test_scored_concepts_rank_as_ranked_concepts() -> None:
    lookup = DictionaryLookup(Dictionary(ENTRIES), "en")
    scored = lookup.scored_concepts("hypertension arterielle", 3)
    assert [cid for cid, _ in scored] == lookup.ranked_concepts("hypertension arterielle", 3)
    assert scored[0] == ("C1", pytest.approx(1.0, abs=1e-4))
    assert [s for _, s in scored] == sorted((s for _, s in scored), reverse=True)


def test_lookup_terms_in_input_order(dict_path: Path) -> None:
    found = lookup_terms(dict_path, ["Hypertension ARTERIELLE", "!!", "hypertension"], "fr", k=2)
    assert [t.text for t in found] == ["Hypertension ARTERIELLE", "!!", "hypertension"]
    first = found[0]
    assert first.key == "hypertension arterielle"  # normalised as the dictionary's names
    assert [c.concept_id for c in first.concepts] == ["C1", "C2"]
    assert first.concepts[0].name == "Hypertension" and first.concepts[0].score == pytest.approx(
        1.0, abs=1e-4)
    assert found[1].key == "" and found[1].concepts == ()  # nothing left to look up
    assert found[2].concepts[0].concept_id == "C1"
    assert found[0].to_dict()["concepts"][0] == {"id": "C1", "score": 1.0,
                                                 "name": "Hypertension"}


def test_lookup_terms_checks_its_settings(dict_path: Path) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        lookup_terms(dict_path, ["x"], "en", k=0)
    with pytest.raises(ValueError, match="needs an encoder"):
        lookup_terms(dict_path, ["x"], "en", rank="hybrid")
    with pytest.raises(ValueError, match="hybrid ranking only"):
        lookup_terms(dict_path, ["x"], "en", encoder="multilingual-e5-small")
    with pytest.raises(FileNotFoundError):
        lookup_terms(dict_path.parent / "missing.tsv", ["x"], "en")


def test_cli_lookup_terms_and_file(dict_path: Path, tmp_path: Path) -> None:
    terms = tmp_path / "terms.txt"
    terms.write_text("hypotension arterielle\n\n  kkkk  \n", encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "hypertension arterielle",
                            "--file", str(terms), "--k", "1", "--lang", "en"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        "hypertension arterielle\t1\tC1\t1.0000\tHypertension",
        "hypotension arterielle\t1\tC2\t1.0000\thypotension arterielle",
        "kkkk\t1\tC3\t1.0000\tkkkk"]  # the blank line is no term; spaces are trimmed
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "kk\tkk", "--k", "1"])
    assert r.output.startswith("kk kk\t1\tC3\t")  # a tab in a term does not shift columns
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "zzzz", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == [{"text": "zzzz", "key": "zzzz", "concepts": []}]


def test_cli_lookup_errors(dict_path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path)])
    assert r.exit_code == 1 and "give terms" in r.output
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "--file",
                            str(tmp_path / "none.txt")])
    assert r.exit_code == 1 and "none.txt" in r.output
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n", encoding="utf-8")
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "--file", str(blank)])
    assert r.exit_code == 1 and "blank.txt holds no term" in r.output
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "--file", str(bad)])
    assert r.exit_code == 1 and "bad.txt" in r.output and "2" in r.output


def test_cli_lookup_reads_terms_from_standard_input(dict_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "--file", "-", "--k", "1"],
                      input="kkkk\n\nhypertension arterielle\n")
    assert r.exit_code == 0, r.output
    assert [line.split("\t")[2] for line in r.output.splitlines()] == ["C3", "C1"]
    r = runner.invoke(app, ["dictionary", "lookup", str(dict_path), "--file", "-"],
                      input=b"kkkk\n\xff\n")
    assert r.exit_code == 1 and "<stdin>:2" in r.output
