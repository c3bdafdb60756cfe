"""Tests of ``xlnel adapt`` and ``xlnel dictionary train-translator`` / ``build``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.dictionary.cipher import KB_ROWS, write_cipher_pairs, write_kb
from xlnel.cli.dictionary import adapt_cli
from xlnel.cli.dictionary import app as dictionary_app
from xlnel.dictionary.dictionary import Dictionary

pytestmark = pytest.mark.usefixtures("one_thread")

TINY_ARGS = ["--epochs", "2", "--max-seconds", "5", "--hidden-size", "16",
             "--embedding-dim", "8", "--batch-size", "32"]


@pytest.fixture(scope="module")
def cli() -> typer.Typer:
    """An app wired as ``xlnel/cli/main.py`` wires the dictionary commands."""
    app = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    app.add_typer(dictionary_app, name="dictionary")
    app.command("adapt")(adapt_cli)
    return app


@pytest.fixture(scope="module")
def adapted(cli: typer.Typer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Output folder of one ``xlnel adapt`` run on the cipher language."""
    root = tmp_path_factory.mktemp("cli")
    pairs, kb = write_cipher_pairs(root / "pairs.tsv"), write_kb(root / "kb.tsv")
    result = CliRunner().invoke(cli, ["adapt", "--lang", "xx", "--pairs", str(pairs), "--kb",
                                      f"tsv:{kb}", "--out", str(root / "out")])
    assert result.exit_code == 0, result.output
    assert f"set candidates.stopwords to {root / 'out' / 'stopwords.txt'}" in result.output
    assert (root / "out" / "stopwords.txt").is_file()
    assert f"xlnel train {root / 'out' / 'pipeline.yaml'} --out PIPELINE" in result.output
    assert (root / "out" / "pipeline.yaml").is_file()
    # "xx" has no grammar file and no word order in the table: the summary says so
    assert '"language_file": "default"' in result.output
    assert '"segment_order": "both"' in result.output
    return root / "out"


@pytest.fixture(scope="module")
def translator_dir(cli: typer.Typer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny translator trained once by ``xlnel dictionary train-translator``."""
    root = tmp_path_factory.mktemp("tr")
    pairs = write_cipher_pairs(root / "pairs.tsv")
    result = CliRunner().invoke(cli, ["dictionary", "train-translator", str(pairs), "--out",
                                      str(root / "tr"), "--lang", "xx", *TINY_ARGS])
    assert result.exit_code == 0, result.output
    return root / "tr"


def test_adapt_end_to_end(adapted: Path) -> None:
    dictionary = Dictionary.load(adapted / "dictionary.tsv")
    assert len(dictionary) > 0
    assert {e.source for e in dictionary} <= {"translated", "composed", "transliterated", "kb"}
    assert all(e.score is not None and 0 < e.score <= 1 for e in dictionary)
    assert dictionary.concept_ids() == {cid for cid, _, _ in KB_ROWS}
    report = json.loads((adapted / "report.json").read_text(encoding="utf-8"))
    assert report["lang"] == "xx" and report["dictionary"]["entries"] == len(dictionary)
    assert report["language_file"] == "default" and report["seconds"]["total"] >= 0
    # the zero-shot pipeline links with linking.tsv: the dictionary less its everyday words
    linking = Dictionary.load(adapted / "linking.tsv")
    assert set(linking) <= set(dictionary)
    assert report["linking"]["entries_left_out"] == len(dictionary) - len(linking)
    assert str((adapted / "linking.tsv").resolve()) in (adapted / "pipeline.yaml").read_text(
        encoding="utf-8")


def test_build_with_a_trained_translator(cli: typer.Typer, translator_dir: Path,
                                         tmp_path: Path) -> None:
    kb = write_kb(tmp_path / "kb.tsv")
    out = tmp_path / "built.tsv"
    result = CliRunner().invoke(cli, ["dictionary", "build", "--kb", f"tsv:{kb}", "--kb",
                                      f"tsv:{kb}", "--translator", str(translator_dir),
                                      "--lang", "xx", "--out", str(out), "--max-names", "2"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["concepts"] == 6  # the KB given twice
    assert Dictionary.load(out).concept_ids() <= {cid for cid, _, _ in KB_ROWS}


def test_train_translator(cli: typer.Typer, tmp_path: Path) -> None:
    pairs = write_cipher_pairs(tmp_path / "pairs.tsv", n=60)
    out = tmp_path / "tr"
    result = CliRunner().invoke(cli, ["dictionary", "train-translator", str(pairs), "--out",
                                      str(out), "--lang", "xx", *TINY_ARGS])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["data"]["test_pairs"] > 0
    assert (out / "train_report.json").is_file()


@pytest.mark.parametrize("command", [
    ["adapt", "--lang", "xx", "--pairs", "{missing}", "--kb", "hpo", "--out", "{tmp}/o"],
    ["dictionary", "train-translator", "{missing}", "--out", "{tmp}/o"],
])
def test_missing_pairs_file(cli: typer.Typer, tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "no_such_pairs.tsv"
    args = [a.format(missing=missing, tmp=tmp_path) for a in command]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0
    assert str(missing) in result.output
    assert not (tmp_path / "o").exists()


def test_build_errors(cli: typer.Typer, tmp_path: Path) -> None:
    kb = write_kb(tmp_path / "kb.tsv")
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["dictionary", "build", "--kb", f"tsv:{kb}", "--translator",
                                      str(tmp_path / "empty"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "missing config.json" in result.output
    for out in (tmp_path / "empty", kb):  # the dictionary would go into or over an input
        result = CliRunner().invoke(cli, ["dictionary", "build", "--kb", f"tsv:{kb}",
                                          "--translator", str(tmp_path / "empty"),
                                          "--out", str(out)])
        assert result.exit_code == 1 and "input" in result.output, result.output
    assert list((tmp_path / "empty").iterdir()) == [] and kb.read_text().startswith("concept_id")
    result = CliRunner().invoke(cli, ["dictionary", "build", "--translator", str(tmp_path),
                                      "--out", str(tmp_path)])
    assert result.exit_code != 0 and "--kb" in result.output


def test_adapt_everyday_top_zero_links_with_the_whole_dictionary(cli: typer.Typer,
                                                                  tmp_path: Path) -> None:
    pairs, kb = write_cipher_pairs(tmp_path / "pairs.tsv"), write_kb(tmp_path / "kb.tsv")
    base = ["adapt", "--lang", "xx", "--pairs", str(pairs), "--kb", f"tsv:{kb}",
            "--translit-seconds", "0", "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli, [*base, "--everyday-top", "0"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out" / "linking.tsv").exists()
    assert str((tmp_path / "out" / "dictionary.tsv").resolve()) in (
        tmp_path / "out" / "pipeline.yaml").read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, [*base, "--everyday-top", "-1"])
    assert result.exit_code == 2 and "everyday-top" in result.output  # a usage error
