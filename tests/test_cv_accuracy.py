"""The pipeline swap and the resumable summaries of benchmarks/cv_accuracy.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.cv_accuracy import filter_overrides, resumed
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
