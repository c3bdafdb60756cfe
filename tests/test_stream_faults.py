"""Fault injection: a worker killed mid-shard, a rerun, the output of an uninterrupted run."""

from __future__ import annotations

import random
from pathlib import Path

from tests.conftest import write_shards
from tests.stream_faults import kill_and_rerun
from xlnel.stream import link_shards


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
