"""Training on the other Camoni communities' posts too (``data.extra_train``), cross-validated.

Each Camoni community is annotated alike (Hebrew patient posts, UMLS concepts, the same
guidelines), so the posts of the other two are annotated text of the same kind. For each
community, 5-fold cross-validation by document over its visible posts (seed 0) scores the
shipped config twice: trained on the community's own training folds only
(``data.extra_train`` empty), and with every visible post of the other two communities added to
each training set (``data.extra_train``: they are never test documents, and no hidden post is
read). Strict span F1 of the pooled out-of-fold predictions with a 95% document-bootstrap
interval; the paired bootstrap over documents (1,000 resamples) compares the two.

    python -m benchmarks cross_community [--communities diabetes ...] [--work DIR]
        [--cache DIR]

Writes ``benchmarks/results/cross_community.json``. Run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks._common import counts_by_document, paired_scores, scores_with_ci, write_result
from benchmarks.cv_accuracy import cross_validate
from benchmarks.dictionary_coverage import COMMUNITIES, DATA

FOLDS, LEVEL = 5, "span"


def others(community: str) -> list[str]:
    """The visible post files of the other communities."""
    return [str(DATA / f"camoni/{c}.jsonl") for c in COMMUNITIES if c != community]


def community_results(community: str, args: argparse.Namespace) -> dict[str, Any]:
    """Pooled span scores of both trainings, and the paired test of the difference."""
    counts = {}
    thresholds = {}
    for name, extra in (("own", []), ("with_others", others(community))):
        ((_, records),) = cross_validate(f"configs/camoni-{community}.yaml", FOLDS,
                                         args.work / f"{community}-{name}", args.cache,
                                         overrides={"data.extra_train": extra})
        counts[name] = counts_by_document(records, LEVEL)
        thresholds[name] = [r["threshold"] for r in records]
    return {"own": {**scores_with_ci(counts["own"]), "thresholds": thresholds["own"]},
            "with_others": {**paired_scores(counts["own"], counts["with_others"]),
                            "thresholds": thresholds["with_others"],
                            "extra_train": others(community)}}


def main() -> None:
    """Cross-validate both trainings of every community, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--communities", nargs="+", default=list(COMMUNITIES),
                        choices=COMMUNITIES)
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-cross-community"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = {c: community_results(c, args) for c in args.communities}
    write_result("cross_community", {
        "benchmark": "cross_community", "level": LEVEL, "folds": FOLDS, "results": results,
        "seconds": round(time.perf_counter() - t0, 1)},
        settings={"communities": args.communities})
    for community, r in results.items():
        w = r["with_others"]
        print(f"{community}: own {r['own']['f1']:.3f}, with the others {w['f1']:.3f} "
              f"({100 * w['delta_f1']:+.1f}, p {w['p']:.3f})")


if __name__ == "__main__":
    main()
