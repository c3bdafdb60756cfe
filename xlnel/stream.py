"""Corpus-scale linking on one machine: streamed, batched, optionally on several processes.

Documents are read lazily (:func:`~xlnel.io.documents.iter_documents`), linked batch by batch and
written as they come to a temporary file that replaces the output only at the end, so memory is
bounded by the batch size (times the batches in flight), not by the corpus, and a failed run
leaves no partial output. With ``workers > 1`` the batches go to a pool of processes that each
load the saved pipeline once; results come back in input order, so the output is byte for byte
that of one process.

A corpus split into shard files can be linked shard by shard (:func:`link_shards`): each shard
gets its own output file, written atomically, and a shard whose output already exists is
skipped, so an interrupted run resumes where it stopped. :mod:`xlnel.distributed` runs the same
shard plan on a Ray cluster.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import multiprocessing as mp
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tqdm import tqdm

from xlnel.io.documents import iter_documents, write_documents
from xlnel.threads import ensure_threads, set_threads
from xlnel.types import Document

if TYPE_CHECKING:
    from xlnel.pipeline import Pipeline, SavedPipeline

logger = logging.getLogger(__name__)

__all__ = ["ShardResult", "batched", "find_shards", "link_file", "link_shards", "link_stream",
           "open_linker", "plan_shards", "remove_stale_temporaries"]

T = TypeVar("T")

#: Suffixes (before an optional ``.gz``) of the files taken as shards in a folder.
SHARD_SUFFIXES = (".jsonl", ".json", ".pubtator", ".txt")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last one shorter), read lazily.

    Raises:
        ValueError: When ``size`` is below 1.
    """
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


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


BatchLinker = Callable[[Iterable[list[Document]]], Iterator[list[Document]]]


@contextlib.contextmanager
def open_linker(pipeline: str | Path | SavedPipeline | Pipeline,
                workers: int = 1) -> Iterator[BatchLinker]:
    """A function that links batches of documents and yields them in order, ready for reuse.

    With ``workers > 1`` a pool of processes is started, each loading the pipeline once, and
    stays up until the ``with`` block ends, so several files can be linked without reloading.

    Args:
        pipeline: A loaded pipeline, or its folder (optionally with load-time overrides, a
            :class:`~xlnel.pipeline.SavedPipeline`). ``workers > 1`` needs the folder: each
            worker process loads it once (models are never pickled).
        workers: Processes; 1 links in this process. Workers are spawned, not forked: a fork
            of a process that has run OpenMP (scikit-learn, torch) can hang. Each worker
            limits its numeric libraries as this process does (:mod:`xlnel.threads`).

    Raises:
        ValueError: When ``workers`` is below 1, or above 1 with a loaded pipeline.
    """
    from xlnel.pipeline import Pipeline, SavedPipeline

    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if workers == 1:
        pipe = (pipeline if isinstance(pipeline, Pipeline)
                else SavedPipeline.of(pipeline).load())
        yield lambda batches: (pipe.link_batch(b) for b in batches)
        return
    if isinstance(pipeline, Pipeline):
        raise ValueError("workers > 1 needs the pipeline folder, not a loaded Pipeline: "
                         "each worker process loads it once")
    executor = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"),
                                   initializer=_init_worker,
                                   initargs=(SavedPipeline.of(pipeline), ensure_threads()))
    try:
        yield lambda batches: _link_in_pool(executor, batches, 2 * workers)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def _link_in_pool(executor: ProcessPoolExecutor, batches: Iterable[list[Document]],
                  max_pending: int) -> Iterator[list[Document]]:
    # A bounded window of pending batches keeps memory bounded while every worker stays busy.
    # A worker that dies (killed, out of memory) breaks the executor: every pending batch fails
    # with BrokenProcessPool instead of waiting for ever, as multiprocessing.Pool would.
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


def link_stream(pipeline: str | Path | SavedPipeline | Pipeline, documents: Iterable[Document],
                batch_size: int = 64, workers: int = 1,
                progress: bool = False) -> Iterator[Document]:
    """Link documents batch by batch and yield them in input order, reading the input lazily.

    Args:
        pipeline: A loaded pipeline or its folder (a folder for ``workers > 1``).
        documents: Documents to link; consumed lazily.
        batch_size: Documents per batch; the unit sent to a worker.
        workers: Processes; 1 links in this process.
        progress: Show a progress bar (documents linked).

    Yields:
        The linked documents, in the order of ``documents``.

    Raises:
        ValueError: When ``workers`` or ``batch_size`` is below 1, or ``workers > 1`` with a
            pipeline object instead of a folder.
    """
    with open_linker(pipeline, workers) as linker:
        yield from _linked(linker, documents, batch_size, progress)


def _linked(linker: BatchLinker, documents: Iterable[Document], batch_size: int,
            progress: bool) -> Iterator[Document]:
    with tqdm(desc="linking", unit="doc", disable=not progress) as bar:
        for batch in linker(batched(documents, batch_size)):
            yield from batch
            bar.update(len(batch))


