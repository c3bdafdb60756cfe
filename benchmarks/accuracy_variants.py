"""Accuracy variants of the GBDT pipeline, each against the shipped config by cross-validation.

Every variant is scored on the same out-of-fold predictions as :mod:`error_analysis` (Camoni:
5-fold CV by document over all visible posts, strict span level; BC5CDR: train -> dev,
mention-level concept and document level) and compared with ``base`` (the shipped config with
``linker.propagate`` off) by the paired bootstrap over documents (1,000 resamples): ``delta_f1``
with its 95% interval and two-sided ``p``. Out-of-fold results are cached per (corpus, variant)
under ``XLNEL_CACHE`` or ``/tmp``, so adding a variant reruns only that variant.

    python -m benchmarks accuracy_variants [--corpora diabetes ...] [--variants NAME ...]

writes ``benchmarks/results/accuracy_variants.json`` (all variants tried, winners and losers).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import _oof
from benchmarks._common import paired_scores, read_figures, write_result
from xlnel.evaluation import document_counts  # noqa: E402
from xlnel.linkers.decide import choose_threshold, decide  # noqa: E402
from xlnel.types import Candidate, Document  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs" / "accuracy-variants.md"
OutOfFoldFn = Callable[[str], _oof.OutOfFold]


def _refit(overrides: dict[str, Any]) -> OutOfFoldFn:
    """A variant that refits the filter with config ``overrides`` (cached by the overrides)."""
    if not overrides:
        return _oof.shipped
    key = json.dumps(overrides, sort_keys=True)

    def run(corpus: str) -> _oof.OutOfFold:
        return _oof.cached(corpus, "refit", key,
                           lambda c: _oof.out_of_fold(c, _oof.folds(c), overrides))

    run.refit_key = key  # type: ignore[attr-defined]
    return run


def _is_cached(corpus: str, name: str) -> bool:
    what, run = VARIANTS[name]
    refit = getattr(run, "refit_key", None)
    def done(kind: str, key: str) -> bool:
        return (_oof.cache_path(corpus, kind, key) / "done").is_file()

    return (done(f"variant-{name}", what) or (run is _oof.shipped and done("shipped", ""))
            or (refit is not None and done("refit", refit)))


def _rethreshold(base: dict[str, Any], overlap: str | None) -> OutOfFoldFn:
    """A variant that keeps ``base``'s scores and re-chooses each fold's threshold on the
    filter's out-of-fold training scores under the linker's overlap rule (or ``overlap``)."""

    def run(corpus: str) -> _oof.OutOfFold:
        oof = _refit(base)(corpus)
        cfg = _oof.corpus_config(corpus, base)
        rule = overlap or cfg.linker.overlap
        out = replace(oof, thresholds=[], pred=[])
        start = 0
        for fold, train_scores in zip(_oof.folds(corpus), oof.train_scores, strict=True):
            t, _ = choose_threshold(fold.filter_docs, fold.filter_cands, train_scores,
                                    cfg.filter.select_level, rule)
            n = len(fold.test_docs)
            out.thresholds += [t] * n
            out.pred += [decide(d, c, s, t, rule) for d, c, s in zip(
                oof.gold[start:start + n], oof.candidates[start:start + n],
                oof.scores[start:start + n], strict=True)]
            start += n
        return out

    return run


def _redecide(rule: Callable[[Document, list[Candidate], np.ndarray, float, str], Document]
              ) -> OutOfFoldFn:
    """A variant that keeps the shipped scores and thresholds and decides with ``rule``."""

    def run(corpus: str) -> _oof.OutOfFold:
        oof = _oof.shipped(corpus)
        overlap = _oof.corpus_config(corpus).linker.overlap
        return replace(oof, pred=[rule(d, c, s, t, overlap) for d, c, s, t in zip(
            oof.gold, oof.candidates, oof.scores, oof.thresholds, strict=True)])

    return run


def _lower_threshold(delta: float) -> Callable[..., Document]:
    def rule(doc: Document, cands: list[Candidate], scores: np.ndarray, t: float,
             overlap: str) -> Document:
        return decide(doc, cands, scores, t - delta, overlap)
    return rule


def _abbreviations(propagate: bool) -> Callable[..., Document]:
    """Decide (with or without propagation), then link defined short forms as their long
    forms (``linker.abbreviations``)."""

    def rule(doc: Document, cands: list[Candidate], scores: np.ndarray, t: float,
             overlap: str) -> Document:
        return decide(doc, cands, scores, t, overlap, propagate=propagate, abbreviations=True)

    return rule


def _with_propagation(run: OutOfFoldFn) -> OutOfFoldFn:
    """``run``'s scores and thresholds, decided with ``linker.propagate`` (as shipped)."""

    def wrapped(corpus: str) -> _oof.OutOfFold:
        oof = run(corpus)
        overlap = _oof.corpus_config(corpus).linker.overlap
        return replace(oof, pred=[_propagate(d, c, s, t, overlap) for d, c, s, t in zip(
            oof.gold, oof.candidates, oof.scores, oof.thresholds, strict=True)])

    return wrapped


