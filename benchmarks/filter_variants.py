"""Filter variants on BC5CDR (train -> dev) or Camoni (cross-validated), paired against the
shipped config; writes filter_variants.json (or ``--name``).

Each variant sets filter options on top of ``configs/bc5cdr.yaml``; the cell (dictionary,
candidates) is the one of ``cv_accuracy.py`` and comes back from the stage cache, so only the
filter is fitted (and then cached): about 25 minutes a variant on one core. Links are made with
the config's decisions (lexicon, abbreviations, consistency ...). Every variant gets pooled
scores with 95% document-bootstrap intervals and the paired bootstrap against ``shipped`` at
levels span, concept and document (1,000 resamples, two-sided p).

- ``lexical``: ``filter.options.lexical`` (priors of the span's last word and ending, whether
  the document defines it as an abbreviation or as the long form of one);
- ``no-lexical``: the same option off;
- ``extended``: ``filter.options.extended`` (next-word prior, prefix-stripped word prior,
  repeats of the text in the document, matcher margin, overlap with a better span);
- ``concepts``: ``filter.options.concepts`` (what the training documents say about the
  candidate's concept);
- ``lexical+extended``: both;
- ``ngrams``: ``filter.options.ngrams`` (mention and name priors predicted from character
  n-grams, for texts the training documents never showed);
- ``kinds``: ``filter.options.kinds`` (whether the candidate's name stands for a concept of a
  kind the training documents annotate); ``kinds+ngrams``: with ``ngrams`` too;
- ``tagger``: ``filter.options.tagger`` (marginals of a CRF tagging the words as mention
  beginnings, insides and outsides);
- ``edits``: ``filter.options.edits`` (the prior of the edit between the span and its name:
  an attached article, an ending, a spelling letter);
- ``encoder``: ``filter.options.encoder`` multilingual-e5-small (frozen-encoder cosines of the
  span's sentence piece, the span and the candidate's name, embeddings stored per text);
  ``encoder+pca8``: with the first 8 principal components of the span embedding too;
- ``trees-*``: the gradient-boosted trees' own settings (``learning_rate`` 0.04 with 600
  iterations, or 0.15; ``max_leaf_nodes`` 15 or 63; ``l2_regularization`` 0.1 or 10);
- ``balanced-bag``: ``filter.options.bag`` 4 with ``negatives`` 0.25 (four models averaged,
  each fitted on every positive row and its own seeded quarter of the negatives).

``--baseline-scores DIR`` takes the shipped filter's dev scores and threshold from a scores
folder of a stage cache (``scores.npz``, ``threshold.json``) instead of the shipped config's
own cache key, for a cache filled while the key of the same filter was another; the file
records the folder, and the shipped counts can be checked against ``decision_variants.json``.

    python -m benchmarks filter_variants [--cache DIR] [--baseline-scores DIR] [--name RESULT]
        [--config bc5cdr-mesh] [VARIANT ...]

``--config bc5cdr-mesh`` changes ``configs/bc5cdr-mesh.yaml`` instead (MeSH with entry terms,
its tables fetched first; see ``cv_accuracy.py``).

With ``--camoni NAME ...`` the variants are scored instead on Camoni communities by the
cross-validation of ``cv_accuracy.py`` (5 folds by document over all visible posts, each fold's
run kept in ``WORK/VARIANT/NAME/runs.jsonl``, so ``cv_accuracy.py --work WORK/VARIANT`` with the
same options resumes from it), pooling every post's out-of-fold counts, at levels span, overlap
and span-prefix.

    python -m benchmarks filter_variants [--cache DIR] [--baseline-scores DIR] [--name RESULT]
        [--camoni NAME ... [--folds 5] [--work DIR]] [VARIANT ...]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import level_counts, one_of, paired_scores, result_name, write_result
from benchmarks._mesh import fetch_for
from benchmarks.cv_accuracy import BC5CDR, BC5CDR_DEV, CAMONI, SEED, cross_validate
from xlnel.evaluation import document_counts
from xlnel.experiments.runner import plan_cells
from xlnel.experiments.stages import CellStages, StageCache, TrainingData
from xlnel.io.candidates import read_scores
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.types import Document

VARIANTS: dict[str, dict[str, Any]] = {
    "shipped": {},
    "lexical": {"lexical": True},
    "no-lexical": {"lexical": False},
    "extended": {"extended": True},
    "concepts": {"concepts": True},
    "lexical+extended": {"lexical": True, "extended": True},
    "ngrams": {"ngrams": True},
    "kinds": {"kinds": True},
    "kinds+ngrams": {"kinds": True, "ngrams": True},
    "tagger": {"tagger": True},
    "edits": {"edits": True},
    "encoder": {"encoder": "multilingual-e5-small"},
    "encoder+pca8": {"encoder": "multilingual-e5-small", "encoder_pca": 8},
    # the trees' own settings (defaults: learning rate 0.08, 300 iterations with early stopping,
    # 31 leaves, L2 1.0)
    "trees-lr0.04": {"learning_rate": 0.04, "max_iter": 600},
    "trees-lr0.15": {"learning_rate": 0.15},
    "trees-leaves15": {"max_leaf_nodes": 15},
    "trees-leaves63": {"max_leaf_nodes": 63},
    "trees-l2-0.1": {"l2_regularization": 0.1},
    "trees-l2-10": {"l2_regularization": 10.0},
    # four models averaged, each on every positive row and its own seeded quarter of the
    # negatives (the bag of configs/bc5cdr-mesh.yaml)
    "balanced-bag": {"bag": 4, "negatives": 0.25},
}
LEVELS = ("span", "concept", "document")
CAMONI_LEVELS = ("span", "overlap", "span-prefix")


def predictions(options: dict[str, Any], cache: Path, data: TrainingData,
                scores_dir: Path | None = None, config: str = BC5CDR
                ) -> tuple[list[Document], list[Document], float]:
    """Gold and predicted dev documents and the threshold of BC5CDR ``config``, with the filter
    options set (the scores and threshold read from ``scores_dir`` when given)."""
    overrides = {f"filter.options.{k}": v for k, v in options.items()}
    ((_, cfg),) = plan_cells(config, {}, [SEED], overrides)
    stages = CellStages(cfg, StageCache(cache), data)
    if scores_dir is None:
        scores, t = None, stages.threshold()
    else:  # a document linked in windows still takes its windows' scores from the cache
        scores = read_scores(scores_dir / "scores.npz")
        t = float(json.loads((scores_dir / "threshold.json").read_text(encoding="utf-8"))[
            "threshold"])
    lexicon = AnnotationLexicon.fit(stages.train_documents(), cfg.lang)
    # long documents window by window, as xlnel link links them
    pred = stages.test_links(cfg.linker, t, lexicon, scores)
    return stages.test_documents(), pred, t


def run(names: list[str], cache: Path, baseline: Path | None = None,
        config: str = BC5CDR) -> dict[str, Any]:
    """``shipped`` (``config`` as it is, its scores from ``baseline`` when given) and every
    variant in ``names``, each compared with ``shipped``."""
    data = TrainingData()
    gold, shipped_pred, shipped_t = predictions(VARIANTS["shipped"], cache, data, baseline,
                                                config)
    shipped = {level: document_counts(gold, shipped_pred, level) for level in LEVELS}
    out: dict[str, Any] = {}
    for name in ["shipped", *(n for n in names if n != "shipped")]:
        _, pred, t = ((gold, shipped_pred, shipped_t) if name == "shipped"
                      else predictions(VARIANTS[name], cache, data, config=config))
        out[name] = {"options": VARIANTS[name], "threshold": t}
        for level in LEVELS:
            out[name][level] = paired_scores(shipped[level], document_counts(gold, pred, level))
        print(name, round(out[name]["concept"]["f1"], 4),
              round(out[name]["concept"]["delta_f1"], 4), out[name]["concept"]["p"], flush=True)
    return out


def camoni_counts(community: str, options: dict[str, Any], folds: int, work: Path,
                  cache: Path) -> dict[str, tuple[list[str], np.ndarray]]:
    """Pooled out-of-fold per-document counts of one community per level of
    :data:`CAMONI_LEVELS`, with the filter options set (the run kept in ``work``)."""
    overrides = {f"filter.options.{k}": v for k, v in options.items()}
    ((_, records),) = cross_validate(CAMONI[community], folds, work, cache, overrides=overrides)
    return level_counts(records, CAMONI_LEVELS, work)


def run_camoni(names: list[str], communities: list[str], folds: int, work: Path,
               cache: Path) -> dict[str, Any]:
    """Per community, ``shipped`` and every variant in ``names``, each compared with
    ``shipped`` on the pooled out-of-fold counts of the same posts."""
    out: dict[str, Any] = {}
    for community in communities:
        base = camoni_counts(community, {}, folds, work / "shipped" / community, cache)
        entry: dict[str, Any] = {"config": CAMONI[community],
                                 "documents": len(base["span"][0])}
        for name in ["shipped", *(n for n in names if n != "shipped")]:
            got = base if name == "shipped" else camoni_counts(
                community, VARIANTS[name], folds, work / name / community, cache)
            entry[name] = {"options": VARIANTS[name]}
            for level in CAMONI_LEVELS:
                ids, shipped = base[level]
                order = {doc: i for i, doc in enumerate(got[level][0])}
                variant = got[level][1][[order[doc] for doc in ids]]
                entry[name][level] = paired_scores(shipped, variant)
            span = entry[name]["span"]
            print(community, name, round(span["f1"], 4), round(span["delta_f1"], 4), span["p"],
                  flush=True)
        out[community] = entry
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("variants", nargs="*", default=[v for v in VARIANTS if v != "shipped"],
                        type=one_of(list(VARIANTS)))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--baseline-scores", type=Path, default=None,
                        help="scores folder of the shipped filter in a stage cache")
    parser.add_argument("--name", type=result_name, default="filter_variants",
                        help="results file name")
    parser.add_argument("--config", choices=sorted(BC5CDR_DEV), default="bc5cdr",
                        help="the BC5CDR config the variants change (default: bc5cdr)")
    parser.add_argument("--camoni", nargs="+", choices=list(CAMONI), default=None,
                        help="cross-validate on these Camoni communities instead of BC5CDR")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-filter-variants"))
    return parser


def main() -> None:
    args = _parser().parse_args()
    t0 = time.perf_counter()
    test = "paired bootstrap over documents against shipped, 1000 resamples, two-sided p"
    if args.camoni:
        results = run_camoni(args.variants, args.camoni, args.folds, args.work, args.cache)
        payload: dict[str, Any] = {
            "protocol": f"{args.folds}-fold cross-validation by document over every visible "
                        f"post (cv_accuracy.py, seed {SEED}); pooled out-of-fold counts; filter "
                        "options set on top of each community's config",
            "levels": list(CAMONI_LEVELS)}
    else:
        config = BC5CDR_DEV[args.config]
        fetch_for(config)  # the MeSH tables its KBs read, fetched when missing
        results = run(args.variants, args.cache, args.baseline_scores, config)
        payload = {"config": config, "train": "train.pubtator", "scored_on": "dev.pubtator",
                   "protocol": "the BC5CDR cell of cv_accuracy.py from the stage cache with "
                               "filter options set on top of the config; links with the "
                               "config's decisions",
                   "baseline_scores": (None if args.baseline_scores is None
                                       else str(args.baseline_scores))}
    write_result(args.name, {**payload, "test": test, "results": results,
                             "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
