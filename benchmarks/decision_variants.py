"""Decision variants on the shipped filter's scores, from the stage cache; writes
decision_variants.json.

The candidates, filter scores and threshold of every cell of ``cv_accuracy.py`` (Camoni: its
5 folds; BC5CDR: train -> dev) come back from the stage cache that run filled, and only the
last step, scores to links, changes (a test document longer than ``linker.window_chars`` is
linked window by window, as ``xlnel link`` links it):

- ``shipped``: the config's ``linker.overlap`` and ``linker.propagate``;
- ``no-propagate`` / ``propagate``: propagation off or on;
- ``abbreviations``: then short forms defined in the document as "long form (SF)"
  (Schwartz-Hearst) are linked with their long form's concept
  (``linker.abbreviations``);
- ``no-lexicon`` / ``lexicon``: the config's decisions with ``linker.lexicon`` off (and
  ``linker.annotated_release``, which dates the release from it), or on without
  ``linker.lexicon_rate`` (each known span takes the concept its text was most often annotated
  with in the cell's training documents); ``lexicon+rate-R``: also link the spans whose text
  was annotated in at least the share R of its training occurrences;
- ``no-consistency`` / ``consistency``: every unlinked occurrence of a linked text in the
  document linked with its concept off or on (``linker.consistency``);
- ``no-composites`` / ``composites``: a link whose text the training annotations mostly mark
  as a composite mention holding its concept carries all the composite's ids or not
  (``linker.composites``, with the lexicon);
- ``no-annotated-release`` / ``annotated-release``: the candidates of concepts numbered above the
  newest id the cell's training annotations use, per id prefix, and those matching their spans
  less closely, kept or dropped before the decisions (``linker.annotated_release``, see
  :func:`xlnel.linkers.decide.older_only`; ``annotated-release`` turns the lexicon on too);
- ``overlap-longest`` / ``overlap-score``: of two overlapping spans passing the threshold, the
  longer or the higher scored is kept (``linker.overlap``; the threshold stays the one the
  cell chose with the config's rule);
- ``threshold-0.1`` ... ``threshold+0.1``: the shipped decisions at the threshold each cell
  chose on its training documents moved by that much (is the choice biased on new documents?).

Each variant gets pooled scores with 95% document-bootstrap intervals and the paired bootstrap
against ``shipped`` at every level of the corpus (1,000 resamples, two-sided p).

NAME is among ``bc5cdr`` (train -> dev), ``bc5cdr-train`` and the Camoni communities.
``bc5cdr-train`` checks the BC5CDR decisions without dev: the shipped BC5CDR config
cross-validated inside ``train.pubtator`` (5 folds by abstract, ``data.test`` unset, each fold
trained on the other four with its own cross-fitted DFT and filter), pooled out of fold: the
cells of ``cv_accuracy.py bc5cdr-train``. The first of the two to run computes them into the
cache (about 20 minutes a fold on one core); each cell may be computed by a process of its own
beforehand with ``--cells-only --fold K``.

    python -m benchmarks decision_variants [--cache DIR] [--name RESULT] [NAME ...]
    python -m benchmarks decision_variants [--cache DIR] --cells-only --fold K bc5cdr-train
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import one_of, paired_scores, result_name, write_result
from benchmarks.cv_accuracy import BC5CDR, CROSS_VALIDATED, SEED, cross_validated_config
from xlnel.config import LinkerConfig, PipelineConfig
from xlnel.evaluation import document_counts
from xlnel.experiments.runner import plan_cells
from xlnel.experiments.stages import CellStages, StageCache, TrainingData
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.types import Document

Rule = Callable[[PipelineConfig, float], tuple[LinkerConfig, float]]
"""A decision variant: the ``linker`` section and threshold a cell's config and chosen threshold
are decided with (by :meth:`~xlnel.experiments.stages.CellStages.test_links`, long documents
window by window as ``xlnel link`` links them)."""


def _decide(**linker: Any) -> Rule:
    """A decision rule: the config's ``linker`` section with the keys given here replaced,
    validated as a config's (a combination no config may hold is an error)."""
    def rule(cfg: PipelineConfig, t: float) -> tuple[LinkerConfig, float]:
        return type(cfg.linker).model_validate(cfg.linker.model_dump() | linker), t
    return rule


def _offset(delta: float) -> Rule:
    """The shipped decisions at the cell's threshold moved by ``delta``."""
    def rule(cfg: PipelineConfig, t: float) -> tuple[LinkerConfig, float]:
        return cfg.linker, t + delta
    return rule


