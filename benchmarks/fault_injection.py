"""Fault injection: kill a worker of ``xlnel link --shards --workers 2`` at random moments.

Trains a tiny GBDT pipeline on the test fixtures' knowledge base and sentences, writes shard
files, links them once without interruption (the reference), then ``--runs`` times: starts
``xlnel link SRC --shards --out DIR --workers 2``, SIGKILLs one worker at a random moment while
a shard's output is being written, runs the same command again, and compares every output with
the reference byte for byte and looks for temporary files left behind. Writes
``benchmarks/results/fault_injection.json`` after every run.

    python -m benchmarks fault_injection --runs 20
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks._common import write_result
from tests.conftest import write_shards, write_tiny_inputs
from tests.stream_faults import kill_and_rerun
from xlnel.config import load_config
from xlnel.pipeline import train
from xlnel.stream import link_shards

ROOT = Path(__file__).resolve().parents[1]


def prepare(work: Path, shards: int, per_shard: int) -> tuple[Path, Path, Path]:
    """The tiny pipeline, the shard folder and the reference outputs."""
    kb, docs = write_tiny_inputs(work)
    cfg = load_config(None, {"lang": "en", "data.train": str(docs), "dictionary.kb": [f"tsv:{kb}"],
                             "dft.R": 0.2, "filter.name": "xlnel.gbdt.v1",
                             "filter.options": {"folds": 2, "max_iter": 30}})
    train(cfg, work / "pipe")
    write_shards(work / "in", shards, per_shard)
    link_shards(work / "pipe", work / "in", work / "reference", batch_size=1)
    return work / "pipe", work / "in", work / "reference"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--per-shard", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "fault_injection")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    pipe, source, reference = prepare(args.work, args.shards, args.per_shard)
    rng = random.Random(args.seed)
    runs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for i in range(args.runs):
        out = args.work / f"out-{i:03d}"
        run = kill_and_rerun(pipe, source, out, reference, workers=2, batch_size=1, rng=rng)
        runs.append(asdict(run))
        shutil.rmtree(out)
        print(i, run, flush=True)
        killed = [r for r in runs if r["killed"]]
        failures = [r for r in runs if not r["identical"] or r["stale"]
                    or (r["killed"] and r["first_exit"] == 0)]
        write_result("fault_injection", {
            "runs": len(runs), "kills": len(killed), "failures": len(failures),
            "workers": 2, "shards": args.shards, "documents_per_shard": args.per_shard,
            "seconds": round(time.perf_counter() - t0, 1), "details": runs})


if __name__ == "__main__":
    main()
