"""Fixtures of the dense linker tests: a tiny dictionary and a tiny random BERT encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

NAMES = {"diabetes": "D1", "diabetes mellitus": "D1", "asthma": "D2", "hypertension": "D3",
         "high blood pressure": "D3", "insulin": "C1", "metformin": "C2", "aspirin": "C3",
         "insulin pump": "C4", "migraine": "D5"}
WORDS = ["the", "patient", "has", "and", "takes", "daily", "severe", "type", "foot", "of",
         "with", "pain", "problems"]


@pytest.fixture(scope="session")
def tiny_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT (bare encoder) knowing the dictionary and corpus words."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from xlnel.models.testing import tiny_bert

    words = sorted({w for n in NAMES for w in n.split()} | set(WORDS))
    return tiny_bert(tmp_path_factory.mktemp("tiny_encoder"), words)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedding caches go to a temporary folder, never the user's."""
    monkeypatch.setenv("XLNEL_CACHE", str(tmp_path / "cache"))
