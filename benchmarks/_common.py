"""Helpers shared by the benchmarks: results in one schema, written atomically, and peak-memory
measurement."""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import os
import platform
import resource
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from xlnel.io import atomic_write

RESULTS = Path(__file__).resolve().parent / "results"


def _git_commit() -> str | None:
    """``$XLNEL_COMMIT`` when set (a copy of the tree on a lent machine, whose own git state is
    not the commit it holds), else the checkout's HEAD commit (with ``+dirty`` for uncommitted
    changes), if in git."""
    if os.environ.get("XLNEL_COMMIT"):
        return os.environ["XLNEL_COMMIT"]
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


SCHEMA = "xlnel-result/1"
SCHEMA_FILE = Path(__file__).resolve().parent / "results.schema.json"


def one_of(choices: Sequence[str]) -> Callable[[str], str]:
    """An argparse ``type`` that takes only ``choices``.

    Positional ``nargs="*"`` arguments use it instead of ``choices=``: when none is given,
    argparse (Python 3.11 here) checks their list default against ``choices`` as one value and
    refuses the documented default run.
    """
    def check(value: str) -> str:
        if value not in choices:
            raise argparse.ArgumentTypeError(
                f"invalid choice {value!r} (choose from {', '.join(choices)})")
        return value
    return check


def result_name(value: str) -> str:
    """An argparse type: a results file name under ``benchmarks/results``, without folder or
    ``.json`` (``/tmp/x.json`` would be written as ``benchmarks/results//tmp/x.json.json``)."""
    if not value or Path(value).name != value or value.endswith(".json") or value in {".", ".."}:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a results file name: give a name without folder or .json "
            f"(written as benchmarks/results/NAME.json)")
    return value


def benchmark_name() -> str:
    """The benchmark this process runs: the stem of its script (``cv_accuracy`` for
    ``python -m benchmarks cv_accuracy`` or ``python -m benchmarks.cv_accuracy``)."""
    return Path(sys.argv[0]).stem


def command_line(argv: list[str] | None = None) -> str:
    """The command that reproduces this run from the repository root.

    A benchmark module is named the documented way, ``python -m benchmarks NAME ARGS``;
    anything else is recorded as it was called.
    """
    argv = sys.argv if argv is None else argv
    script = Path(argv[0])
    if script.suffix == ".py" and script.resolve().parent == Path(__file__).resolve().parent:
        return shlex.join(["python", "-m", "benchmarks", script.stem, *argv[1:]])
    return shlex.join(argv)


def provenance() -> dict[str, Any]:
    """What produced a result: benchmark, command, commit, xlnel version, date and machine."""
    import xlnel

    return {
        "benchmark": benchmark_name(),
        "command": command_line(),
        "commit": _git_commit(),
        "xlnel_version": xlnel.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), **_accelerator()},
    }


