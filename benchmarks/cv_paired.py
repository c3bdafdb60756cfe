"""A cross-validation run elsewhere against the shipped configs on the same folds; writes
cv_paired.json (or ``--name``).

The other run is the fold records (``runs.jsonl``) of :mod:`cv_accuracy`'s cells for a
cross-validated NAME, made where this machine cannot make them: for example the GPU
cross-encoder's folds that ``benchmarks/device/run_cv_folds.sh`` brings back, kept under
``benchmarks/results/``. The shipped config's folds are run here (or resumed from
``WORK/NAME/runs.jsonl``) by :func:`cv_accuracy.cross_validate`; the two must hold the same
folds of the same documents. Per level that both record: the other run's pooled out-of-fold
scores with a 95% document-bootstrap interval of F1, its paired document bootstrap against the
shipped config (delta F1, 95% interval, two-sided p; 1,000 resamples, seed 0), and the 95%
t-interval of the per-fold differences.

    python -m benchmarks cv_paired --other DIR [--other-name OTHER] [--work DIR] [--cache DIR]
        [--set KEY=VALUE ...] [--name RESULT] NAME ...

DIR/NAME/runs.jsonl holds the other run of each NAME (diabetes, sclerosis, depression,
bc5cdr-train); with ``--other-name OTHER``, DIR/OTHER/runs.jsonl holds it, another
cross-validated name's run on the same folds (``--other-name bc5cdr-mesh-train bc5cdr-train``:
the MeSH config against ``bc5cdr.yaml`` inside train). ``--set`` overrides keys of the
shipped configs (for example ``candidates.workers``, which changes no figure). Run with
``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import one_of, result_name, write_result
from benchmarks.crossfit_cv import compare
from benchmarks.cv_accuracy import (
    CROSS_VALIDATED,
    cross_validate,
    cross_validated_config,
    level_names,
)
from xlnel.config import parse_overrides
from xlnel.experiments.runner import read_runs


def check_same_folds(base: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]],
                     where: Path) -> None:
    """Raise ValueError unless both runs hold the same folds, each of the same documents."""
    def folds(records: Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any, list[str]]]:
        return [(r["fold"], r["folds"], sorted(r["per_document"]["ids"])) for r in records]

    if folds(base) != folds(other):
        raise ValueError(f"{where}: its folds are not the shipped config's folds of the same "
                         "documents (another data.split_seed, fold count or corpus?)")


def paired(name: str, other_dir: Path, work: Path, cache: Path,
           overrides: Mapping[str, Any], other_name: str | None = None) -> dict[str, Any]:
    """The entry of one NAME: what the other run was (``other_dir/NAME``, or
    ``other_dir/OTHER_NAME``) and its comparison per level."""
    runs = other_dir / (other_name or name) / "runs.jsonl"
    other = sorted(read_runs(runs), key=lambda r: r["fold"])
    if not other:
        raise ValueError(f"{runs}: no fold records")
    config, added = cross_validated_config(name)
    ((_, base),) = cross_validate(config, other[0]["folds"], work / name, cache,
                                  overrides={**overrides, **added})
    check_same_folds(base, other, runs)
    shared = [lv for lv in level_names(other) if lv in level_names(base)]
    return {"config": config, "other_runs": str(runs),
            "other_runs_sha256": hashlib.sha256(runs.read_bytes()).hexdigest(),
            "other_filter": other[0]["config"]["filter"],
            "base_filter": base[0]["config"]["filter"],
            "folds": len(other),
            "levels": {lv: compare(base, other, lv) for lv in shared}}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="+", type=one_of(list(CROSS_VALIDATED)))
    parser.add_argument("--other", type=Path, required=True,
                        help="folder with NAME/runs.jsonl of the run to compare")
    parser.add_argument("--other-name", default=None, metavar="OTHER",
                        help="subfolder of --other holding the other run (default: NAME)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-cv-accuracy"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a key of the shipped configs (repeatable)")
    parser.add_argument("--name", type=result_name, default="cv_paired",
                        help="results file name")
    args = parser.parse_args(argv)
    overrides = parse_overrides(args.set)
    write_result(args.name, {
        "protocol": "the other run's pooled out-of-fold scores, paired document bootstrap "
                    "against the shipped config on the same folds (1,000 resamples, seed 0, "
                    "two-sided p), 95% t-interval of the per-fold differences",
        "overrides": overrides, "other_name": args.other_name,
        "results": {n: paired(n, args.other, args.work, args.cache, overrides, args.other_name)
                    for n in args.names}})


if __name__ == "__main__":
    main()
