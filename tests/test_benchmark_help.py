"""Every benchmark answers ``--help`` without running: no results file is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.__main__ import available

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def _stamps() -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in RESULTS.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", sorted(available()))
def test_help_runs_nothing(name: str) -> None:
    before = _stamps()
    done = subprocess.run([sys.executable, "-m", "benchmarks", name, "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
    assert _stamps() == before
