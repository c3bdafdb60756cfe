"""Sharded corpus linking as a Ray Data job (``xlnel link --ray``); needs ``xlnel[distributed]``.

The input is a set of shard files (JSONL, PubTator or BioC, optionally ``.gz``). The job is a Ray
dataset with one row per shard still to do, mapped by a pool of actors that each load the saved
pipeline once and link a whole shard per call, streaming it into its output file (same name, in
the output folder) through a temporary file that is renamed at the end. A shard's output thus
exists only once complete, so a job started again skips the shards already done (resume).

Every node must see the pipeline folder, the shards and the output folder at the same paths
(a shared file system); on one machine (``local``) that holds by itself. A shard is linked
exactly as :func:`xlnel.corpus.stream.link_file` would link it, so the outputs are byte for
byte those of a single process.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from xlnel.corpus.shards import (
    ShardResult,
    finished_shards,
    plan_shards,
    record_writer,
    remove_stale_temporaries,
    writer_identity,
)
from xlnel.corpus.stream import link_file
from xlnel.runtime import SavedPipeline
from xlnel.threads import DEFAULT_THREADS, ensure_threads, set_threads

logger = logging.getLogger(__name__)

__all__ = ["ShardLinker", "link_shards_ray"]


class ShardLinker:
    """Ray Data actor: loads the pipeline once, then links whole shards, one file per row.

    Args:
        pipeline: The pipeline folder (the same path on every node) and its load overrides.
        batch_size: Documents per batch inside a shard.
        threads: Threads of each numeric library in the actor (:func:`xlnel.set_threads`).
    """

    def __init__(self, pipeline: SavedPipeline, batch_size: int,
                 threads: int = DEFAULT_THREADS) -> None:
        set_threads(threads)
        self.pipeline = pipeline.load()
        self.batch_size = batch_size

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list[Any]]:
        """Link the shards ``batch["source"]`` into ``batch["target"]``; report counts."""
        out: dict[str, list[Any]] = {"source": [], "target": [], "documents": [], "seconds": []}
        for source, target in zip(batch["source"], batch["target"], strict=True):
            remove_stale_temporaries(Path(target))
            t0 = time.perf_counter()
            n = link_file(self.pipeline, str(source), str(target), self.batch_size)
            out["source"].append(str(source))
            out["target"].append(str(target))
            out["documents"].append(n)
            out["seconds"].append(round(time.perf_counter() - t0, 3))
        return out


def _init_ray(address: str, workers: int) -> bool:
    """Connect to (or start) Ray unless already connected; whether this call started it."""
    import ray

    if ray.is_initialized():
        return False
    if address == "local":
        # A private single-machine cluster sized to the actors; no dashboard to save start-up.
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    return True


def link_shards_ray(pipeline: str | Path | SavedPipeline, source: str | Path, out_dir: str | Path,
                    address: str = "auto", batch_size: int = 64, workers: int = 1,
                    progress: bool = False) -> list[ShardResult]:
    """Link every shard of ``source`` into ``out_dir`` with a Ray Data job; resumable.

    Args:
        pipeline: The pipeline folder (seen by every node at this path), optionally with
            load-time overrides (:class:`~xlnel.pipeline.SavedPipeline`).
        source: A folder of shard files or a glob pattern.
        out_dir: Output folder (created when missing); one file per shard, same name.
        address: ``auto`` or an address (``ray://host:port``, ``host:port``) of a running
            cluster, or ``local`` to start a private one with ``workers`` CPUs. When Ray is
            already initialised in this process, that connection is used as it is.
        batch_size: Documents per batch inside a shard.
        workers: Actors, each loading the pipeline once and using one CPU.
        progress: Show Ray Data's progress bars.

    Returns:
        One result per shard, in shard order; shards whose output existed are ``skipped``.

    Raises:
        ImportError: When Ray is not installed (``pip install 'xlnel[distributed]'``).
        FileNotFoundError: When ``source`` holds no shard files.
    """
    try:
        import ray
        import ray.data
    except ImportError as e:
        raise ImportError("linking on Ray needs ray[data]: pip install 'xlnel[distributed]'") from e
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    spec = SavedPipeline.of(pipeline)
    saved = SavedPipeline(str(Path(spec.folder).resolve()), spec.overrides)
    plan = [(s.resolve(), t.resolve()) for s, t in plan_shards(source, out_dir)]
    identity = writer_identity(saved)
    finished = finished_shards(plan, identity)
    todo = [{"source": str(s), "target": str(t)} for s, t in plan if t not in finished]
    for _, target in plan:
        if target not in finished:
            record_writer(target, identity)
    logger.info("%d shards, %d to link", len(plan), len(todo))
    done: dict[str, ShardResult] = {}
    if todo:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        started = _init_ray(address, workers)
        try:
            ray.data.DataContext.get_current().enable_progress_bars = progress
            rows = (ray.data.from_items(todo, override_num_blocks=len(todo))
                    .map_batches(ShardLinker, batch_size=1, num_cpus=1,
                                 compute=ray.data.ActorPoolStrategy(size=min(workers, len(todo))),
                                 fn_constructor_args=(saved, batch_size, ensure_threads()))
                    .take_all())
        finally:
            if started:
                ray.shutdown()
        for row in rows:
            done[row["source"]] = ShardResult(row["source"], row["target"], int(row["documents"]),
                                              False, float(row["seconds"]))
    return [done.get(str(s), ShardResult(str(s), str(t), 0, True, 0.0)) for s, t in plan]
