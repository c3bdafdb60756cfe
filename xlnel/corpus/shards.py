"""Shard plans: which output file each input shard gets, and which are finished.

A corpus split into shard files is linked shard by shard: each shard gets its own output file,
written atomically, and a shard whose output already exists (written by the same pipeline, as
the record beside it says) is skipped, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from xlnel.errors import OutputError
from xlnel.io._atomic import atomic_write
from xlnel.runtime import PipelineSource, source_identity

logger = logging.getLogger(__name__)

__all__ = ["SHARD_SUFFIXES", "ShardResult", "find_shards", "finished_shards", "plan_shards",
           "record_writer", "remove_stale_temporaries", "writer_identity"]

#: Suffixes (before an optional ``.gz``) of the files taken as shards in a folder.
SHARD_SUFFIXES = (".jsonl", ".json", ".pubtator", ".txt", ".xml", ".bioc", ".biocjson")


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


def writer_identity(pipeline: PipelineSource) -> dict[str, Any] | None:
    """What identifies the pipeline writing shard outputs (``None`` for an unsaved one)."""
    identity = source_identity(pipeline)
    # As read back from the record: JSON turns tuples into lists.
    return cast(dict[str, Any] | None, json.loads(json.dumps(identity, default=str)))


def _record_path(target: Path) -> Path:
    return target.parent / f".{target.name}.xlnel.json"


def record_writer(target: Path, identity: dict[str, Any] | None) -> None:
    """Write beside ``target`` which pipeline writes it (before it is written)."""
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
