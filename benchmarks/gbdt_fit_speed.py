"""Training time of the GBDT filter fitted on a share of the negatives, in one run.

Fits ``xlnel.gbdt.v1`` with the filter options of ``configs/bc5cdr-mesh.yaml`` on the candidates
of the first N held-out abstracts of the first inside-train cross-validation cell of
``cv_accuracy.py`` (``bc5cdr-mesh-train``; the stage cache under ``--cache`` fills them when it
lacks them), once on every negative and once with each share of ``--negatives`` (option
``negatives``: every positive row and a seeded share of the negatives, weighted back; ``bag``
1), on ``--threads`` threads. It prints the seconds of each fit (priors, out-of-fold scores,
threshold and the final trees: all of ``fit``) and their ratio to the fit on every negative.
Its accuracy is a cross-validation of its own (``cv_accuracy.py --set
filter.options.negatives=S``, paired by ``cv_paired.py``).

    python -m benchmarks gbdt_fit_speed [--cache DIR] [--documents 100] [--negatives 0.25]
        [--threads 1]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import result_name, write_result
from benchmarks.cv_accuracy import cross_validated_config
from xlnel.experiments.runner import plan_cells
from xlnel.experiments.stages import CellStages, StageCache, TrainingData
from xlnel.filtering.base import filter_class
from xlnel.filtering.labels import label_candidates
from xlnel.threads import set_threads

CELL = "bc5cdr-mesh-train"


def fit_seconds(config: Any, documents: Sequence[Any], candidates: Sequence[Any],
                share: float) -> dict[str, float]:
    """Seconds of one fit of the config's filter with ``negatives`` = ``share``, ``bag`` 1."""
    options = {**config.filter.options, "negatives": share, "bag": 1}
    filter_config = config.filter.model_copy(update={"options": options})
    start = time.perf_counter()
    fitted = filter_class(filter_config.name)(filter_config, config.lang).fit(documents,
                                                                              candidates)
    return {"seconds": round(time.perf_counter() - start, 2),
            "threshold": round(float(fitted.threshold), 4)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--negatives", type=float, nargs="+", default=[0.25])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--name", type=result_name, default="gbdt_fit_speed",
                        help="results file name")
    args = parser.parse_args(argv)
    if args.documents < 2:
        parser.error(f"--documents must be at least 2, got {args.documents}")
    if any(not 0.0 < s < 1.0 for s in args.negatives):
        parser.error(f"--negatives must lie in (0, 1), got {args.negatives}")
    set_threads(args.threads)
    config_path, added = cross_validated_config(CELL)
    config = next(cfg for _, cfg in plan_cells(config_path, {}, [0], added, folds=5))
    stages = CellStages(config, StageCache(args.cache), TrainingData())
    documents = stages.test_documents()[:args.documents]
    candidates = stages.test_candidates()[:args.documents]
    level = config.filter.select_level
    positive = int(sum(label_candidates(d, c, level).sum()
                       for d, c in zip(documents, candidates, strict=True)))
    rows = int(sum(len(c) for c in candidates))
    fits = [{"negatives": share, **fit_seconds(config, documents, candidates, share)}
            for share in (1.0, *args.negatives)]
    full = fits[0]["seconds"]
    for fit in fits:
        fit["speedup"] = round(full / fit["seconds"], 2) if fit["seconds"] else float(np.inf)
        print(f"negatives {fit['negatives']}: {fit['seconds']} s, {fit['speedup']}x", flush=True)
    write_result(args.name, {
        "config": config_path, "cell": f"{CELL} fold 0 (held-out abstracts)",
        "documents": len(documents), "candidates": rows, "positive_candidates": positive,
        "filter_options": dict(config.filter.options), "threads": args.threads,
        "fits": fits,  # every negative first, then each share of --negatives
    })


if __name__ == "__main__":
    main()