def _propagate(doc: Document, cands: list[Candidate], scores: np.ndarray, t: float,
               overlap: str) -> Document:
    """Decide with ``propagate`` (other occurrences of a linked text, at half the threshold)."""
    return decide(doc, cands, scores, t, overlap, propagate=True)


E5 = "multilingual-e5-small"
_ENCODER = {"filter.options": {"encoder": E5}}
_ENCODER_PCA = {"filter.options": {"encoder": E5, "encoder_pca": 8}}

VARIANTS: dict[str, tuple[str, OutOfFoldFn]] = {
    "base": ("the shipped config with linker.propagate off", _refit({})),
    "threshold-under-linker-overlap": (
        "threshold chosen on the filter's out-of-fold scores under the linker's own overlap "
        "rule (the shipped filter chooses it under 'longest')", _rethreshold({}, None)),
    "overlap-longest": ("linker.overlap longest (the rule the threshold is chosen under)",
                        _rethreshold({}, "longest")),
    "threshold-minus-0.05": ("the filter's threshold lowered by 0.05",
                             _redecide(_lower_threshold(0.05))),
    "threshold-minus-0.1": ("the filter's threshold lowered by 0.1",
                            _redecide(_lower_threshold(0.1))),
    "propagate-in-document": ("also link other occurrences in the document of a linked text "
                              "that score at least half the threshold", _redecide(_propagate)),
    "extended-features": ("gbdt option extended: next-word prior, whole-word prior, "
                          "in-document recurrence, name margin, overlapping better span",
                          _refit({"filter.options": {"extended": True}})),
    "window-2": ("gbdt option window 2 (context-word priors)",
                 _refit({"filter.options": {"window": 2}})),
    "gbdt-regularised": ("gbdt max_iter 150, learning_rate 0.05, max_leaf_nodes 15, "
                         "l2_regularization 3",
                         _refit({"filter.options": {"max_iter": 150, "learning_rate": 0.05,
                                                    "max_leaf_nodes": 15,
                                                    "l2_regularization": 3.0}})),
    "extended+threshold-under-linker-overlap": (
        "extended features and the threshold chosen under the linker's overlap rule",
        _rethreshold({"filter.options": {"extended": True}}, None)),
    "abbreviations": ("short forms defined in the document as 'long form (SF)' "
                      "(Schwartz-Hearst) linked to their long form's concept",
                      _redecide(_abbreviations(False))),
    "abbreviations+propagate": ("abbreviations, decided with linker.propagate",
                                _redecide(_abbreviations(True))),
    "encoder-cosines": (f"gbdt option encoder {E5}: cosines sentence piece-name, span-name, "
                        "sentence piece-span of the frozen encoder", _refit(_ENCODER)),
    "encoder-cosines+pca8": ("encoder cosines and 8 principal components of the span embedding",
                             _refit(_ENCODER_PCA)),
    "encoder-cosines+propagate": ("encoder cosines, decided with linker.propagate",
                                  _with_propagation(_refit(_ENCODER))),
    "encoder-cosines+pca8+propagate": ("encoder cosines and span PCA, decided with "
                                       "linker.propagate", _with_propagation(_refit(_ENCODER_PCA))),
}
#: Variants also compared with the shipped decisions, as ``vs_shipped`` (``base``, or
#: ``propagate-in-document`` where the config propagates).
AGAINST_SHIPPED = ("encoder-cosines+propagate", "encoder-cosines+pca8+propagate",
                   "abbreviations+propagate")


def levels(corpus: str) -> list[str]:
    """The strict levels a corpus is scored at."""
    return ["concept", "document", "span"] if corpus == "bc5cdr" else ["span"]


def compare(corpus: str, base: _oof.OutOfFold, other: _oof.OutOfFold) -> dict[str, Any]:
    """Scores with 95% intervals and the paired test against ``base``, per level."""
    out = {}
    for level in levels(corpus):
        out[level] = paired_scores(document_counts(base.gold, base.pred, level),
                                   document_counts(other.gold, other.pred, level))
    return out


def markdown(payload: dict[str, Any]) -> str:
    """The docs table of the variants: F1 with its interval, delta and p against ``base``."""
    lines = ["# Accuracy variants of the GBDT pipeline", "",
             "Generated by `python -m benchmarks accuracy_variants` from "
             "`benchmarks/results/accuracy_variants.json`: out-of-fold strict F1 (Camoni: 5-fold "
             "cross-validation by document over all visible posts, span level), 95% bootstrap "
             "interval over documents, and the paired bootstrap against `base`, the shipped config "
             "with `linker.propagate` off "
             "(delta F1 with its interval, two-sided p). " + _training(payload), "",
             "| corpus | variant | P | R | F1 [95% CI] | delta F1 [95% CI] | p |",
             "|---|---|---|---|---|---|---|"]
    for corpus, variants in payload["corpora"].items():
        for name, r in variants.items():
            s = r[levels(corpus)[0] if corpus in _oof.CORPORA else "span"]
            lo, hi = s["f1_ci"]
            dlo, dhi = s["delta_f1_ci"]
            lines.append(f"| {corpus} | {name} | {s['precision']:.3f} | {s['recall']:.3f} | "
                         f"{s['f1']:.3f} [{lo:.3f}, {hi:.3f}] | {s['delta_f1']:+.3f} "
                         f"[{dlo:+.3f}, {dhi:+.3f}] | {s['p']:.3f} |")
    lines += ["", "Variants:", ""]
    seen = {name: r["what"] for variants in payload["corpora"].values()
            for name, r in variants.items()}
    lines += [f"- `{name}`: {what}" for name, what in seen.items()]
    return "\n".join(lines) + "\n"


