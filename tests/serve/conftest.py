"""A tiny English pipeline and a tiny Hebrew one, trained once per test session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import KB_ROWS, make_documents
from xlnel.config import load_config
from xlnel.pipeline import train

HEBREW_KB = [("C1", "סוכרת", "Diabetes mellitus"), ("C2", "יתר לחץ דם", "Hypertension"),
             ("C3", "אינסולין", "Insulin")]


def _write_kb(path: Path, rows: list[tuple[str, str, int]], typed: bool) -> Path:
    header = "concept_id\tname\tpreferred" + ("\ttype" if typed else "")
    lines = [header] + [f"{c}\t{n}\t{p}" + ("\tDisorder" if typed else "") for c, n, p in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def en_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """English, the tiny KB typed ``Disorder``; filter: cosine >= 0.9."""
    d = tmp_path_factory.mktemp("en")
    kb = _write_kb(d / "kb.tsv", KB_ROWS, typed=True)
    docs = d / "docs.jsonl"
    docs.write_text("".join(json.dumps(x) + "\n" for x in make_documents(1)), encoding="utf-8")
    cfg = load_config(None, {"lang": "en", "dictionary.kb": [f"tsv:{kb}"], "dft.R": 0.0,
                             "filter.name": "xlnel.similarity.v1", "filter.threshold": 0.9})
    train(cfg, d / "pipe")
    return d / "pipe"


@pytest.fixture(scope="session")
def he_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Hebrew names of three concepts with their English preferred names first."""
    d = tmp_path_factory.mktemp("he")
    rows: list[tuple[str, str, int]] = []
    for cid, hebrew, english in HEBREW_KB:
        rows += [(cid, english, 1), (cid, hebrew, 0)]
    kb = _write_kb(d / "kb.tsv", rows, typed=False)
    cfg = load_config(None, {"lang": "he", "dictionary.kb": [f"tsv:{kb}"], "dft.R": 0.0,
                             "filter.name": "xlnel.similarity.v1", "filter.threshold": 0.9})
    train(cfg, d / "pipe")
    return d / "pipe"
