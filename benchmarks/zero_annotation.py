"""Linking before any annotation: the pipeline ``xlnel adapt`` writes, on Camoni.

``xlnel adapt`` writes ``pipeline.yaml`` beside the dictionary: its names (``linking.tsv``,
the dictionary less its everyday one-word names; ``benchmarks/zero_annotation_everyday.py``
compares the cuts), its derived stop words, no DFT and no learned filter
(``xlnel.similarity.v1`` keeping candidates of cosine
:data:`~xlnel.dictionary.adapt.ZERO_SHOT_THRESHOLD`), what a user has in a new language
before annotating anything. This benchmark builds the Hebrew dictionary from English HPO + MeSH and
``muse/en-he.txt`` alone (``xlnel adapt``, no ``--corpus``) and scores that pipeline on every
visible post of each Camoni community by 5-fold cross-validation by document (seed 0; nothing
is learned with the fixed threshold, so its folds only split the work), strict span F1 on the
pooled out-of-fold predictions with a 95% document-bootstrap interval, for:

* ``adapt``: ``pipeline.yaml`` as written;
* ``adapt_chosen``: the same with the threshold chosen on each fold's training posts (what a
  few annotated posts would pick; the chosen thresholds are recorded per fold);
* ``reference``: ``pipeline.yaml`` with the reference Hebrew names
  (``camoni/hebrew_umls_names.txt``) in place of the built dictionary;
* ``reference_chosen``: the reference names with a threshold chosen on the training posts.

Paired document bootstraps (1,000 resamples): ``adapt_chosen`` and ``reference`` against
``adapt``, ``reference_chosen`` against ``reference``.

    python -m benchmarks zero_annotation [--communities diabetes ...] [--work DIR]
        [--cv-work DIR] [--cache DIR] [--rebuild] [--adapt-args '...']

Writes ``benchmarks/results/zero_annotation.json``. Run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks._adapt import adapt_names, adapt_options, add_adapt_arguments, run_adapt
from benchmarks._common import counts_by_document, paired_scores, scores_with_ci, write_result
from benchmarks.cv_accuracy import cross_validate
from benchmarks.dictionary_coverage import COMMUNITIES, DATA, KBS, REFERENCE
from xlnel.dictionary.adapt import PIPELINE_FILE, ZERO_SHOT_THRESHOLD

FOLDS, LEVEL = 5, "span"
#: Variant name -> config overrides over ``pipeline.yaml`` on the community's data.
VARIANTS: dict[str, dict[str, Any]] = {
    "adapt": {},
    "adapt_chosen": {"filter.threshold": None},
    "reference": {"dictionary.extra": [], "dictionary.kb": [f"names:{REFERENCE}"]},
    "reference_chosen": {"dictionary.extra": [], "dictionary.kb": [f"names:{REFERENCE}"],
                         "filter.threshold": None},
}
#: (base, variant) pairs compared by the paired bootstrap.
PAIRS = (("adapt", "adapt_chosen"), ("adapt", "reference"), ("reference", "reference_chosen"))


def config_for(community: str, pipeline: Path, work: Path) -> Path:
    """A config laying ``pipeline.yaml`` over the community's data config."""
    path = work / f"zero-{community}.yaml"
    data = Path("configs/data").resolve() / f"camoni-{community}.yaml"
    path.write_text(yaml.safe_dump({"include": [str(data), str(pipeline.resolve())]}),
                    encoding="utf-8")
    return path


def community_results(community: str, pipeline: Path, args: argparse.Namespace
                      ) -> dict[str, Any]:
    """Every variant's pooled span scores, its chosen thresholds and the paired tests."""
    config = config_for(community, pipeline, args.cv_work)
    counts: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for name, overrides in VARIANTS.items():
        ((_, records),) = cross_validate(str(config), FOLDS, args.cv_work / f"{community}-{name}",
                                         args.cache, overrides=overrides)
        counts[name] = counts_by_document(records, LEVEL)
        out[name] = {"thresholds": [r["threshold"] for r in records],
                     "documents": sum(r["test_documents"] for r in records)}
    against = {variant: base for base, variant in PAIRS}
    for name in VARIANTS:
        if name in against:
            out[name].update(paired_scores(counts[against[name]], counts[name]),
                             against=against[name])
        else:
            out[name].update(scores_with_ci(counts[name]))
    return out


def main() -> None:
    """Build (or reuse) the dictionary, cross-validate every variant, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--communities", nargs="+", default=list(COMMUNITIES),
                        choices=COMMUNITIES)
    add_adapt_arguments(parser)
    parser.add_argument("--cv-work", type=Path, default=Path("/tmp/xlnel-zero-annotation"),
                        help="Folder of the cross-validation runs.")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    args = parser.parse_args()
    t0 = time.perf_counter()
    target = args.work / "adapt-he-nocorpus"
    build = run_adapt("he", DATA / "muse/en-he.txt", list(KBS), target, adapt_options(args),
                      args.rebuild)
    args.cv_work.mkdir(parents=True, exist_ok=True)
    results = {c: community_results(c, target / PIPELINE_FILE, args)
               for c in args.communities}
    write_result("zero_annotation", {
        "benchmark": "zero_annotation", "level": LEVEL, "folds": FOLDS,
        "threshold": ZERO_SHOT_THRESHOLD, "build": build, "results": results,
        "adapt_names": adapt_names(target).name,
        "seconds": round(time.perf_counter() - t0, 1)},
        settings={"communities": args.communities, "kb": list(KBS),
                  "pairs": str(DATA / "muse/en-he.txt"), "adapt_args": args.adapt_args})
    for community, r in results.items():
        print(f"{community}: " + ", ".join(
            f"{name} {r[name]['f1']:.3f} (thresholds {sorted(set(r[name]['thresholds']))})"
            for name in VARIANTS))


if __name__ == "__main__":
    main()
