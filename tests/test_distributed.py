"""Sharded linking on Ray (a private local cluster): same bytes as one process, resumable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import write_shards
from xlnel.cli.main import app
from xlnel.pipeline import link
from xlnel.stream import link_shards, record_writer, writer_identity


@pytest.fixture(scope="session")
def ray_local() -> Iterator[None]:
    """One Ray instance for the session (start-up costs seconds); skip where it cannot start."""
    ray = pytest.importorskip("ray", reason="ray[data] is not installed (pip install -e .[dev])")
    pytest.importorskip("ray.data", reason="ray[data] is not installed")
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception as e:  # sandboxes without shared memory or local ports
        pytest.skip(f"ray cannot start here: {e}")
    yield
    ray.shutdown()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside Ray Data itself
def test_ray_shards_equal_single_process_and_resume(ray_local: None, pipe_dir: Path,
                                                    tmp_path: Path) -> None:
    shards = write_shards(tmp_path / "in", 3, 5)
    out = tmp_path / "out"
    out.mkdir()
    (out / "part-00.jsonl").write_text("done before\n", encoding="utf-8")
    record_writer(out / "part-00.jsonl", writer_identity(pipe_dir))  # left by a run of pipe_dir
    (out / ".part-02.jsonl.abc.tmp").write_text("left by a killed run", encoding="utf-8")

    results = link_shards(pipe_dir, tmp_path / "in", out, batch_size=2, workers=2,
                          ray_address="local")

    assert [(Path(r.source).name, r.skipped, r.documents) for r in results] == \
        [("part-00.jsonl", True, 0), ("part-01.jsonl.gz", False, 5), ("part-02.jsonl", False, 5)]
    assert (out / "part-00.jsonl").read_text(encoding="utf-8") == "done before\n"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == \
        ["part-00.jsonl", "part-01.jsonl.gz", "part-02.jsonl"]
    assert not list(out.glob(".*.tmp"))
    for shard in shards[1:]:
        single = tmp_path / "single" / shard.name
        link(pipe_dir, shard, single, batch_size=2)
        assert (out / shard.name).read_bytes() == single.read_bytes(), shard.name

    # A second run finds every shard done and starts no job.
    r = CliRunner().invoke(app, ["link", str(pipe_dir), str(tmp_path / "in" / "part-*"),
                                 "--out", str(out), "--ray", "local", "--batch-size", "2"])
    assert r.exit_code == 0, r.output
    assert "linked 0 documents in 0 shards (3 already done)" in r.output


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_ray_actors_load_with_the_overrides(ray_local: None, pipe_dir: Path,
                                            tmp_path: Path) -> None:
    from xlnel.pipeline import Pipeline, SavedPipeline

    overrides = {"candidates.top_m": 1, "filter.threshold": 0.0}
    shards = write_shards(tmp_path / "in", 2, 4)
    link_shards(SavedPipeline.of(pipe_dir, overrides), tmp_path / "in", tmp_path / "out",
                batch_size=2, workers=2, ray_address="local")
    for shard in shards:
        link(Pipeline.load(pipe_dir, overrides), shard, tmp_path / "single" / shard.name,
             batch_size=2)
        assert (tmp_path / "out" / shard.name).read_bytes() == \
            (tmp_path / "single" / shard.name).read_bytes()
