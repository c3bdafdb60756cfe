"""Collect the R sweeps of benchmarks/results/r_sweep/*/runs.jsonl into r_sweep.json.

Run by benchmarks/r_sweep.sh after the sweeps; on its own: ``python -m benchmarks r_sweep``.
For each corpus: the best R by mean span F1 (and by concept F1 where measured), the summary
over seeds of every R, the seeds run, and the wall time of the cells.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, command_line, write_result
from xlnel.experiments import read_runs, summarize
from xlnel.experiments.report import best_point

GRID = "dft.R=0,0.1,0.2,0.3,0.4,0.5"
CONFIGS = {"diabetes": "configs/camoni-diabetes.yaml", "sclerosis": "configs/camoni-sclerosis.yaml",
           "depression": "configs/camoni-depression.yaml", "bc5cdr": "configs/bc5cdr.yaml"}
#: How a corpus's sweep was run when it differs from one `xlnel experiment` call.
NOTES = {"bc5cdr": "Run as three processes sharing the stage cache (--seeds 0,1,2 into "
                   "benchmarks/results/r_sweep/bc5cdr, --seeds 3,4 and --seeds 2, into scratch "
                   "folders whose runs.jsonl were appended, cells already present skipped), "
                   "with OMP_NUM_THREADS=1 while other jobs shared the 2 cores; the last cell "
                   "(seed 2, R = 0.5) was resumed later with --cache "
                   "/tmp/xlnel-r-sweep-cache/bc5cdr. Scored at concept level on the whole "
                   "dev set (the shipped config's select_level)."}


def corpus_summary(name: str, runs: Path) -> dict[str, Any]:
    records = read_runs(runs)
    seeds = sorted({r["seed"] for r in records})
    out: dict[str, Any] = {
        "command": f"xlnel experiment {CONFIGS.get(name, '?')} --grid {GRID} "
                   f"--seeds {len(seeds)} --out {runs.parent}",
        "runs": len(records), "seeds": seeds,
        "cell_seconds_total": round(sum(r["seconds"]["total"] for r in records), 1),
        "cell_seconds_mean": round(sum(r["seconds"]["total"] for r in records)
                                   / max(len(records), 1), 1),
        "by_R": summarize(records),
    }
    if name in NOTES:
        out["note"] = NOTES[name]
    for metric in ("span_f1", "concept_f1"):
        best = best_point(records, metric)
        if best is not None:
            out[f"best_R_{metric}"] = {"R": best["axes"].get("dft.R"), "seeds": best["seeds"],
                                       **{k: best[k] for k in ("span_f1", "concept_f1",
                                                               "hrm_span", "hrm_concept")
                                          if k in best}}
    return out


def main(argv: list[str]) -> None:
    """``argv``: optional ``CORPUS=WALL_SECONDS`` or ``CORPUS:cpu=CPU_SECONDS`` measurements."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("measurements", nargs="*", metavar="CORPUS[:cpu]=SECONDS",
                        help="wall (or CPU) seconds of a corpus's sweep, as r_sweep.sh passes")
    argv = parser.parse_args(argv).measurements
    root = RESULTS / "r_sweep"
    corpora = {p.parent.name: corpus_summary(p.parent.name, p)
               for p in sorted(root.glob("*/runs.jsonl"))}
    for item in argv:
        key, _, value = item.partition("=")
        corpus, _, kind = key.partition(":")
        if corpus in corpora:
            corpora[corpus][f"{kind or 'wall'}_seconds"] = float(value)
    write_result("r_sweep", {
        "report": "xlnel report benchmarks/results/r_sweep/{diabetes,sclerosis,depression,...} "
                  "--out benchmarks/results/r_sweep",
        "filter": "xlnel.gbdt.v1 (shipped configs)",
        "threads": os.environ.get("OMP_NUM_THREADS", "default"),
        "note": "Mean ± sample std over seeds; seed s sets seed, dft.seed and "
                "filter.options.seed; the held-out test documents are the same for every run. "
                "Times were taken on a 2-core machine shared with other jobs: the three Camoni "
                "sweeps ran at once under nice -n 10 with OMP_NUM_THREADS=1 (load average "
                "~15); wall_seconds is each sweep's wall time, cpu_seconds its user+sys CPU "
                "time (from `time`), cell_seconds_* the cells' own timings.",
        "python": platform.python_version(),
        "corpora": corpora,
    }, command=f"bash benchmarks/r_sweep.sh && {command_line()}")


if __name__ == "__main__":
    main(sys.argv[1:])
