"""Linking on a busy machine: the libraries' own thread counts against xlnel's one thread.

Starts a competing busy process (one CPU-burning loop per core, stopped by this script and in
any case after ``--burn-limit`` seconds), then times ``xlnel link`` of the first ``--documents``
BC5CDR dev abstracts with a trained GBDT pipeline, once with ``--threads 0`` (the libraries'
defaults: a thread per core in OpenMP and BLAS, the thread variables removed from the
environment) and once with xlnel's default of one thread. Both outputs must be identical; the
result records the two times, their ratio, and the load average before, during and after.

    xlnel train configs/bc5cdr.yaml --out runs/bc5cdr-small --set data.max_documents=200 \\
        --set filter.options.max_iter=100 --set filter.options.folds=3
    python -m benchmarks busy_machine --pipeline runs/bc5cdr-small --documents 100
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import write_result
from xlnel.io import read_documents, write_documents  # noqa: E402
from xlnel.threads import THREAD_ENV_VARS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / ".." / "shared" / "data" / "bc5cdr" / "dev.pubtator"
_BURN = "import time\nend = time.time() + {limit}\nwhile time.time() < end:\n    pass\n"


def start_burners(n: int, limit: float) -> list[subprocess.Popen[bytes]]:
    """``n`` processes that each keep one core busy for at most ``limit`` seconds."""
    return [subprocess.Popen([sys.executable, "-c", _BURN.format(limit=limit)])
            for _ in range(n)]


def stop_burners(burners: list[subprocess.Popen[bytes]]) -> None:
    for proc in burners:
        proc.terminate()
    for proc in burners:
        proc.wait()


def time_link(pipeline: Path, source: Path, out: Path, threads: int) -> float:
    """Wall seconds of ``xlnel --threads N link`` in a fresh process without thread variables."""
    env = {k: v for k, v in os.environ.items()
           if k not in THREAD_ENV_VARS and k not in ("NUMBA_NUM_THREADS", "XLNEL_THREADS")}
    env["PYTHONPATH"] = str(ROOT)
    cmd = [sys.executable, "-m", "xlnel.cli.main", "--threads", str(threads), "link",
           str(pipeline), str(source), "--out", str(out)]
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    return round(time.perf_counter() - t0, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", type=Path, default=ROOT / "runs" / "bc5cdr-small")
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--burn-limit", type=float, default=900.0)
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "busy_machine")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    source = args.work / f"dev{args.documents}.jsonl"
    write_documents(source, read_documents(DEV)[:args.documents])
    cores = os.cpu_count() or 1
    load_before = os.getloadavg()
    burners = start_burners(cores, args.burn_limit)
    runs: dict[str, Any] = {}
    try:
        time.sleep(2.0)  # let the burners take their cores
        for label, threads in (("library_defaults", 0), ("xlnel_default", 1)):
            seconds = time_link(args.pipeline, source, args.work / f"{label}.jsonl", threads)
            runs[label] = {"threads_option": threads, "seconds": seconds,
                           "load_average_after": os.getloadavg()}
            print(f"{label} (--threads {threads}): {seconds} s", flush=True)
    finally:
        stop_burners(burners)
    same = ((args.work / "library_defaults.jsonl").read_bytes()
            == (args.work / "xlnel_default.jsonl").read_bytes())
    ratio = round(runs["library_defaults"]["seconds"] / runs["xlnel_default"]["seconds"], 2)
    print(f"library defaults / one thread: {ratio}x; outputs identical: {same}")
    write_result("busy_machine", {
        "pipeline": str(args.pipeline), "documents": args.documents, "cores": cores,
        "burner_processes": cores, "load_average_before": load_before,
        "load_average_after": os.getloadavg(), "runs": runs, "slowdown_ratio": ratio,
        "outputs_identical": same,
    })


if __name__ == "__main__":
    main()
