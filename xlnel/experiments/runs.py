"""The ``runs.jsonl`` file of an experiment: one JSON record per finished cell.

Records are appended and synced one at a time, so a crash leaves at most a truncated last line,
which reading drops (with a warning) and resuming repairs. Folders of runs split between
processes (``--fold-ids``) are merged by concatenating their files; a cell recorded twice would
then count twice as a replicate, so it is refused.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from xlnel.errors import FormatError
from xlnel.io import atomic_write

logger = logging.getLogger(__name__)

__all__ = ["RUNS_FILE", "append_run", "iter_runs", "read_runs", "repair_runs"]

RUNS_FILE = "runs.jsonl"


def read_runs(path: str | Path) -> list[dict[str, Any]]:
    """The records of a ``runs.jsonl``; a truncated last line (a crash) is dropped with a warning.

    Raises:
        FormatError: If a line other than the last is not JSON, a line is not a JSON object,
            a record has no
            cell name, or two lines record the same cell (naming both lines).
    """
    p = Path(path)
    if not p.is_file():
        return []
    lines = p.read_text(encoding="utf-8").split("\n")
    complete = p.stat().st_size == 0 or lines[-1] == ""
    if lines and lines[-1] == "":
        lines.pop()
    records: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    for i, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if i == len(lines) and not complete:
                logger.warning("%s: ignoring the truncated last line %d (an interrupted run)",
                               p, i)
                break
            raise FormatError(f"not a JSON record: {e}", p, i) from e
        if not isinstance(record, dict):
            raise FormatError(f"not a JSON record (an object of one cell), got {line[:40]!r}",
                              p, i)
        _refuse_repeated_cell(record, first_line, p, i)
        records.append(record)
    return records


def _refuse_repeated_cell(record: Mapping[str, Any], first_line: dict[str, int], path: Path,
                          line: int) -> None:
    """A cell recorded twice (two merged files that both ran it) would be averaged as two
    replicates; the user has to say which run to keep."""
    cell = record.get("cell")
    if not isinstance(cell, str):
        raise FormatError(f"a run record names its cell (a string under 'cell'), got "
                          f"{cell!r}", path, line)
    if cell in first_line:
        raise FormatError(f"cell {cell!r} is recorded twice, at lines {first_line[cell]} and "
                          f"{line} (merged files that both ran it?); keep one of the two lines",
                          path, line)
    first_line[cell] = line


def repair_runs(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """Rewrite ``runs.jsonl`` with only its complete records (drops a truncated tail)."""
    with atomic_write(path) as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def append_run(path: Path, record: Mapping[str, Any]) -> None:
    """Append one record as a JSON line, synced to disk before returning."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def iter_runs(paths: Iterable[str | Path]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(label, records) of each experiment folder or ``runs.jsonl`` file.

    Raises:
        FileNotFoundError: If a folder has no ``runs.jsonl`` or a file does not exist.
        FormatError: As :func:`read_runs`.
    """
    for p in paths:
        path = Path(p)
        file = path / RUNS_FILE if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(f"no {RUNS_FILE} in {path}; run `xlnel experiment` first")
        label = (path if path.is_dir() else path.parent).name
        yield label, read_runs(file)
