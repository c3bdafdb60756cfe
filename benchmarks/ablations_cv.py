"""Camoni ablations by 5-fold cross-validation, each setting paired against the shipped config.

The ablations of ``configs/ablations/`` (:mod:`benchmarks.ablations`) ran on one held-out split
of Camoni diabetes, with the configs of their time. This benchmark redoes the Camoni ones by the
cross-validation of :mod:`benchmarks.cv_accuracy` (5 folds by document over every visible post
of each community, the other communities' posts training as ``data.extra_train`` of the shipped
configs says), each setting set on top of the community's shipped config:

- ``tf``: ``candidates.use_idf`` false (term frequencies without IDF weights);
- ``threshold-0.3``: ``candidates.threshold`` 0.3 (shipped 0.4);
- ``manhattan``: ``candidates.metric`` manhattan (shipped cosine);
- ``k2``, ``k4``: ``candidates.max_words`` 2 or 4 (shipped 3);
- ``window-2``: ``filter.options.window`` 2 (context-word priors; shipped 0);
- ``crossfit-5``: ``dft.crossfit`` 5 with ``dft.R`` 0 (every training post gives its names to
  the dictionary and trains the filter, as BC5CDR ships; shipped: the share R, no
  cross-fitting).

Reported per community: the pooled strict span precision, recall and F1 of the out-of-fold
predictions with their 95% document-bootstrap intervals, the paired document bootstrap against
``shipped`` (1,000 resamples, two-sided p), and the HRM span recall of the candidates pooled over
the folds. Each run is kept in ``WORK/SETTING/COMMUNITY/runs.jsonl`` (``cv_accuracy.py`` and
``filter_variants.py`` resume from the same layout) and its stages in the stage cache ``--cache``.

    python -m benchmarks ablations_cv [--communities diabetes ...] [--cache DIR] [--work DIR]
        [--name RESULT] [SETTING ...]

writes ``benchmarks/results/ablations_cv.json`` (or ``RESULT.json``), keeping the communities of
an existing file that this run does not score; each kept entry records the command, commit and
date of the run that wrote it (``recorded_by``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks._common import (
    level_counts,
    one_of,
    paired_scores,
    pooled_hrm,
    result_name,
    write_result,
)
from benchmarks.cv_accuracy import CAMONI, SEED, cross_validate, merge_entries

#: Setting -> (the ablation it belongs to, config overrides on top of the shipped config).
SETTINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "shipped": ("shipped config", {}),
    "tf": ("matcher weights", {"candidates.use_idf": False}),
    "threshold-0.3": ("matcher threshold", {"candidates.threshold": 0.3}),
    "manhattan": ("matcher similarity", {"candidates.metric": "manhattan"}),
    "k2": ("longest span k", {"candidates.max_words": 2}),
    "k4": ("longest span k", {"candidates.max_words": 4}),
    "window-2": ("GBDT context-window features", {"filter.options.window": 2}),
    "crossfit-5": ("cross-fitted DFT", {"dft.R": 0.0, "dft.crossfit": 5}),
}


def run_setting(community: str, overrides: dict[str, Any], folds: int, work: Path,
                cache: Path) -> tuple[list[str], Any, dict[str, Any]]:
    """Document ids and per-document strict span counts of one setting's pooled out-of-fold
    predictions, and its HRM span recall."""
    ((_, records),) = cross_validate(CAMONI[community], folds, work, cache, overrides=overrides)
    ids, counts = level_counts(records, ("span",), work)["span"]
    return ids, counts, pooled_hrm(records, "span")


def run(names: list[str], communities: list[str], folds: int, work: Path,
        cache: Path) -> dict[str, Any]:
    """Per community, ``shipped`` and every setting of ``names`` paired against it."""
    out: dict[str, Any] = {}
    for community in communities:
        ids, base, base_hrm = run_setting(community, {}, folds, work / "shipped" / community,
                                          cache)
        entry: dict[str, Any] = {"config": CAMONI[community], "documents": len(ids)}
        for name in ["shipped", *(n for n in names if n != "shipped")]:
            ablation, overrides = SETTINGS[name]
            if name == "shipped":
                counts, hrm = base, base_hrm
            else:
                got_ids, got, hrm = run_setting(community, overrides, folds,
                                                work / name / community, cache)
                order = {doc: i for i, doc in enumerate(got_ids)}
                counts = got[[order[doc] for doc in ids]]
            entry[name] = {"ablation": ablation, "overrides": overrides,
                           "span": paired_scores(base, counts), "hrm_span": hrm}
            span = entry[name]["span"]
            print(community, name, round(span["f1"], 4), round(span["delta_f1"], 4),
                  round(span["p"], 3), round(hrm["recall"], 4), flush=True)
        out[community] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("settings", nargs="*", default=[s for s in SETTINGS if s != "shipped"],
                        type=one_of(list(SETTINGS)))
    parser.add_argument("--communities", nargs="+", choices=list(CAMONI), default=list(CAMONI))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-ablations-cv"))
    parser.add_argument("--name", type=result_name, default="ablations_cv",
                        help="results file name")
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = run(args.settings, args.communities, args.folds, args.work, args.cache)
    write_result(args.name, {
        "protocol": f"{args.folds}-fold cross-validation by document over every visible post "
                    f"(cv_accuracy.py, seed {SEED}), the shipped configs with their "
                    "data.extra_train; pooled out-of-fold counts, strict span level; each "
                    "setting set on top of the community's shipped config",
        "test": "paired bootstrap over documents against shipped, 1000 resamples, two-sided p",
        "results": merge_entries(results, args.name),
        "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
