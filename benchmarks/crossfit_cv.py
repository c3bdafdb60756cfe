"""Cross-fitted DFT (``dft.crossfit``) against the shipped configs; writes crossfit_cv.json.

Each variant runs the training recipe through ``xlnel experiment`` cells (the stage cache of
:mod:`cv_accuracy`), on the cells of :mod:`cv_accuracy`:

- Camoni (``configs/camoni-*.yaml``): 5-fold cross-validation by document over the visible
  posts (folds seeded by ``data.split_seed``), every post scored once, span level;
- BC5CDR (``configs/bc5cdr.yaml``): trained on train, scored on dev, at span, concept
  (mention-level concept) and document level.

Variants of each shipped config (its decision settings unchanged): ``r-share`` (DFT with the
share R that ``r_sweep_cv`` chose, :data:`SHARE_R`, no cross-fitting), ``crossfit-K``
(``dft.R`` 0 and ``dft.crossfit`` K: every training document feeds the dictionary and trains
the filter), ``crossfit-K+R`` (``dft.crossfit`` K with that R kept as a dictionary-only
share). Each is compared with ``r-share`` on the same documents by the paired document
bootstrap of pooled F1 (:func:`xlnel.evaluation.paired_bootstrap_counts`, 1,000 resamples,
two-sided p) and, with folds, by the 95% t-interval of the per-fold differences.

``prior_exposure`` (cross-fitted variants) measures the one way cross-fitting feeds the filter's
count priors differently: a name annotated only in fold k's documents proposes candidates in
the other folds' documents, and a span there whose every candidate names such a name (a span
that would otherwise have no candidate) enters the mention prior a fold-k document is trained
with. Per cell, summed: the filter's distinct training spans, how many have a text so counted,
and the same for the spans that are gold mentions.

    python -m benchmarks crossfit_cv [--K 5] [--folds 5] [--cache DIR] [--work DIR]
        [--variants NAME ...] [NAME ...]

NAME is among diabetes, sclerosis, depression, bc5cdr. Figures of earlier runs of other corpora
stay in the results file. Run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import paired_scores, pooled_hrm, read_figures, write_result
from benchmarks.cv_accuracy import BC5CDR, CAMONI, SEED
from xlnel.config import PipelineConfig, load_config  # noqa: E402
from xlnel.dictionary.dft import add_gold_names  # noqa: E402
from xlnel.dictionary.dictionary import Dictionary  # noqa: E402
from xlnel.experiments import run_experiment  # noqa: E402
from xlnel.experiments.runner import plan_cells  # noqa: E402
from xlnel.experiments.stages import CellStages, StageCache, TrainingData  # noqa: E402
from xlnel.experiments.summary import metric_value, pooled_counts, t_interval  # noqa: E402
from xlnel.folds import deal  # noqa: E402
from xlnel.normalization import normalize_string  # noqa: E402
from xlnel.types import Candidate, Document, Span  # noqa: E402

NAME = "crossfit_cv"


#: The DFT share R of each corpus chosen by ``r_sweep_cv`` (R-share DFT, no cross-fitting).
SHARE_R = {"diabetes": 0.1, "sclerosis": 0.2, "depression": 0.2, "bc5cdr": 0.2}
BASELINE = "r-share"


def variants(corpus: str, k: int) -> dict[str, dict[str, Any]]:
    """Variant name -> config overrides (the baseline first)."""
    r = SHARE_R[corpus]
    return {BASELINE: {"dft.R": r, "dft.crossfit": 0},
            f"crossfit-{k}": {"dft.R": 0.0, "dft.crossfit": k},
            f"crossfit-{k}+R": {"dft.R": r, "dft.crossfit": k}}


def levels(corpus: str) -> list[str]:
    """The levels a corpus is scored at (the first is the one the config selects at)."""
    return ["concept", "document", "span"] if corpus == "bc5cdr" else ["span"]


def records_of(corpus: str, overrides: Mapping[str, Any], folds: int, work: Path,
               cache: Path) -> list[dict[str, Any]]:
    """The cell records of one variant (fold order), run or resumed."""
    config = BC5CDR if corpus == "bc5cdr" else CAMONI[corpus]
    grid = {key: [value] for key, value in overrides.items()}
    return run_experiment(config, grid, [SEED], work, cache_dir=cache, progress=True,
                          folds=None if corpus == "bc5cdr" else folds)


def compare(base: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]],
            level: str) -> dict[str, Any]:
    """``other``'s pooled scores and its paired test against ``base`` at ``level``."""
    got_a, got_b = pooled_counts(base, level), pooled_counts(other, level)
    if got_a is None or got_b is None or got_a[0] != got_b[0]:
        raise ValueError(f"the two runs do not hold the same documents at {level} level")
    out: dict[str, Any] = {**paired_scores(got_a[1], got_b[1]), "n_documents": len(got_a[0])}
    if len(base) > 1:
        name = f"{level}_f1"
        deltas = [float(metric_value(b, name) or 0.0) - float(metric_value(a, name) or 0.0)
                  for a, b in zip(base, other, strict=True)]
        mean, low, high = t_interval(deltas)
        out["fold_delta"] = {"mean": mean, "ci": [low, high], "per_fold": deltas}
    return out


def _gold_names(documents: Sequence[Document], unlinked: str) -> set[str]:
    names = Dictionary()
    add_gold_names(names, documents, unlinked)
    return set(names.names)


def _spans_only_from(cands: Sequence[Candidate], names: set[str]) -> set[str]:
    """Texts of the spans whose every candidate names one of ``names`` (without those names
    the span would have no candidate, so it would not be counted in the priors)."""
    by_span: dict[Span, bool] = {}
    for c in cands:
        by_span[c.span] = by_span.get(c.span, True) and c.name in names
    return {span.text for span, only in by_span.items() if only}


