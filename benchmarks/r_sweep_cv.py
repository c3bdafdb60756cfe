"""The DFT share R chosen by 5-fold cross-validation by document; writes r_sweep_cv.json.

For each Camoni community (``configs/camoni-*.yaml``, GBDT filter) and each R: the 5-fold
cross-validation of :mod:`cv_accuracy` (every post scored once, by a model that did not train
on it; DFT share and filter learnt on the training folds). Per R: mean over folds ± 95%
t-interval and pooled out-of-fold scores with 95% document-bootstrap intervals. The winner is
the R with the best mean span F1 (the shipped configs select at span level); every other R is
compared with it twice, on the same folds and documents:

- ``fold_delta``: the 95% t-interval of the per-fold differences (winner minus R);
- ``paired_bootstrap``: the paired document bootstrap of pooled F1
  (:func:`xlnel.evaluation.paired_bootstrap_counts`, B = winner, A = R).

A difference whose intervals contain 0 is within the noise of ~200 posts.

``--set KEY=VALUE`` (repeatable, as ``xlnel train --set``) changes the shipped config of every
R, such as the R for a community with few annotated posts and nothing else: ``--set
data.max_documents=50 --set data.subset_seed=1 --set 'data.extra_train=[]'``.

    python -m benchmarks r_sweep_cv [--R 0,0.1,0.2,0.3,0.5] [--folds 5] [--cache DIR]
        [--work DIR] [--out NAME] [--set KEY=VALUE ...] [COMMUNITY ...]

``--out`` names the results file (default ``r_sweep_cv``), so that a confirmatory run of two
values (the winner of one community against the shipped R on the others) keeps the full grid's
file.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import write_result
from benchmarks.cv_accuracy import CAMONI, cross_validate, summary
from xlnel.config import parse_overrides
from xlnel.errors import ConfigError
from xlnel.evaluation import paired_bootstrap_counts  # noqa: E402
from xlnel.experiments.summary import metric_value, pooled_counts, t_interval  # noqa: E402

LEVELS = ("span", "concept")


def compare(best: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]],
            level: str) -> dict[str, Any]:
    """The winner's records against another R's, fold by fold and document by document."""
    name = f"{level}_f1"
    a = {r["fold"]: metric_value(r, name) for r in other}
    b = {r["fold"]: metric_value(r, name) for r in best}
    deltas = [float(vb) - float(va) for f, vb in sorted(b.items())
              if vb is not None and (va := a.get(f)) is not None]
    mean, low, high = t_interval(deltas)
    got_a, got_b = pooled_counts(other, level), pooled_counts(best, level)
    if got_a is None or got_b is None or got_a[0] != got_b[0]:
        raise ValueError(f"the two runs do not hold the same documents at {level} level")
    paired = paired_bootstrap_counts(got_a[1], got_b[1]).to_dict()
    return {"fold_delta": {"mean": mean, "ci_low": low, "ci_high": high,
                           "within_ci": low <= 0.0 <= high, "per_fold": deltas},
            "paired_bootstrap": {k: paired[k] for k in ("delta_f1", "delta_f1_ci", "p_value",
                                                        "n_resamples", "n_documents")}}


def sweep(community: str, values: Sequence[float], folds: int, work: Path, cache: Path,
          overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Cross-validate every R of ``values`` on one community (its shipped config with
    ``overrides``); pick and test the winner."""
    t0 = time.perf_counter()
    points = cross_validate(CAMONI[community], folds, work / community, cache,
                            {"dft.R": list(values)}, overrides)
    by_r = {float(axes["dft.R"]): recs for axes, recs in points}
    out: dict[str, Any] = {"config": CAMONI[community], "by_R": {}}
    for r, recs in by_r.items():
        s = summary(recs, [{} for _ in recs])
        s["dft_entries_added_mean"] = sum(x["dft"]["entries_added"] for x in recs) / len(recs)
        out["by_R"][str(r)] = s
    for level in LEVELS:
        key = f"{level}_f1"
        if any(key not in s["over_folds"] for s in out["by_R"].values()):
            continue  # a level the corpus does not score (Camoni names carry no ids)
        means = {r: out["by_R"][str(r)]["over_folds"][key]["mean"] for r in by_r}
        best = max(means, key=lambda r: means[r])
        out[f"best_R_{key}"] = {
            "R": best, "mean": means[best],
            "ci": [out["by_R"][str(best)]["over_folds"][key][k] for k in ("ci_low", "ci_high")],
            "against": {str(r): compare(by_r[best], by_r[r], level) for r in by_r if r != best}}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("communities", nargs="*", default=list(CAMONI))
    parser.add_argument("--R", default="0,0.1,0.2,0.3,0.5")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-r-sweep-cv"))
    parser.add_argument("--out", default="r_sweep_cv")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="config override of every R (repeatable)")
    args = parser.parse_args(argv)
    values = [float(v) for v in args.R.split(",")]
    try:
        overrides = parse_overrides(args.overrides)
    except ConfigError as e:
        parser.error(str(e))
    if "dft.R" in overrides:
        parser.error("--set dft.R: the R values are the sweep's (--R)")
    results = {c: sweep(c, values, args.folds, args.work, args.cache, overrides)
               for c in args.communities}
    write_result(args.out, {
        "protocol": f"{args.folds}-fold cross-validation by document over each community's "
                    "visible posts (folds seeded by data.split_seed), seed 0, grid dft.R="
                    f"{args.R}; winner = best mean F1 over folds; intervals 95%",
        "filter": "xlnel.gbdt.v1 (shipped configs)",
        "overrides": overrides,
        "threads": os.environ.get("OMP_NUM_THREADS", "default"),
        "results": results,
    })


if __name__ == "__main__":
    main()
