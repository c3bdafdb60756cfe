"""Linking corpora with a trained pipeline: a file, a stream of documents, a folder of shards
(on this machine or a Ray cluster), and the candidate recall of annotated documents.

These are the functions ``xlnel link`` and ``xlnel candidates`` call; :mod:`xlnel.pipeline`
re-exports them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from xlnel.corpus.shards import (
    ShardResult,
    finished_shards,
    plan_shards,
    record_writer,
    remove_stale_temporaries,
    writer_identity,
)
from xlnel.corpus.stream import link_batches_into, link_file, link_stream, open_linker
from xlnel.evaluation.hrm import hrm_recall, unreached, write_unreached
from xlnel.io.documents import read_annotated_documents
from xlnel.io.kb_history import kb_ids_history, resolve_documents
from xlnel.runtime import (
    PipelineSource,
    candidates_of,
    open_pipeline,
    pipeline_lang,
    saved_pipeline,
)
from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["candidate_recall", "link", "link_documents", "link_shards"]


def link(pipeline: PipelineSource, source: str | Path, out: str | Path | IO[str],
         batch_size: int = 64, progress: bool = False, workers: int = 1,
         format: str | None = None, out_format: str | None = None) -> int:
    """Link the documents of ``source`` and write them (JSONL, PubTator, BioC XML or JSON, by
    extension or ``out_format``).

    Streams: the input is read lazily and the output written batch by batch to a temporary
    file that replaces ``out`` only at the end (see :func:`xlnel.corpus.stream.link_file`), so
    memory does not grow with the corpus and an error leaves no partial output. ``.gz`` names
    are read and written compressed.

    Args:
        pipeline: A loaded pipeline, or its folder (a folder when ``workers > 1``), optionally
            with load-time overrides (:class:`SavedPipeline`).
        source: JSONL, PubTator or BioC file, optionally ``.gz``.
        out: Output file (the format follows its extension), or an open text stream
            (``sys.stdout``; JSONL unless ``out_format`` says otherwise).
        batch_size: Documents per batch.
        progress: Show a progress bar.
        workers: Processes, each loading the pipeline once; the output is the same for any
            number.
        format: ``source``'s format (one of :data:`xlnel.io.FORMATS`); ``None`` tells it from
            the name (``-``, the standard input, is JSONL).
        out_format: ``out``'s format (``jsonl``, ``pubtator``, ``bioc``, ``biocjson`` or
            ``brat``); ``None`` tells it from the name.

    Returns:
        The number of documents written.
    """
    return link_file(pipeline, source, out, batch_size, workers, progress, format, out_format)


def link_documents(pipeline: PipelineSource, documents: Iterable[Document],
                   batch_size: int = 64, progress: bool = False,
                   workers: int = 1) -> Iterator[Document]:
    """Link documents batch by batch, yielding each in input order once its batch is done.

    ``documents`` is consumed lazily; see :func:`xlnel.corpus.stream.link_stream`.
    """
    yield from link_stream(pipeline, documents, batch_size, workers, progress)


def candidate_recall(pipeline: PipelineSource, gold: str | Path,
                     progress: bool = False,
                     missed: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """HRM recall of the pipeline's candidates on annotated documents, per level.

    Concept level is reported only when some gold mention has a concept id. Gold ids that the
    pipeline's knowledge bases have retired are read as the current ones, as training reads
    them (:func:`xlnel.io.kb_history.kb_ids_history`). With ``missed``, the gold mentions not
    reached at each level are written to that TSV file with the nearest candidate
    (:func:`xlnel.evaluation.hrm.unreached`).

    Raises:
        ValueError: When no gold document has a mention.
    """
    pipe = open_pipeline(pipeline)
    docs = read_annotated_documents(gold, "gold")
    if not any(d.entities for d in docs):
        raise ValueError(f"{gold}: none of its {len(docs)} documents has a mention: recall is "
                         "undefined (JSONL gold lists its mentions under \"entities\")")
    history = kb_ids_history(pipe.config.dictionary.kb, missing_ok=True)
    if history:
        docs = resolve_documents(docs, history)[0]
    cands = candidates_of(pipe.generator, pipe.tagger, docs, progress, "candidates")
    by_doc = {d.id: c for d, c in zip(docs, cands, strict=True)}
    levels = ["span"]
    if any(e.concept_ids for d in docs for e in d.entities):
        levels.append("concept")
    if missed is not None:
        write_unreached(missed, [row for level in levels
                                 for row in unreached(docs, by_doc, level)])
    return {level: hrm_recall(docs, by_doc, level).to_dict() for level in levels}


def link_shards(pipeline: PipelineSource, source: str | Path,
                out_dir: str | Path, batch_size: int = 64, workers: int = 1,
                ray_address: str | None = None, progress: bool = False) -> list[ShardResult]:
    """Link every shard of ``source`` into a file of the same name in ``out_dir``; resumable.

    Shards whose output exists and was written by the same pipeline are skipped (outputs are
    written atomically, so an existing one is complete); an output of another pipeline, or one
    with no record of its writer, is refused before any work (see :func:`finished_shards`).
    On one machine the shards are linked one after another, each with ``workers`` processes;
    with ``ray_address`` they are spread over a Ray cluster
    (:func:`xlnel.corpus.distributed.link_shards_ray`).

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
        from xlnel.corpus.distributed import link_shards_ray

        saved = saved_pipeline(pipeline)
        if saved is None:
            raise ValueError("linking on Ray needs the pipeline folder, not a loaded Pipeline")
        return link_shards_ray(saved, source, out_dir, ray_address, batch_size, workers,
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
                n = link_batches_into(linker, shard, target, batch_size, progress, lang)
                results.append(ShardResult(str(shard), str(target), n, False,
                                           round(time.perf_counter() - t0, 3)))
    order = {str(shard): i for i, (shard, _) in enumerate(plan)}
    return sorted(results, key=lambda r: order[r.source])