def _training(payload: dict[str, Any]) -> str:
    """What the folds trained on, per corpus, as the results file records it (``extra_train``:
    the config's ``data.extra_train`` files; a file without the key predates them)."""
    extra = payload.get("extra_train", {})
    corpora = [c for c in payload["corpora"] if c in _oof.CORPORA]
    own = [c for c in corpora if not extra.get(c)]
    more = [c for c in corpora if extra.get(c)]
    parts = []
    if own:
        parts.append(f"{', '.join(own)}: each fold trains on the corpus's own documents only")
    if more:
        parts.append(f"{', '.join(more)}: each fold also trains on the config's "
                     "`data.extra_train` documents")
    return "; ".join(parts) + "." if parts else ""


def pooled(results: dict[str, Any], communities: list[str]) -> None:
    """Add ``camoni-pooled``: the paired test over the documents of all ``communities`` together,
    for each variant already run on every one of them."""
    base = [_oof.shipped(c) for c in communities]
    out = results.setdefault("camoni-pooled", {})
    for name, (what, _) in VARIANTS.items():
        if not all(_is_cached(c, name) for c in communities):
            continue
        runs = [_oof.cached(c, f"variant-{name}", what, VARIANTS[name][1]) for c in communities]
        joined_base = _join(base)
        out[name] = {"what": what, **compare("camoni", joined_base, _join(runs))}


def _join(runs: list[_oof.OutOfFold]) -> _oof.OutOfFold:
    out = _oof.OutOfFold([], [], [], [], [], [])
    for r in runs:
        # document ids repeat across communities; prefix them so documents stay distinct
        out.gold += [replace(d, id=f"{i}:{d.id}") for i, d in enumerate(r.gold)]
        out.pred += [replace(d, id=f"{i}:{d.id}") for i, d in enumerate(r.pred)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", nargs="*", default=["diabetes", "sclerosis", "depression"])
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS))
    parser.add_argument("--pooled", action="store_true",
                        help="only add the pooled Camoni comparison of the cached runs")
    parser.add_argument("--cached-only", action="store_true",
                        help="skip variants whose out-of-fold run is not cached yet")
    args = parser.parse_args()
    results: dict[str, Any] = read_figures("accuracy_variants", {"corpora": {}})["corpora"]
    t0 = time.perf_counter()
    if args.pooled:
        pooled(results, ["diabetes", "sclerosis", "depression"])
        args.corpora = []
        _write(results, t0)
    for corpus in args.corpora:
        base = _oof.shipped(corpus)
        by_variant = results.setdefault(corpus, {})
        for name in args.variants:
            what, run = VARIANTS[name]
            if args.cached_only and not _is_cached(corpus, name):
                continue
            started = time.perf_counter()
            oof = _oof.cached(corpus, f"variant-{name}", what, run)
            seconds = round(time.perf_counter() - started, 1)
            by_variant[name] = {"what": what, **compare(corpus, base, oof),
                                "seconds": seconds}
            if name in AGAINST_SHIPPED:
                shipped_name = ("propagate-in-document"
                                if _oof.corpus_config(corpus).linker.propagate else "base")
                ref = _oof.cached(corpus, f"variant-{shipped_name}", VARIANTS[shipped_name][0],
                                  VARIANTS[shipped_name][1])
                by_variant[name]["vs_shipped"] = compare(corpus, ref, oof)
            first = by_variant[name][levels(corpus)[0]]
            print(corpus, name, round(first["f1"], 4), round(first["delta_f1"], 4),
                  first["p"], flush=True)
            _write(results, t0)  # after every variant, so an interrupted run keeps its figures


def _write(results: dict[str, Any], t0: float) -> None:
    """Merge ``results`` into the results file (runs on other corpora may write it too)."""
    previous = read_figures("accuracy_variants", {"corpora": {}})
    merged, extra = previous["corpora"], dict(previous.get("extra_train", {}))
    for corpus, variants in results.items():
        merged.setdefault(corpus, {}).update(variants)
        if corpus in _oof.CORPORA:
            extra[corpus] = _oof.corpus_config(corpus).data.extra_train
    write_result("accuracy_variants", {
        "folds": _oof.FOLDS, "seed": _oof.SEED, "baseline": "base", "extra_train": extra,
        "test": "paired bootstrap over documents, 1000 resamples, two-sided p; camoni-pooled "
                "resamples the documents of the three communities together",
        "corpora": merged, "seconds": round(time.perf_counter() - t0, 1)})
    DOCS.write_text(markdown(read_figures("accuracy_variants")), encoding="utf-8")


if __name__ == "__main__":
    main()