class _Counter:
    """Counts the documents passing through, for the number :func:`link_file` returns."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, docs: Iterable[Document]) -> Iterator[Document]:
        for doc in docs:
            self.n += 1
            yield doc


def link_file(pipeline: str | Path | SavedPipeline | Pipeline, source: str | Path, out: str | Path,
              batch_size: int = 64, workers: int = 1, progress: bool = False) -> int:
    """Link the corpus file ``source`` into ``out``, streaming, with bounded memory.

    The input is read lazily and the output written incrementally to a temporary file beside
    ``out`` that replaces it only when every document was written; on an error (a malformed
    input line, a failing worker) the temporary file is removed and ``out`` is left as it was.

    Args:
        pipeline: A loaded pipeline or its folder (a folder for ``workers > 1``).
        source: JSONL or PubTator file, optionally ``.gz`` (BRAT folders are read whole).
        out: Output file; the format follows its extension, ``.gz`` compresses it.
        batch_size: Documents per batch.
        workers: Processes (see :func:`link_stream`).
        progress: Show a progress bar.

    Returns:
        The number of documents written.

    Raises:
        FileNotFoundError: When ``source`` does not exist.
        FormatError: Naming the file and line of a malformed input line.
    """
    with open_linker(pipeline, workers) as linker:
        return _link_file(linker, source, out, batch_size, progress)


def _link_file(linker: BatchLinker, source: str | Path, out: str | Path, batch_size: int,
               progress: bool) -> int:
    count = _Counter()
    docs = iter_documents(source)
    write_documents(out, count(_linked(linker, docs, batch_size, progress)))
    logger.info("linked %d documents from %s into %s", count.n, source, out)
    return count.n


@dataclass(frozen=True)
class ShardResult:
    """What happened to one input shard.

    Attributes:
        source: The input shard file.
        target: Its output file.
        documents: Documents linked (0 when skipped).
        skipped: The output existed already (an earlier run finished this shard).
        seconds: Wall time spent on the shard.
    """

    source: str
    target: str
    documents: int
    skipped: bool
    seconds: float


def find_shards(source: str | Path) -> list[Path]:
    """The shard files of a folder (corpus files by extension) or a glob pattern, sorted.

    Raises:
        FileNotFoundError: When nothing matches.
    """
    text = str(source)
    if Path(text).is_dir():
        paths = [p for p in Path(text).iterdir() if p.is_file() and _is_corpus_file(p)]
    else:
        paths = [Path(p) for p in glob.glob(text) if Path(p).is_file()]
    if not paths:
        raise FileNotFoundError(f"no shard files in {source}: give a folder of "
                                f"{'/'.join(SHARD_SUFFIXES)} files (optionally .gz) or a glob")
    return sorted(paths)


def _is_corpus_file(path: Path) -> bool:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    return not path.name.startswith(".") and bool(suffixes) and suffixes[-1] in SHARD_SUFFIXES


def plan_shards(source: str | Path, out_dir: str | Path) -> list[tuple[Path, Path]]:
    """Pair each shard of ``source`` with its output file in ``out_dir`` (same file name).

    Raises:
        FileNotFoundError: When ``source`` holds no shard files.
        ValueError: When two shards share a file name (their outputs would collide).
    """
    shards = find_shards(source)
    out = Path(out_dir)
    targets: dict[str, Path] = {}
    for shard in shards:
        if shard.name in targets:
            raise ValueError(f"shards {targets[shard.name]} and {shard} have the same file name "
                             f"and would write the same output in {out}")
        targets[shard.name] = shard
    return [(shard, out / shard.name) for shard in shards]


def remove_stale_temporaries(target: Path) -> None:
    """Remove temporary files an interrupted writer of ``target`` left behind."""
    for tmp in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
            logger.info("removed stale temporary file %s", tmp)


def link_shards(pipeline: str | Path | SavedPipeline | Pipeline, source: str | Path,
                out_dir: str | Path, batch_size: int = 64, workers: int = 1,
                ray_address: str | None = None, progress: bool = False) -> list[ShardResult]:
    """Link every shard of ``source`` into a file of the same name in ``out_dir``; resumable.

    Shards whose output exists are skipped (outputs are written atomically, so an existing one
    is complete). On one machine the shards are linked one after another, each with ``workers``
    processes; with ``ray_address`` they are spread over a Ray cluster
    (:func:`xlnel.distributed.link_shards_ray`).

    Args:
        pipeline: The pipeline folder (or, on this machine with one worker, a loaded pipeline).
        source: A folder of shard files or a glob pattern (quote it in a shell).
        out_dir: Output folder; created when missing.
        batch_size: Documents per batch.
        workers: Processes on this machine, or Ray actors (each loads the pipeline once).
        ray_address: ``None`` for this machine; ``auto``, ``ray://host:port`` or ``host:port``
            for a running Ray cluster; ``local`` to start a private one on this machine.
        progress: Show progress bars.

    Returns:
        One result per shard, in shard order.
    """
    if ray_address is not None:
        from xlnel.distributed import link_shards_ray
        from xlnel.pipeline import Pipeline

        if isinstance(pipeline, Pipeline):
            raise ValueError("linking on Ray needs the pipeline folder, not a loaded Pipeline")

        return link_shards_ray(pipeline, source, out_dir, ray_address, batch_size, workers,
                               progress)
    plan = plan_shards(source, out_dir)
    results = [ShardResult(str(shard), str(target), 0, True, 0.0)
               for shard, target in plan if target.exists()]
    todo = [(shard, target) for shard, target in plan if not target.exists()]
    for r in results:
        logger.info("skipping %s: %s exists", r.source, r.target)
    if todo:
        with open_linker(pipeline, workers) as linker:
            for shard, target in todo:
                remove_stale_temporaries(target)
                t0 = time.perf_counter()
                n = _link_file(linker, shard, target, batch_size, progress)
                results.append(ShardResult(str(shard), str(target), n, False,
                                           round(time.perf_counter() - t0, 3)))
    order = {str(shard): i for i, (shard, _) in enumerate(plan)}
    return sorted(results, key=lambda r: order[r.source])
