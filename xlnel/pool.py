"""A pool of worker processes that each load a saved pipeline once and link batches in order.

Used by :meth:`xlnel.runtime.Pipeline.pipe` and by corpus-scale linking
(:mod:`xlnel.corpus.stream`). Workers are spawned, not forked: a fork of a process that has run
OpenMP (scikit-learn, torch) can hang. Each worker limits its numeric libraries as the parent
does (:mod:`xlnel.threads`). Models are never pickled: a worker loads the pipeline folder.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from xlnel.threads import ensure_threads, set_threads
from xlnel.types import Document

if TYPE_CHECKING:
    from xlnel.runtime import Pipeline, SavedPipeline

__all__ = ["link_in_pool", "worker_pool"]

# One pipeline per worker process, set by the pool initializer: a process-wide slot is the only
# way a multiprocessing initializer can hand state to the tasks that run after it.
_WORKER_PIPELINE: Pipeline | BaseException | None = None


def _init_worker(pipeline: SavedPipeline, threads: int) -> None:
    global _WORKER_PIPELINE
    try:
        set_threads(threads)
        _WORKER_PIPELINE = pipeline.load()
    except Exception as e:
        # An exception escaping an initializer makes the pool respawn workers for ever; keep it
        # and raise it from the first task, so the parent sees it.
        _WORKER_PIPELINE = e


def _link_in_worker(batch: list[Document]) -> list[Document]:
    if isinstance(_WORKER_PIPELINE, BaseException):
        raise _WORKER_PIPELINE
    if _WORKER_PIPELINE is None:  # pragma: no cover - the initializer always ran
        raise RuntimeError("worker pipeline not loaded")
    return _WORKER_PIPELINE.link_batch(batch)


@contextlib.contextmanager
def worker_pool(pipeline: SavedPipeline, workers: int) -> Iterator[ProcessPoolExecutor]:
    """``workers`` spawned processes, each loading ``pipeline`` once; shut down on exit.

    Raises:
        ValueError: When ``workers`` is below 1.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    executor = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"),
                                   initializer=_init_worker,
                                   initargs=(pipeline, ensure_threads()))
    try:
        yield executor
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def link_in_pool(executor: ProcessPoolExecutor, batches: Iterable[list[Document]],
                 max_pending: int) -> Iterator[list[Document]]:
    """Link ``batches`` in the pool's workers, yielding them in input order.

    At most ``max_pending`` batches are in flight, so memory stays bounded while every worker
    is busy.

    Raises:
        BrokenProcessPool: When a worker process dies (killed, out of memory): every pending
            batch fails at once instead of waiting for ever.
    """
    pending: deque[Future[list[Document]]] = deque()
    try:
        for batch in batches:
            pending.append(executor.submit(_link_in_worker, batch))
            if len(pending) >= max_pending:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool as e:
        raise BrokenProcessPool(f"a worker process died while linking ({e}); the output being "
                                "written was removed; run again to redo it") from e
    finally:
        for future in pending:
            future.cancel()
