"""benchmarks/cv_paired.py: a cross-validation run elsewhere against the shipped config on
the same folds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks import cv_paired
from xlnel.experiments import run_experiment


@pytest.fixture
def two_runs(tmp_path: Path, tiny_config: Path) -> tuple[list[dict], list[dict]]:
    base = run_experiment(tiny_config, {}, 1, tmp_path / "base", folds=3,
                          cache_dir=tmp_path / "c")
    other = run_experiment(tiny_config, {}, 1, tmp_path / "other", folds=3,
                           overrides={"dft.R": 0.5}, cache_dir=tmp_path / "c")
    return base, other


def test_paired_compares_the_other_run_on_the_same_folds(tmp_path, two_runs, monkeypatch):
    base, other = two_runs
    (tmp_path / "dirs" / "diabetes").mkdir(parents=True)
    shutil.copy(tmp_path / "other" / "runs.jsonl", tmp_path / "dirs" / "diabetes")
    seen = {}

    def fake_cross_validate(config, folds, work, cache, overrides):
        seen.update(config=config, folds=folds, overrides=overrides)
        return [({}, base)]

    monkeypatch.setattr(cv_paired, "cross_validate", fake_cross_validate)
    got = cv_paired.paired("diabetes", tmp_path / "dirs", tmp_path / "w", tmp_path / "c",
                           {"candidates.workers": 2})
    assert seen == {"config": "configs/camoni-diabetes.yaml", "folds": 3,
                    "overrides": {"candidates.workers": 2}}
    span = got["levels"]["span"]
    assert got["folds"] == 3 and set(got["levels"]) >= {"span", "overlap"}
    tp = sum(r["metrics"]["span"]["tp"] for r in other)
    assert span["tp"] == tp and span["n_documents"] == 24
    deltas = [o["metrics"]["span"]["f1"] - b["metrics"]["span"]["f1"]
              for b, o in zip(base, other, strict=True)]
    assert span["fold_delta"]["per_fold"] == pytest.approx(deltas)
    assert 0.0 <= span["p"] <= 1.0


def test_other_folds_must_be_the_shipped_folds(tmp_path, two_runs):
    base, other = two_runs
    with pytest.raises(ValueError, match="not the shipped config's folds"):
        cv_paired.check_same_folds(base, other[:2], tmp_path)
    moved = json.loads(json.dumps(other))
    moved[0]["per_document"]["ids"][0] = "elsewhere"
    with pytest.raises(ValueError, match="not the shipped config's folds"):
        cv_paired.check_same_folds(base, moved, tmp_path)
    cv_paired.check_same_folds(base, other, tmp_path)  # the same folds: no error


def test_other_name_reads_another_names_run(tmp_path, two_runs, monkeypatch):
    base, _ = two_runs
    (tmp_path / "dirs" / "sclerosis").mkdir(parents=True)
    shutil.copy(tmp_path / "other" / "runs.jsonl", tmp_path / "dirs" / "sclerosis")
    monkeypatch.setattr(cv_paired, "cross_validate", lambda *a, **k: [({}, base)])
    got = cv_paired.paired("diabetes", tmp_path / "dirs", tmp_path / "w", tmp_path / "c", {},
                           other_name="sclerosis")
    assert got["config"] == "configs/camoni-diabetes.yaml"
    assert got["other_runs"] == str(tmp_path / "dirs" / "sclerosis" / "runs.jsonl")
    with pytest.raises(ValueError, match="diabetes/runs.jsonl: no fold records"):
        cv_paired.paired("diabetes", tmp_path / "dirs", tmp_path / "w", tmp_path / "c", {})
