"""The data folder beside the repository (``../shared/data``) for the slow tests."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(relative: str) -> Path:
    """``DATA / relative``; skips the test when the file is not there."""
    path = DATA / relative
    if not path.exists():
        pytest.skip(f"shared data file {path} is not available")
    return path
