"""Shared fixtures: a tiny knowledge base and a handful of annotated documents in each format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

KB_ROWS = [
    ("C1", "diabetes mellitus", 1), ("C1", "diabetes", 0), ("C2", "hypertension", 1),
    ("C2", "high blood pressure", 0), ("C3", "insulin", 1), ("C4", "asthma", 1),
    ("C5", "migraine", 1), ("C6", "metformin", 1),
]

SENTENCES = [
    ("She has diabetes and takes insulin daily.", [("diabetes", "C1"), ("insulin", "C3")]),
    ("His hypertension got worse last winter.", [("hypertension", "C2")]),
    ("Asthma attacks and a migraine kept him home.", [("Asthma", "C4"), ("migraine", "C5")]),
    ("The doctor added metformin for the diabetes mellitus.",
     [("metformin", "C6"), ("diabetes mellitus", "C1")]),
    ("We talked about the weather and the football match.", []),
    ("High blood pressure runs in the family.", [("High blood pressure", "C2")]),
    ("Insulin pumps help people with diabetes.", [("Insulin", "C3"), ("diabetes", "C1")]),
    ("A migraine is not the same as a headache from noise.", [("migraine", "C5")]),
]


def make_documents(n_copies: int = 3) -> list[dict]:
    docs = []
    for copy in range(n_copies):
        for i, (text, mentions) in enumerate(SENTENCES):
            ents, pos = [], 0
            for mention, cid in mentions:
                start = text.index(mention, pos)
                ents.append({"start": start, "end": start + len(mention), "text": mention,
                             "type": "Disorder", "concept_id": cid})
                pos = start + len(mention)
            docs.append({"id": f"doc-{copy}-{i}", "text": text, "entities": ents})
    return docs


@pytest.fixture()
def tiny_kb(tmp_path: Path) -> Path:
    path = tmp_path / "kb.tsv"
    lines = ["concept_id\tname\tpreferred"] + [f"{c}\t{n}\t{p}" for c, n, p in KB_ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def tiny_docs(tmp_path: Path) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in make_documents()), encoding="utf-8")
    return path


@pytest.fixture()
def tiny_config(tmp_path: Path, tiny_kb: Path, tiny_docs: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        f"lang: en\ndata:\n  train: {tiny_docs}\n  test_fraction: 0.25\n"
        f"dictionary:\n  kb: ['tsv:{tiny_kb}']\ndft:\n  R: 0.2\n"
        "filter:\n  name: xlnel.gbdt.v1\n  options: {folds: 2, max_iter: 30}\n",
        encoding="utf-8")
    return path
