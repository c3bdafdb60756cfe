"""Fault injection: a worker killed mid-shard, a rerun, the output of an uninterrupted run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.conftest import write_shards, write_tiny_inputs
from tests.stream_faults import kill_and_rerun
from xlnel.config import load_config
from xlnel.pipeline import train
from xlnel.stream import link_shards


@pytest.fixture(scope="module")
def pipe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("faults")
    kb, docs = write_tiny_inputs(root)
    cfg = load_config(None, {"lang": "en", "data.train": str(docs), "dictionary.kb": [f"tsv:{kb}"],
                             "dft.R": 0.2, "filter.name": "xlnel.gbdt.v1",
                             "filter.options": {"folds": 2, "max_iter": 30}})
    train(cfg, root / "pipe")
    return root / "pipe"


def test_killed_worker_then_rerun_gives_the_uninterrupted_output(pipe_dir: Path,
                                                                 tmp_path: Path) -> None:
    write_shards(tmp_path / "in", 2, 500)
    link_shards(pipe_dir, tmp_path / "in", tmp_path / "reference", batch_size=1)
    run = kill_and_rerun(pipe_dir, tmp_path / "in", tmp_path / "out", tmp_path / "reference",
                         workers=2, batch_size=1, rng=random.Random(0), timeout=240,
                         max_delay=0.1)
    assert run.killed, "no worker was killed: the run ended before a shard was half written"
    assert run.first_exit != 0  # the broken pool is reported, not waited on for ever
    assert run.identical
    assert run.stale == ()
