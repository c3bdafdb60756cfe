"""Corpus-scale linking on one machine: streamed, batched, optionally on several processes.

Documents are read lazily (:func:`~xlnel.io.documents.iter_documents`), linked batch by batch and
written as they come to a temporary file that replaces the output only at the end, so memory is
bounded by the batch size (times the batches in flight), not by the corpus, and a failed run
leaves no partial output. With ``workers > 1`` the batches go to a pool of processes that each
load the saved pipeline once; results come back in input order, so the output is byte for byte
that of one process.

A corpus split into shard files is linked shard by shard by
:func:`xlnel.corpus.linking.link_shards` (:mod:`xlnel.corpus.shards` plans the shards).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from tqdm import tqdm

from xlnel.io.documents import guess_format, iter_documents, write_documents
from xlnel.outputs import check_disjoint, output_format
from xlnel.pool import link_in_pool, worker_pool
from xlnel.runtime import (
    PipelineSource,
    batched,
    open_pipeline,
    pipeline_folder,
    pipeline_lang,
    saved_pipeline,
)
from xlnel.scripts import watch_script
from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["BatchLinker", "check_link_output", "link_batches_into", "link_file", "link_stream",
           "open_linker"]


BatchLinker = Callable[[Iterable[list[Document]]], Iterator[list[Document]]]


@contextlib.contextmanager
def open_linker(pipeline: PipelineSource,
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
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if workers == 1:
        pipe = open_pipeline(pipeline)
        yield lambda batches: (pipe.link_batch(b) for b in batches)
        return
    saved = saved_pipeline(pipeline)
    if saved is None:
        raise ValueError("workers > 1 needs the pipeline folder, not a loaded Pipeline: "
                         "each worker process loads it once")
    with worker_pool(saved, workers) as executor:
        yield lambda batches: link_in_pool(executor, batches, 2 * workers)


def link_stream(pipeline: PipelineSource, documents: Iterable[Document],
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


def link_file(pipeline: PipelineSource, source: str | Path, out: str | Path | IO[str],
              batch_size: int = 64, workers: int = 1, progress: bool = False,
              format: str | None = None, out_format: str | None = None) -> int:
    """Link the corpus file ``source`` into ``out``, streaming, with bounded memory.

    The input is read lazily and the output written incrementally to a temporary file beside
    ``out`` that replaces it only when every document was written; on an error (a malformed
    input line, a failing worker) the temporary file is removed and ``out`` is left as it was.

    Args:
        pipeline: A loaded pipeline or its folder (a folder for ``workers > 1``).
        source: JSONL, PubTator or BioC file, optionally ``.gz`` (BRAT folders are read whole).
        out: Output file (the format follows its extension, ``.gz`` compresses it), or an
            open text stream (``sys.stdout``), written a document at a time.
        batch_size: Documents per batch.
        workers: Processes (see :func:`link_stream`).
        progress: Show a progress bar.
        format: ``source``'s format (one of :data:`xlnel.io.FORMATS`); ``None`` tells it from
            the name.
        out_format: ``out``'s format (``jsonl``, ``pubtator``, ``bioc``, ``biocjson`` or
            ``brat``); ``None`` tells it from the name.

    Returns:
        The number of documents written.

    Raises:
        FileNotFoundError: When ``source`` does not exist.
        FormatError: Naming the file and line of a malformed input line.
        OutputError: When ``out`` is the source, lies inside the pipeline folder or the source
            folder, or has no known extension and no ``out_format`` (checked before the
            pipeline is loaded).
    """
    out_format = check_link_output(pipeline, source, out, out_format)
    lang = pipeline_lang(pipeline)
    with open_linker(pipeline, workers) as linker:
        return link_batches_into(linker, source, out, batch_size, progress, lang, format,
                                 out_format)


def check_link_output(pipeline: PipelineSource | None, source: str | Path | None,
                      out: str | Path | IO[str], out_format: str | None = None) -> str:
    """Refuse an output of ``xlnel link`` that would destroy an input or names no format;
    return the format to write (see :func:`xlnel.outputs.output_format`).

    Raises:
        OutputError: See :func:`link_file`.
        ValueError: When ``out_format`` is not a format that can be written (to a stream:
            BRAT cannot).
    """
    fmt = output_format(out, out_format)
    if isinstance(out, str | Path):
        folder = None if pipeline is None else pipeline_folder(pipeline)
        inputs = [p for p in (folder, source) if p is not None]
        check_disjoint(out, inputs, out_is_folder=Path(out).is_dir() or fmt == "brat")
    return fmt


def link_batches_into(linker: BatchLinker, source: str | Path, out: str | Path | IO[str],
                      batch_size: int, progress: bool, lang: str | None = None,
                      format: str | None = None, out_format: str | None = None) -> int:
    """Link the corpus file ``source`` into ``out`` (in ``out_format``, else the format its name
    tells) with an open ``linker`` (see :func:`open_linker`); returns the number of documents
    written."""
    count = _Counter()
    docs = watch_script(iter_documents(source, format), lang)
    if out_format is None:
        out_format = guess_format(out, for_writing=True) if isinstance(out, str | Path) else "jsonl"
    write_documents(out, count(_linked(linker, docs, batch_size, progress)), out_format)
    where = out if isinstance(out, str | Path) else getattr(out, "name", out)
    logger.info("linked %d documents from %s into %s", count.n, source, where)
    if count.name_ids and out_format in ("pubtator", "brat"):
        logger.warning("%d of the %d links in %s have a dictionary name as concept id (the "
                       "dictionary gave those names no id), which this format cannot mark; "
                       "write .jsonl, .xml or .bioc.json to get each link's id_kind",
                       count.name_ids, count.links, where)
    return count.n
