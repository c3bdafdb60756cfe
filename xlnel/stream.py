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
import json
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
from typing import TYPE_CHECKING, Any, TypeVar, cast

from tqdm import tqdm

from xlnel.io.documents import guess_format, iter_documents, write_documents
from xlnel.scripts import watch_script
from xlnel.threads import ensure_threads, set_threads
from xlnel.types import Document

if TYPE_CHECKING:
    from xlnel.pipeline import Pipeline, SavedPipeline

logger = logging.getLogger(__name__)

__all__ = ["ShardResult", "batched", "check_link_output", "find_shards", "finished_shards",
           "link_file", "link_shards", "link_stream", "open_linker", "pipeline_folder",
           "plan_shards", "record_writer", "remove_stale_temporaries", "writer_identity"]

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
    lang = pipeline_lang(pipeline)
    with open_linker(pipeline, workers) as linker:
        yield from _linked(linker, watch_script(documents, lang), batch_size, progress)


def _linked(linker: BatchLinker, documents: Iterable[Document], batch_size: int,
            progress: bool) -> Iterator[Document]:
    with tqdm(desc="linking", unit="doc", disable=not progress) as bar:
        for batch in linker(batched(documents, batch_size)):
            yield from batch
            bar.update(len(batch))


class _Counter:
    """Counts the documents passing through, for the number :func:`link_file` returns, and
    the links whose id is a dictionary name (see :attr:`~xlnel.types.Link.id_kind`)."""

    def __init__(self) -> None:
        self.n = 0
        self.links = 0
        self.name_ids = 0

    def __call__(self, docs: Iterable[Document]) -> Iterator[Document]:
        for doc in docs:
            self.n += 1
            self.links += len(doc.entities)
            self.name_ids += sum(e.id_kind == "dictionary_name" for e in doc.entities)
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
        OutputError: When ``out`` is the source, lies inside the pipeline folder or the source
            folder, or has no known extension (checked before the pipeline is loaded).
    """
    check_link_output(pipeline, source, out)
    lang = pipeline_lang(pipeline)
    with open_linker(pipeline, workers) as linker:
        return _link_file(linker, source, out, batch_size, progress, lang)


def pipeline_lang(pipeline: str | Path | SavedPipeline | Pipeline) -> str | None:
    """The language a pipeline links (from its saved config), ``None`` when unknown."""
    from xlnel.config import load_config
    from xlnel.pipeline import Pipeline

    if isinstance(pipeline, Pipeline):
        return pipeline.config.lang
    folder = pipeline_folder(pipeline)
    config = Path(folder) / "config.yaml" if folder is not None else None
    return load_config(config).lang if config is not None and config.is_file() else None


def pipeline_folder(pipeline: str | Path | SavedPipeline | Pipeline) -> str | None:
    """The folder of a pipeline given by folder, ``None`` for a loaded pipeline object."""
    from xlnel.pipeline import SavedPipeline

    if isinstance(pipeline, SavedPipeline):
        return pipeline.folder
    if isinstance(pipeline, str | Path):
        return str(pipeline)
    return None


def check_link_output(pipeline: str | Path | SavedPipeline | Pipeline | None,
                      source: str | Path | None, out: str | Path) -> None:
    """Refuse an output of ``xlnel link`` that would destroy an input or names no format.

    Raises:
        OutputError: See :func:`link_file`.
    """
    from xlnel.outputs import check_disjoint, corpus_output_format

    folder = None if pipeline is None else pipeline_folder(pipeline)
    inputs = [p for p in (folder, source) if p is not None]
    check_disjoint(out, inputs, out_is_folder=Path(out).is_dir())
    corpus_output_format(out)


def _link_file(linker: BatchLinker, source: str | Path, out: str | Path, batch_size: int,
               progress: bool, lang: str | None = None) -> int:
    count = _Counter()
    docs = watch_script(iter_documents(source), lang)
    write_documents(out, count(_linked(linker, docs, batch_size, progress)))
    logger.info("linked %d documents from %s into %s", count.n, source, out)
    if count.name_ids and guess_format(out, for_writing=True) != "jsonl":
        logger.warning("%d of the %d links in %s have a dictionary name as concept id (the "
                       "dictionary gave those names no id), which this format cannot mark; "
                       "write .jsonl to get each link's id_kind", count.name_ids, count.links,
                       out)
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


def writer_identity(pipeline: str | Path | SavedPipeline | Pipeline) -> dict[str, Any] | None:
    """What identifies the pipeline writing shard outputs (``None`` for an unsaved one)."""
    from xlnel.pipeline import Pipeline, SavedPipeline

    identity = (pipeline.identity if isinstance(pipeline, Pipeline)
                else SavedPipeline.of(pipeline).identity())
    # As read back from the record: JSON turns tuples into lists.
    return cast(dict[str, Any] | None, json.loads(json.dumps(identity, default=str)))


def _record_path(target: Path) -> Path:
    return target.parent / f".{target.name}.xlnel.json"


def record_writer(target: Path, identity: dict[str, Any] | None) -> None:
    """Write beside ``target`` which pipeline writes it (before it is written)."""
    from xlnel.io._atomic import atomic_write

    with atomic_write(_record_path(target)) as f:
        f.write(json.dumps({"writer": identity}, default=str))


def _same_writer(recorded: Any, ours: dict[str, Any] | None) -> bool:
    if ours is None or not isinstance(recorded, dict):
        return False
    if recorded.get("overrides") != ours.get("overrides"):
        return False
    if recorded.get("pipeline_id") and ours.get("pipeline_id"):
        return bool(recorded["pipeline_id"] == ours["pipeline_id"])
    return bool(recorded.get("pipeline") == ours.get("pipeline"))


def finished_shards(plan: list[tuple[Path, Path]],
                    identity: dict[str, Any] | None) -> set[Path]:
    """The outputs of ``plan`` that this pipeline finished; refuse any other existing output.

    An output counts as finished when it exists and its record (written beside it before it
    was linked) names the same pipeline: the same trained folder (a retrained folder is
    another pipeline) with the same load overrides.

    Raises:
        OutputError: When an output is a shard itself, or exists but was written by another
            pipeline or by something that left no record.
    """
    from xlnel.errors import OutputError

    finished: set[Path] = set()
    for shard, target in plan:
        if shard.resolve() == target.resolve():
            raise OutputError(f"the output of shard {shard} is the shard itself: give an --out "
                              "folder other than the one holding the shards")
        if not target.exists():
            continue
        try:
            recorded = json.loads(_record_path(target).read_text(encoding="utf-8"))["writer"]
        except (OSError, ValueError, KeyError, TypeError):
            raise OutputError(f"{target} exists but was not written by xlnel link --shards (no "
                              f"record {_record_path(target).name}); give an empty or new --out "
                              "folder") from None
        if not _same_writer(recorded, identity):
            raise OutputError(
                f"{target} was written by another pipeline ({_describe(recorded)}), not by "
                f"{_describe(identity)}; link into another --out folder or remove the outputs "
                "of that run")
        finished.add(target)
    return finished


def _describe(identity: Any) -> str:
    if not isinstance(identity, dict):
        return "an unsaved pipeline"
    over = identity.get("overrides") or {}
    return (f"{identity.get('pipeline')} trained as {identity.get('pipeline_id')}"
            + (f" with --set {over}" if over else ""))


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

    Shards whose output exists and was written by the same pipeline are skipped (outputs are
    written atomically, so an existing one is complete); an output of another pipeline, or one
    with no record of its writer, is refused before any work (see :func:`finished_shards`).
    On one machine the shards are linked one after another, each with ``workers`` processes;
    with ``ray_address`` they are spread over a Ray cluster
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
    identity = writer_identity(pipeline)
    finished = finished_shards(plan, identity)
    results = [ShardResult(str(shard), str(target), 0, True, 0.0)
               for shard, target in plan if target in finished]
    todo = [(shard, target) for shard, target in plan if target not in finished]
    for r in results:
        logger.info("skipping %s: %s exists", r.source, r.target)
    if todo:
        lang = pipeline_lang(pipeline)
        with open_linker(pipeline, workers) as linker:
            for shard, target in todo:
                remove_stale_temporaries(target)
                record_writer(target, identity)
                t0 = time.perf_counter()
                n = _link_file(linker, shard, target, batch_size, progress, lang)
                results.append(ShardResult(str(shard), str(target), n, False,
                                           round(time.perf_counter() - t0, 3)))
    order = {str(shard): i for i, (shard, _) in enumerate(plan)}
    return sorted(results, key=lambda r: order[r.source])