def _accelerator() -> dict[str, str]:
    """``{"gpu": name}`` when the machine has a CUDA device: the name torch reports (with its
    version) when this process has loaded torch, else the first name ``nvidia-smi`` lists (a
    run that resumed finished work on a GPU machine without loading torch)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        if not torch.cuda.is_available():
            return {}
        return {"gpu": f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}"}
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return {}
    try:
        names = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    name = next((line.strip() for line in names.splitlines() if line.strip()), "")
    return {"gpu": name} if name else {}


def envelope(results: dict[str, Any], settings: dict[str, Any] | None = None,
             **fields: Any) -> dict[str, Any]:
    """A result in the one schema of ``benchmarks/results.schema.json``.

    ``results`` holds the benchmark's figures; a ``settings`` key in it moves up beside them
    (how the benchmark was set up). ``fields`` override the provenance (``benchmark=``...).
    """
    results = dict(results)
    settings = {**results.pop("settings", {}), **(settings or {})}
    return {"schema": SCHEMA, **provenance(), **fields, "settings": settings,
            "results": results}


def write_result(name: str, results: dict[str, Any], settings: dict[str, Any] | None = None,
                 **fields: Any) -> Path:
    """Write ``benchmarks/results/NAME.json`` atomically in the one result schema.

    Args:
        name: File name without ``.json``.
        results: The figures (the benchmark-specific payload).
        settings: How the benchmark was set up (merged with a ``settings`` key of ``results``).
        **fields: Overrides of the provenance, such as ``benchmark="link_throughput"``.
    """
    target = RESULTS / f"{result_name(name)}.json"
    with atomic_write(target) as f:
        json.dump(envelope(results, settings, **fields), f, indent=2, ensure_ascii=False)
        f.write("\n")
    return target


def counts_by_document(records: Any, level: str) -> Any:
    """Per-document counts of the pooled out-of-fold predictions of experiment ``records`` at
    ``level``, in document-id order, so that two runs over the same documents pair up.

    Raises:
        ValueError: If a record lacks per-document counts of ``level``.
    """
    from xlnel.experiments.summary import pooled_counts

    got = pooled_counts(records, level)
    if got is None:
        raise ValueError(f"a run lacks per-document counts of the {level} level")
    ids, array = got
    return array[sorted(range(len(ids)), key=ids.__getitem__)]


def scores_with_ci(counts: Any) -> dict[str, Any]:
    """Pooled scores of per-document count arrays with a 95% document-bootstrap interval of F1
    (1,000 resamples, seed 0)."""
    from xlnel.evaluation import bootstrap_counts

    ci = bootstrap_counts(counts, seed=0)
    return {**ci.scores.to_dict(), "f1_ci": list(ci.f1_ci)}


def paired_scores(base: Any, other: Any) -> dict[str, Any]:
    """:func:`scores_with_ci` of ``other`` and its paired bootstrap against ``base``
    (per-document count arrays of the same documents, same order; 1,000 resamples, seed 0):
    the entry every variant benchmark writes per level."""
    from xlnel.evaluation import paired_bootstrap_counts

    paired = paired_bootstrap_counts(base, other, seed=0)
    return {**scores_with_ci(other), "delta_f1": paired.delta_f1,
            "delta_f1_ci": list(paired.delta_f1_ci), "p": paired.p_value}


def level_counts(records: Sequence[Any], levels: Sequence[str], where: Path
                 ) -> dict[str, tuple[list[str], Any]]:
    """Per level of ``levels``: the document ids and per-document counts of ``records`` pooled
    (:func:`xlnel.experiments.summary.pooled_counts`).

    Raises:
        ValueError: A record lacks a level's per-document counts (naming ``where``, the folder
            of the run's ``runs.jsonl``).
    """
    from xlnel.experiments.summary import pooled_counts

    out = {}
    for level in levels:
        got = pooled_counts(records, level)
        if got is None:
            raise ValueError(f"{where}/runs.jsonl: a run lacks per-document {level} counts")
        out[level] = got
    return out


def pooled_hrm(records: Sequence[Any], level: str) -> dict[str, Any]:
    """The candidates' recall at ``level`` (``span`` or ``concept``) pooled over run records:
    gold found, gold total, candidates and their recall (0 without gold)."""
    found = sum(r["metrics"]["hrm"][level]["found"] for r in records)
    total = sum(r["metrics"]["hrm"][level]["total"] for r in records)
    candidates = sum(r["metrics"]["hrm"][level]["candidates"] for r in records)
    return {"recall": found / total if total else 0.0, "found": found, "total": total,
            "candidates": candidates}


def read_times(runs: Path) -> dict[str, dict[str, float]]:
    """``RUNS/times.txt`` of ``benchmarks/accuracy.sh``: one ``NAME key=seconds ...`` line per
    run, as ``{NAME: {key: seconds}}``.

    Raises:
        FileNotFoundError: No such file (run the script first).
        ValueError: A malformed line, naming the file and line.
    """
    path = runs / "times.txt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: it holds the runs' wall times, one 'NAME "
                                "key=seconds ...' line per run (benchmarks/accuracy.sh writes it)")
    times: dict[str, dict[str, float]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        name, *fields = line.split()
        try:
            times[name] = {k: round(float(v), 1) for k, v in (f.split("=") for f in fields)}
        except ValueError as e:
            raise ValueError(f"{path}:{number}: expected 'NAME key=seconds ...', got "
                             f"{line!r}") from e
    return times


def read_result(name: str, folder: Path | None = None) -> dict[str, Any]:
    """The whole result ``benchmarks/results/NAME.json`` (envelope and figures).

    Args:
        name: File name without ``.json``.
        folder: Where the results files are; ``None`` = ``benchmarks/results``.

    Raises:
        FileNotFoundError: No such results file.
        ValueError: The file is not in the result schema.
    """
    path = (RESULTS if folder is None else folder) / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"results file {path} not found; run "
                                f"`python -m benchmarks --list` for the benchmark that writes it")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA!r}")
    return data


def read_figures(name: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
    """The figures (``results``) of ``benchmarks/results/NAME.json``; ``default`` when the file
    does not exist and a default is given."""
    if default is not None and not (RESULTS / f"{name}.json").is_file():
        return default
    figures: dict[str, Any] = read_result(name)["results"]
    return figures


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