VARIANTS: dict[str, Rule] = {
    "shipped": _decide(),
    "no-propagate": _decide(propagate=False),
    "propagate": _decide(propagate=True),
    "no-abbreviations": _decide(abbreviations=False),
    "abbreviations": _decide(abbreviations=True),
    # the release check dates the release from the lexicon, so it goes with it
    "no-lexicon": _decide(lexicon=False, annotated_release=False),
    "lexicon": _decide(lexicon=True, lexicon_rate=None),
    **{f"lexicon+rate-{r}": _decide(lexicon=True, lexicon_rate=r)
       for r in (0.3, 0.5, 0.7, 0.9, 1.0)},
    "no-consistency": _decide(consistency=False),
    "consistency": _decide(consistency=True),
    "no-composites": _decide(composites=False),
    "composites": _decide(composites=True),
    "no-annotated-release": _decide(annotated_release=False),
    "annotated-release": _decide(lexicon=True, annotated_release=True),
    "overlap-longest": _decide(overlap="longest"),
    "overlap-score": _decide(overlap="score"),
    **{f"threshold{d:+}": _offset(d) for d in (-0.1, -0.05, 0.05, 0.1)},
}


def cells(name: str) -> list[PipelineConfig]:
    """The resolved configs of the cells of corpus ``name``: those of ``cv_accuracy.py``."""
    if name == "bc5cdr":
        return [cfg for _, cfg in plan_cells(BC5CDR, {}, [SEED])]
    config, added = cross_validated_config(name)
    return [cfg for _, cfg in plan_cells(config, {}, [SEED], added, folds=5)]


def run(corpus: str, cache: Path) -> dict[str, Any]:
    """Every variant on the cached cells of ``corpus``, compared with ``shipped``."""
    gold: list[Document] = []
    preds: dict[str, list[Document]] = {name: [] for name in VARIANTS}
    data = TrainingData()
    for cfg in cells(corpus):
        stages = CellStages(cfg, StageCache(cache), data)
        t = stages.threshold()
        lexicon = AnnotationLexicon.fit(stages.train_documents(), cfg.lang)
        gold += stages.test_documents()
        for name, rule in VARIANTS.items():
            preds[name] += stages.test_links(*rule(cfg, t), lexicon)
    levels = ["span", "concept", "document"] if corpus.startswith("bc5cdr") else ["span"]
    shipped = {level: document_counts(gold, preds["shipped"], level) for level in levels}
    out: dict[str, Any] = {}
    for name, pred in preds.items():
        out[name] = {}
        for level in levels:
            out[name][level] = paired_scores(shipped[level], document_counts(gold, pred, level))
    return out


def add_cell_arguments(parser: argparse.ArgumentParser, result: str) -> None:
    """The arguments of a benchmark on the cached cells of :func:`cells`: corpus names, the
    stage cache and the results file name (default ``result``)."""
    parser.add_argument("names", nargs="*", default=["bc5cdr"],
                        type=one_of(["bc5cdr", *CROSS_VALIDATED]))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--name", type=result_name, default=result,
                        help="Results file name under benchmarks/results.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_cell_arguments(parser, "decision_variants")
    parser.add_argument("--cells-only", action="store_true",
                        help="Compute the scores of one cell (--fold) into the cache and stop.")
    parser.add_argument("--fold", type=int, default=0)
    args = parser.parse_args()
    t0 = time.perf_counter()
    if args.cells_only:
        for name in args.names:
            planned = cells(name)
            if not 0 <= args.fold < len(planned):
                parser.error(f"--fold {args.fold}: {name} has folds 0 to {len(planned) - 1}")
            CellStages(planned[args.fold], StageCache(args.cache), TrainingData(),
                       progress=True).scores()
        return
    results = {}
    for name in args.names:
        results[name] = run(name, args.cache)
        for variant, r in results[name].items():
            level = "concept" if name.startswith("bc5cdr") else "span"
            print(name, variant, round(r[level]["f1"], 4), round(r[level]["delta_f1"], 4),
                  r[level]["p"], flush=True)
    write_result(args.name, {
        "protocol": "the cells of cv_accuracy.py (Camoni 5-fold CV by document, BC5CDR train "
                    "-> dev) or (bc5cdr-train) the BC5CDR config by 5-fold CV by document "
                    "inside train.pubtator, from the stage cache; only the decision step "
                    "varies",
        "test": "paired bootstrap over documents against shipped, 1000 resamples, two-sided p",
        "results": results, "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
