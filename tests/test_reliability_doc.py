"""The figures of docs/reliability-load.md come from the results files."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import reliability_doc

PROVENANCE = {"command": "benchmarks/x.py", "commit": "0123456789abcdef", "date": "2026-01-02T0",
              "machine": {"cpus": 2}}


def test_blocks_are_filled_from_results_and_text_around_is_kept(tmp_path: Path) -> None:
    (tmp_path / "fault_injection.json").write_text(json.dumps({"results": {
        "runs": 3, "kills": 2, "failures": 0, "seconds": 12.4, "shards": 3,
        "documents_per_shard": 10, "workers": 2}, **PROVENANCE}), encoding="utf-8")
    text = ("intro\n<!-- figures fault_injection -->\nold table\n<!-- /figures -->\n"
            "<!-- figures missing -->\nkept\n<!-- /figures -->\nend\n")
    out = reliability_doc.render(text, tmp_path)
    assert out.startswith("intro\n<!-- figures fault_injection -->\n| runs |")
    assert "| 3 | 2 | 0 | 12 |" in out and "old table" not in out
    assert "<!-- figures missing -->\nkept\n<!-- /figures -->\nend\n" in out
    assert "commit `0123456789`" in out
    assert reliability_doc.render(out, tmp_path) == out


def test_committed_page_matches_the_results() -> None:
    page = reliability_doc.DOC.read_text(encoding="utf-8")
    assert reliability_doc.render(page) == page
