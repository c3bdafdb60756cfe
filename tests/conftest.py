"""Shared fixtures: a tiny knowledge base, a handful of annotated documents in each format, shards
of them, and a tiny trained GBDT pipeline."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from xlnel.config import load_config
from xlnel.pipeline import train

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


def write_tiny_inputs(root: Path) -> tuple[Path, Path]:
    """A tiny KB and training corpus (as in conftest); returns (kb, docs)."""
    kb, docs = root / "kb.tsv", root / "docs.jsonl"
    kb.write_text("concept_id\tname\tpreferred\n"
                  + "".join(f"{c}\t{n}\t{p}\n" for c, n, p in KB_ROWS), encoding="utf-8")
    docs.write_text("".join(json.dumps(d) + "\n" for d in make_documents()), encoding="utf-8")
    return kb, docs


def write_shards(folder: Path, n_shards: int, per_shard: int) -> list[Path]:
    """Shards of the fixture sentences, JSONL, the second one gzipped."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = make_documents(n_copies=(n_shards * per_shard) // 8 + 1)
    paths = []
    for i in range(n_shards):
        name = f"part-{i:02d}.jsonl" + (".gz" if i == 1 else "")
        text = "".join(json.dumps(d) + "\n" for d in docs[i * per_shard:(i + 1) * per_shard])
        path = folder / name
        path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
        paths.append(path)
    return paths


@pytest.fixture(scope="session")
def pipe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny GBDT pipeline, trained once for the session; tests only read it."""
    root = tmp_path_factory.mktemp("stream")
    kb, docs = write_tiny_inputs(root)
    cfg = load_config(None, {"lang": "en", "data.train": str(docs), "dictionary.kb": [f"tsv:{kb}"],
                             "dft.R": 0.2, "filter.name": "xlnel.gbdt.v1",
                             "filter.options": {"folds": 2, "max_iter": 30}})
    train(cfg, root / "pipe")
    return root / "pipe"


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """Tiny torch models run faster on one intra-op thread, above all on a busy machine
    (``pytestmark = pytest.mark.usefixtures("one_thread")`` in a module)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
