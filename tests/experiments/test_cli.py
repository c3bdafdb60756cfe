from __future__ import annotations

import json

from typer.testing import CliRunner

from xlnel.cli.main import app


def test_experiment_and_report_commands(tmp_path, tiny_config):
    runner = CliRunner()
    out = tmp_path / "exp"
    res = runner.invoke(app, ["experiment", str(tiny_config), "--grid", "dft.R=0,0.5",
                              "--seeds", "1", "--out", str(out), "--cache", str(tmp_path / "c"),
                              "--set", "candidates.top_m=10"])
    assert res.exit_code == 0, res.output
    assert "span_f1" in res.output and "dft.R" in res.output
    assert len((out / "runs.jsonl").read_text().splitlines()) == 2
    res = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "report.md").is_file()


def test_experiment_takes_key_path_overrides_as_train_does(tmp_path, tiny_config):
    runner = CliRunner()
    out = tmp_path / "exp"
    res = runner.invoke(app, ["experiment", str(tiny_config), "--dft.R", "0.5",
                              "--candidates.top_m=10", "--out", str(out),
                              "--cache", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    [record] = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert record["config"]["dft"]["R"] == 0.5
    assert record["config"]["candidates"]["top_m"] == 10
    for args, message in ([["--dft.R"], "needs a value"], [["stray"], "unexpected argument"],
                          [["--seed", "3"], "set by the seeds"]):
        res = runner.invoke(app, ["experiment", str(tiny_config), "--out", str(out), *args])
        assert res.exit_code != 0 and message in res.output + str(res.exception), args


def test_parse_seeds():
    import pytest
    import typer

    from xlnel.cli.experiment import parse_seeds

    assert parse_seeds("5") == 5
    assert parse_seeds("3,4") == [3, 4]
    assert parse_seeds("7,") == [7]
    for bad in ("0", "x", "1,1", "-1,2", ","):
        with pytest.raises(typer.BadParameter):
            parse_seeds(bad)


def test_experiment_with_folds_prints_intervals(tmp_path, tiny_config):
    runner = CliRunner()
    out = tmp_path / "cv"
    res = runner.invoke(app, ["experiment", str(tiny_config), "--folds", "2", "--out", str(out),
                              "--cache", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert "95% t-interval" in res.output and "pooled out-of-fold" in res.output
    assert "span_f1" in res.output and "folds" in res.output
    assert len((out / "runs.jsonl").read_text().splitlines()) == 2
    res = runner.invoke(app, ["experiment", str(tiny_config), "--folds", "1", "--out", str(out)])
    assert res.exit_code != 0
    one = tmp_path / "one"
    res = runner.invoke(app, ["experiment", str(tiny_config), "--folds", "2", "--fold-ids", "1",
                              "--out", str(one), "--cache", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    ((line,),) = [(one / "runs.jsonl").read_text().splitlines()]
    assert json.loads(line)["fold"] == 1
    for bad in ("x", "2"):
        res = runner.invoke(app, ["experiment", str(tiny_config), "--folds", "2", "--fold-ids",
                                  bad, "--out", str(tmp_path / "bad")])
        assert res.exit_code != 0
        assert "fold" in (res.output + str(res.exception)).lower(), res.output


def test_a_learning_curve_from_the_command_line(tmp_path, tiny_config):
    runner = CliRunner()
    out = tmp_path / "lc"
    res = runner.invoke(app, ["experiment", str(tiny_config), "--grid",
                              "data.max_documents=3,null", "--grid", "data.subset_seed=1,2",
                              "--out", str(out), "--cache", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert len((out / "runs.jsonl").read_text().splitlines()) == 4
    res = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "rep"), "--x",
                              "data.max_documents", "--pool", "data.subset_seed"])
    assert res.exit_code == 0, res.output
    assert "replicates" in (tmp_path / "rep" / "report.md").read_text()
    res = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "rep"), "--x",
                              "data.max_documents", "--pool", "dft.R"])
    assert res.exit_code != 0 and "dft.R as a grid axis" in str(res.exception)  # main() prints
