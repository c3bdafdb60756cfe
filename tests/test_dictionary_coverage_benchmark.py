"""``python -m benchmarks dictionary_coverage`` refuses bad arguments with a usage message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_dictionary_folder_without_dictionary_tsv_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks", "dictionary_coverage",
                           "--dictionary", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "usage:" in done.stderr and "Traceback" not in done.stderr
    assert f"--dictionary {tmp_path}: no dictionary.tsv there" in done.stderr
