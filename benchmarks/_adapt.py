"""Run ``xlnel adapt`` as a child process, measuring its wall time and peak memory.

The build is recorded in ``OUT/benchmark_build.json`` (command, wall seconds, peak RSS, commit,
date); a later run of the same command finds it there and reuses the dictionary unless asked to
rebuild (``--rebuild``: needed after the builder's code changes, since the command does not).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import provenance
from xlnel.io import atomic_write

BUILD_FILE = "benchmark_build.json"


def add_adapt_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark that builds dictionaries with ``xlnel adapt``."""
    parser.add_argument("--adapt-args", default="",
                        help="More xlnel adapt options, as one string ('--n-best 5').")
    parser.add_argument("--work", type=Path, default=Path("dictionary/built"),
                        help="Folder of the built dictionaries (git-ignored).")
    parser.add_argument("--rebuild", action="store_true",
                        help="Build again even when a build of the same command is there.")


def adapt_options(args: argparse.Namespace) -> list[str]:
    """The ``--adapt-args`` string as ``xlnel adapt`` options."""
    return shlex.split(args.adapt_args)


def adapt_command(lang: str, pairs: Path, kbs: Sequence[str], out: Path,
                  extra: Sequence[str] = ()) -> list[str]:
    """The ``xlnel adapt`` command line (run with this interpreter)."""
    kb_args = [x for kb in kbs for x in ("--kb", kb)]
    return [sys.executable, "-m", "xlnel.cli.main", "adapt", "--lang", lang, "--pairs",
            str(pairs), *kb_args, "--out", str(out), *extra]


def run_adapt(lang: str, pairs: Path, kbs: Sequence[str], out: Path,
              extra: Sequence[str] = (), rebuild: bool = False) -> dict[str, Any]:
    """Build (or reuse) ``OUT/dictionary.tsv`` with ``xlnel adapt``; returns the build record.

    Raises:
        RuntimeError: If ``xlnel adapt`` fails.
    """
    record_path = out / BUILD_FILE
    cmd = adapt_command(lang, pairs, kbs, out, extra)
    shown = " ".join(["xlnel", *cmd[3:]])
    if record_path.is_file() and (out / "dictionary.tsv").is_file() and not rebuild:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        if record.get("command") == shown:
            return {**record, "reused": True}
    out.mkdir(parents=True, exist_ok=True)
    log = out / "adapt.log"  # a file, not a pipe: a full pipe would block the child
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with open(log, "w", encoding="utf-8") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
        # wait4 gives this child's own peak memory; RUSAGE_CHILDREN is the max of all runs
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise RuntimeError(f"{shown} failed (exit {proc.returncode}), see {log}:\n{tail}")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    held_out = report.get("translator", {}).get("held_out")
    # the wall time depends on what else runs: the 1-minute load average, before and after
    load = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    record = {"command": shown, "wall_seconds": round(wall, 1), "load_average": load,
              "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
              "language_file": report.get("language_file"),
              "segment_order": report.get("segment_order"),
              "attached_letters": report.get("attached_letters"),
              "letter_shares": report.get("letter_shares"),
              "lemma_rules": report.get("lemma_rules"),
              "ending_shares": report.get("ending_shares"),
              "translator_held_out": held_out, "translator_train_seconds":
              report.get("translator", {}).get("train_seconds"),
              "dictionary": {k: v for k, v in report.get("dictionary", {}).items()
                             if k in ("concepts", "english_names", "entries", "distinct_names",
                                      "concepts_covered", "seconds")},
              "log": str(log), "build_provenance": provenance()}
    with atomic_write(record_path) as f:
        json.dump(record, f, ensure_ascii=False, indent=2)
    return {**record, "reused": False}


def adapt_names(build: Path) -> Path:
    """The names file the build's ``pipeline.yaml`` links with (``linking.tsv``, or
    ``dictionary.tsv`` when ``--everyday-top 0`` wrote none)."""
    from xlnel.config import load_config
    from xlnel.dictionary.adapt import PIPELINE_FILE

    return Path(load_config(build / PIPELINE_FILE).dictionary.extra[0])