def _cell_exposure(cfg: PipelineConfig, stages: CellStages) -> list[int]:
    """[spans, exposed spans, gold spans, exposed gold spans] of one cross-fitted cell."""
    dft = cfg.dft
    docs = stages.dictionary().filter_documents
    cands = stages.candidates().filter
    ids = {d.id for d in docs}
    always = set(stages.data.base_dictionary(cfg).names) | _gold_names(
        [d for d in stages.train_documents() if d.id not in ids], dft.unlinked)
    folds = deal(len(docs), dft.crossfit, dft.seed)
    names = [_gold_names([docs[i] for i in f], dft.unlinked) for f in folds]
    out = [0, 0, 0, 0]
    for k, fold in enumerate(folds):
        others = set().union(*(n for j, n in enumerate(names) if j != k))
        exclusive = names[k] - others - always
        exposed = {normalize_string(text, cfg.lang) for j, f in enumerate(folds) if j != k
                   for i in f for text in _spans_only_from(cands[i], exclusive)}
        for i in fold:
            gold = {(e.start, e.end) for e in docs[i].entities}
            for span in {c.span for c in cands[i]}:
                hit = normalize_string(span.text, cfg.lang) in exposed
                is_gold = (span.start, span.end) in gold
                out[0] += 1
                out[1] += hit
                out[2] += is_gold
                out[3] += hit and is_gold
    return out


def prior_exposure(corpus: str, overrides: Mapping[str, Any], folds: int, cache: Path
                   ) -> dict[str, Any]:
    """Training spans whose prior counts candidates from their own fold's names (see the
    module docstring), summed over the cells of a cross-fitted variant."""
    config = BC5CDR if corpus == "bc5cdr" else CAMONI[corpus]
    grid = {key: [value] for key, value in overrides.items()}
    data, total = TrainingData(), [0, 0, 0, 0]
    for _, cfg in plan_cells(config, grid, [SEED], folds=None if corpus == "bc5cdr" else folds):
        counts = _cell_exposure(cfg, CellStages(cfg, StageCache(cache), data))
        total = [a + b for a, b in zip(total, counts, strict=True)]
    spans, exposed, gold, gold_exposed = total
    return {"spans": spans, "exposed": exposed, "gold_spans": gold,
            "gold_exposed": gold_exposed, "share": exposed / spans if spans else 0.0,
            "gold_share": gold_exposed / gold if gold else 0.0}


def run_corpus(corpus: str, k: int, names: Sequence[str], folds: int, work: Path,
               cache: Path) -> dict[str, Any]:
    """Every variant of ``names`` on one corpus, compared with the baseline."""
    table = variants(corpus, k)
    base = records_of(corpus, table[BASELINE], folds, work / corpus / BASELINE, cache)
    out: dict[str, Any] = {}
    for name in names:
        t0 = time.perf_counter()
        recs = records_of(corpus, table[name], folds, work / corpus / name, cache)
        cfg = load_config(BC5CDR if corpus == "bc5cdr" else CAMONI[corpus], table[name])
        out[name] = {
            "overrides": table[name], "dft": {"R": cfg.dft.R, "crossfit": cfg.dft.crossfit},
            "levels": {level: compare(base, recs, level) for level in levels(corpus)},
            "dictionary_entries_added_mean": sum(r["dft"]["entries_added"] for r in recs)
            / len(recs),
            "filter_documents_mean": sum(r["dft"]["filter_documents"] for r in recs)
            / len(recs),
            "thresholds": [r["threshold"] for r in recs],
            "hrm_recall": {level: pooled_hrm(recs, level)["recall"]
                           for level in recs[0]["metrics"]["hrm"]},
            "cell_seconds": round(sum(r["seconds"]["total"] for r in recs), 1),
            "seconds": round(time.perf_counter() - t0, 1)}
        if table[name].get("dft.crossfit"):
            out[name]["prior_exposure"] = prior_exposure(corpus, table[name], folds, cache)
        first = out[name]["levels"][levels(corpus)[0]]
        print(corpus, name, round(first["f1"], 4), round(first["delta_f1"], 4), first["p"],
              flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", default=[*CAMONI, "bc5cdr"])
    parser.add_argument("--K", type=int, default=5, help="cross-fitting folds")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds (Camoni)")
    parser.add_argument("--variants", nargs="*", default=None,
                        help="variants to run (default: all)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-crossfit-cv"))
    args = parser.parse_args(argv)
    names = args.variants or list(variants("bc5cdr", args.K))
    results: dict[str, Any] = read_figures(NAME, {"corpora": {}})["corpora"]
    t0 = time.perf_counter()
    for corpus in args.names:
        known = variants(corpus, args.K)
        kept = {n: r for n, r in results.get(corpus, {}).items() if n in known}
        results[corpus] = {**kept, **run_corpus(corpus, args.K, names, args.folds, args.work,
                                                 args.cache)}
        write_result(NAME, {
            "protocol": f"Camoni: {args.folds}-fold cross-validation by document over the "
                        "visible posts (folds seeded by data.split_seed), span level; BC5CDR: "
                        f"train -> dev; seed {SEED}; the shipped configs with overrides",
            "baseline": BASELINE,
            "test": f"paired bootstrap over documents against {BASELINE} (pooled F1), 1000 "
                    "resamples, two-sided p; fold_delta: 95% t-interval of per-fold F1 "
                    f"differences (variant minus {BASELINE})",
            "crossfit_folds": args.K,
            "threads": os.environ.get("OMP_NUM_THREADS", "default"),
            "corpora": results, "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
