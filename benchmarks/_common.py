"""Helpers shared by the benchmark scripts: atomic JSON results and peak-memory measurement."""

from __future__ import annotations

import datetime
import json
import multiprocessing as mp
import os
import platform
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xlnel.io import atomic_write

RESULTS = Path(__file__).resolve().parent / "results"


def _git_commit() -> str | None:
    """The checkout's HEAD commit (with ``+dirty`` for uncommitted changes), if in git."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        # results files are outputs, not code: a script rewriting its own file stays clean
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)benchmarks/results"],
                               cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty.strip() else "")


def provenance() -> dict[str, Any]:
    """What produced a result: command, commit, xlnel version, date and machine."""
    import xlnel

    return {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "commit": _git_commit(),
        "xlnel_version": xlnel.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
    }


def write_result(name: str, payload: dict[str, Any]) -> Path:
    """Write ``benchmarks/results/NAME.json`` atomically, with its provenance added."""
    payload = {**payload, **provenance()}
    target = RESULTS / f"{name}.json"
    with atomic_write(target) as f:
        json.dump(payload, f, indent=2)
        f.write("\n")
    return target


def _child(fn: Callable[..., dict[str, Any]], args: tuple[Any, ...], queue: Any) -> None:
    try:
        result = fn(*args)
        result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        queue.put(result)
    except BaseException as e:  # report, do not hang the parent
        queue.put({"error": repr(e)})


def run_isolated(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run ``fn(*args)`` in a fresh process so its peak memory (max RSS) is its own."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(fn, args, queue))
    proc.start()
    result: dict[str, Any] | None = None
    while result is None:
        try:
            result = queue.get(timeout=5)
        except Exception:  # queue.Empty: is the child still alive?
            if not proc.is_alive():
                raise RuntimeError(f"{fn.__name__} died (exit code {proc.exitcode}) "
                                   "without a result; out of memory?") from None
    proc.join()
    if "error" in result:
        raise RuntimeError(f"{fn.__name__} failed: {result['error']}")
    return result
