from __future__ import annotations

import json

from benchmarks._common import envelope
from benchmarks.cv_accuracy import merge_entries


def _write(folder, results, command):
    data = envelope({"protocol": "p", "results": results})
    data.update(command=command, commit="abc", date="2026-01-01")
    (folder / "cv_accuracy.json").write_text(json.dumps(data), encoding="utf-8")


def test_merge_keeps_the_entries_not_rerun_with_their_provenance(tmp_path):
    _write(tmp_path, {"diabetes": {"f1": 0.7}, "bc5cdr": {"f1": 0.1}}, "old run")
    got = merge_entries({"bc5cdr": {"f1": 0.8}}, tmp_path)
    assert got["bc5cdr"] == {"f1": 0.8}
    assert got["diabetes"] == {"f1": 0.7, "recorded_by": {
        "command": "old run", "commit": "abc", "date": "2026-01-01"}}


def test_merge_keeps_an_earlier_provenance_and_starts_a_new_file(tmp_path):
    first = {"command": "first", "commit": "0", "date": "2025"}
    _write(tmp_path, {"diabetes": {"f1": 0.7, "recorded_by": first}}, "second")
    assert merge_entries({}, tmp_path)["diabetes"]["recorded_by"] == first
    assert merge_entries({"x": {}}, tmp_path / "none") == {"x": {}}
