"""Streamed and sharded corpus linking; the code lives in :mod:`xlnel.corpus`, this module
keeps the ``xlnel.stream`` names importable."""

from __future__ import annotations

from xlnel.corpus.linking import link_shards
from xlnel.corpus.shards import (
    SHARD_SUFFIXES,
    ShardResult,
    find_shards,
    finished_shards,
    plan_shards,
    record_writer,
    remove_stale_temporaries,
    writer_identity,
)
from xlnel.corpus.stream import check_link_output, link_file, link_stream, open_linker
from xlnel.runtime import batched, pipeline_folder, pipeline_lang

__all__ = ["SHARD_SUFFIXES", "ShardResult", "batched", "check_link_output", "find_shards",
           "finished_shards", "link_file", "link_shards", "link_stream", "open_linker",
           "pipeline_folder", "pipeline_lang", "plan_shards", "record_writer",
           "remove_stale_temporaries", "writer_identity"]
