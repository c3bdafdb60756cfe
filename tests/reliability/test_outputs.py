"""Outputs never destroy inputs or unrelated data; every path is checked before any work."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.errors import OutputError
from xlnel.io import read_documents
from xlnel.outputs import (
    check_disjoint,
    check_pipeline_output,
    corpus_output_format,
    output_format,
)

runner = CliRunner()


def _similarity_train(config: Path, out: Path, *extra: str):
    return runner.invoke(app, ["train", str(config), "--out", str(out),
                               "--set", "filter.name=xlnel.similarity.v1",
                               "--set", "filter.options={}", *extra])


@pytest.fixture()
def pipe(tmp_path, tiny_config) -> Path:
    out = tmp_path / "pipe"
    r = _similarity_train(tiny_config, out)
    assert r.exit_code == 0, r.output
    return out


def test_train_refuses_the_config_file_and_a_folder_holding_it(tmp_path, tiny_config):
    before = tiny_config.read_bytes()
    r = _similarity_train(tiny_config, tiny_config)
    assert isinstance(r.exception, OutputError) and "is a file" in str(r.exception)
    assert tiny_config.read_bytes() == before
    # The config's folder holds the config and the data: refused even with --overwrite.
    r = _similarity_train(tiny_config, tmp_path, "--overwrite")
    assert isinstance(r.exception, OutputError)
    assert tiny_config.read_bytes() == before and (tmp_path / "docs.jsonl").is_file()


def test_train_refuses_a_folder_of_other_files_unless_overwrite(tmp_path, tiny_config):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "thesis.tex").write_text("years of work", encoding="utf-8")
    r = _similarity_train(tiny_config, user)
    assert isinstance(r.exception, OutputError) and "--overwrite" in str(r.exception)
    assert (user / "thesis.tex").read_text(encoding="utf-8") == "years of work"
    r = _similarity_train(tiny_config, user, "--overwrite")
    assert r.exit_code == 0, r.output
    assert (user / "config.yaml").is_file() and not (user / "thesis.tex").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _similarity_train(tiny_config, empty).exit_code == 0
    assert _similarity_train(tiny_config, empty).exit_code == 0  # a pipeline is replaced


def test_train_refuses_working_folder_before_any_work(tmp_path, tiny_config, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    called = []
    monkeypatch.setattr("xlnel.training.steps.load_training_documents",
                        lambda cfg: called.append(1) or ([], []))
    for out in (".", "sub/..", str(tmp_path / "nope" / "..")):
        with pytest.raises(OutputError, match="working folder"):
            check_pipeline_output(out, [])
        r = _similarity_train(tiny_config, Path(out))
        assert isinstance(r.exception, OutputError), (out, r.output)
    assert not called  # refused before the data was read


def test_link_refuses_to_overwrite_its_input(tmp_path, pipe):
    gold = pipe / "test.jsonl"
    copy = tmp_path / "gold.jsonl"
    copy.write_bytes(gold.read_bytes())
    for out in (copy, tmp_path / "x" / ".." / "gold.jsonl"):
        r = runner.invoke(app, ["link", str(pipe), str(copy), "--out", str(out)])
        assert isinstance(r.exception, OutputError), r.output
        assert "is the input" in str(r.exception)
    os.symlink(copy, tmp_path / "link.jsonl")
    r = runner.invoke(app, ["link", str(pipe), str(copy), "--out", str(tmp_path / "link.jsonl")])
    assert isinstance(r.exception, OutputError)
    assert copy.read_bytes() == gold.read_bytes()
    r = runner.invoke(app, ["link", str(pipe), str(copy), "--out", str(pipe / "pred.jsonl")])
    assert isinstance(r.exception, OutputError) and "inside the input folder" in str(r.exception)


def test_output_needs_a_known_extension(tmp_path, pipe):
    r = runner.invoke(app, ["link", str(pipe), str(pipe / "test.jsonl"), "--out",
                            str(tmp_path / "predictions")])
    assert isinstance(r.exception, OutputError)
    assert ".jsonl" in str(r.exception) and ".pubtator" in str(r.exception)
    assert not (tmp_path / "predictions").exists()
    assert corpus_output_format(tmp_path / "p.jsonl.gz") == "jsonl"
    assert corpus_output_format(tmp_path / "p.PubTator") == "pubtator"
    assert corpus_output_format(tmp_path) == "brat"  # an existing folder


def test_to_names_the_format_of_any_output(tmp_path, pipe):
    gold = pipe / "test.jsonl"
    r = runner.invoke(app, ["link", str(pipe), str(gold), "--out", str(tmp_path / "predictions"),
                            "--to", "PubTator"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "predictions").read_text(encoding="utf-8").startswith("d")
    assert len(read_documents(tmp_path / "predictions", "pubtator")) == len(read_documents(gold))
    r = runner.invoke(app, ["link", str(pipe), str(gold), "--out", str(tmp_path / "ann"),
                            "--to", "brat"])  # a new folder
    assert r.exit_code == 0, r.output
    assert len(list((tmp_path / "ann").glob("*.ann"))) == len(read_documents(gold))
    # --to changes no check: the input is still refused as the output
    copy = tmp_path / "gold.data"
    copy.write_bytes(gold.read_bytes())
    r = runner.invoke(app, ["link", str(pipe), str(copy), "--from", "jsonl", "--out", str(copy),
                            "--to", "pubtator"])
    assert isinstance(r.exception, OutputError) and copy.read_bytes() == gold.read_bytes()
    r = runner.invoke(app, ["link", str(pipe), str(gold), "--out", str(tmp_path / "p.jsonl"),
                            "--to", "text"])
    assert isinstance(r.exception, ValueError) and "cannot write the corpus format 'text'" in \
        str(r.exception)
    assert not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize("out, fmt, expected", [
    ("p.jsonl", None, "jsonl"), ("p.data", "BioCJSON", "biocjson"), ("p.xml", "pubtator",
                                                                     "pubtator"),
    ("folder", "brat", "brat"), ("-", None, "jsonl"), ("-", "bioc", "bioc")])
def test_output_format(tmp_path, out, fmt, expected):
    target = io.StringIO() if out == "-" else tmp_path / out
    assert output_format(target, fmt) == expected


def test_output_format_refusals(tmp_path):
    with pytest.raises(OutputError, match="cannot tell the output format"):
        output_format(tmp_path / "p.data")
    with pytest.raises(ValueError, match="BRAT is a folder of files"):
        output_format(io.StringIO(), "brat")
    with pytest.raises(ValueError, match="give one of jsonl, pubtator, bioc, biocjson, brat"):
        output_format(tmp_path / "p.data", "xml")


def test_shards_out_equal_to_source_or_other_pipeline(tmp_path, pipe, tiny_config):
    shards = tmp_path / "in"
    shards.mkdir()
    (shards / "a.jsonl").write_bytes((pipe / "test.jsonl").read_bytes())
    before = (shards / "a.jsonl").read_bytes()
    r = runner.invoke(app, ["link", str(pipe), str(shards), "--out", str(shards), "--shards"])
    assert isinstance(r.exception, OutputError) and (shards / "a.jsonl").read_bytes() == before
    r = runner.invoke(app, ["link", str(pipe), str(shards / "*.jsonl"), "--out", str(shards),
                            "--shards"])
    assert isinstance(r.exception, OutputError) and "shard itself" in str(r.exception)
    out = tmp_path / "out"
    r = runner.invoke(app, ["link", str(pipe), str(shards), "--out", str(out), "--shards"])
    assert r.exit_code == 0 and "(0 already done)" in r.output, r.output
    r = runner.invoke(app, ["link", str(pipe), str(shards), "--out", str(out), "--shards"])
    assert r.exit_code == 0 and "(1 already done)" in r.output
    # Another pipeline, or the same one with other settings: never "already done".
    other = tmp_path / "other"
    assert _similarity_train(tiny_config, other).exit_code == 0
    r = runner.invoke(app, ["link", str(other), str(shards), "--out", str(out), "--shards"])
    assert isinstance(r.exception, OutputError) and "another pipeline" in str(r.exception)
    r = runner.invoke(app, ["link", str(pipe), str(shards), "--out", str(out), "--shards",
                            "--set", "filter.threshold=0.99"])
    assert isinstance(r.exception, OutputError)
    # Retrained in place: a new pipeline.
    assert _similarity_train(tiny_config, pipe).exit_code == 0
    r = runner.invoke(app, ["link", str(pipe), str(shards), "--out", str(out), "--shards"])
    assert isinstance(r.exception, OutputError)
    # An unrelated file with a shard's name, no record of its writer.
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "a.jsonl").write_text("mine\n", encoding="utf-8")
    r = runner.invoke(app, ["link", str(pipe), str(shards), "--out", str(foreign), "--shards"])
    assert isinstance(r.exception, OutputError) and "not written by" in str(r.exception)
    assert (foreign / "a.jsonl").read_text(encoding="utf-8") == "mine\n"


def test_check_disjoint_directions(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(OutputError, match="holds the input"):
        check_disjoint(tmp_path / "data", [tmp_path / "data" / "x.jsonl"], out_is_folder=True)
    with pytest.raises(OutputError, match="inside the input folder"):
        check_disjoint(tmp_path / "data" / "y.jsonl", [tmp_path / "data"], out_is_folder=False)
    check_disjoint(tmp_path / "y.jsonl", [tmp_path / "data", tmp_path / "missing"],
                   out_is_folder=False)


def test_adapt_refuses_its_inputs_and_foreign_folders(tmp_path, tiny_kb):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("diabetes\tdiabetes\n", encoding="utf-8")
    args = ["adapt", "--lang", "he", "--pairs", str(pairs), "--kb", f"tsv:{tiny_kb}"]
    r = runner.invoke(app, [*args, "--out", str(pairs)])
    assert r.exit_code != 0 and "is a file" in r.output
    foreign = tmp_path / "f"
    foreign.mkdir()
    (foreign / "dictionary.tsv").write_text("my own\n", encoding="utf-8")
    r = runner.invoke(app, [*args, "--out", str(foreign)])
    assert r.exit_code != 0 and "dictionary.tsv" in r.output
    assert (foreign / "dictionary.tsv").read_text(encoding="utf-8") == "my own\n"
    (foreign / "report.json").write_text("{}", encoding="utf-8")  # an earlier adapt run's
    r = runner.invoke(app, [*args, "--pairs", str(foreign / "dictionary.tsv"),
                            "--out", str(foreign)])
    assert r.exit_code != 0 and "is the input" in r.output


def test_experiment_refuses_a_file(tmp_path, tiny_config):
    r = runner.invoke(app, ["experiment", str(tiny_config), "--out", str(tiny_config)])
    assert isinstance(r.exception, OutputError) and "is a file" in str(r.exception)
    assert "gbdt" in tiny_config.read_text(encoding="utf-8")
    r = runner.invoke(app, ["experiment", str(tiny_config), "--out", str(tiny_config.parent),
                            "--cache", str(tiny_config.parent)])
    assert isinstance(r.exception, OutputError) and "--cache" in str(r.exception)
