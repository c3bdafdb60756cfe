"""Where the GBDT pipeline loses strict F1: every out-of-fold error, classified.

For each Camoni community (5-fold cross-validation by document over all visible posts, span
level) and BC5CDR (train -> dev, mention-level concept), each false negative and false positive
of the shipped config with ``linker.propagate`` off is put in one class:

false negatives (gold mention not predicted with its exact offsets [and concept]):
- ``overlap_lost``: a candidate at the gold offsets passed the threshold, but an overlapping span
  won the overlap resolution;
- ``boundary`` / ``boundary_prefix``: a prediction overlaps the gold mention with other offsets
  (``_prefix``: they differ only by leading Hebrew prefix letters);
- ``wrong_concept``: a prediction has the exact offsets but another concept (concept level);
- ``unseen``: no candidate at the gold offsets (with the gold concept, at concept level): the
  term is not in the dictionary in a form the matcher reaches;
- ``filtered``: a candidate at the gold offsets scored below the threshold (``gaps`` summarises
  threshold minus its best score).

false positives (prediction without an exact gold match):
- ``boundary`` / ``boundary_prefix`` / ``wrong_concept`` as above;
- ``context_annotated_elsewhere``: no gold overlap, but the same normalised text is a gold mention
  in another document of the corpus (inconsistent or context-dependent annotation);
- ``context``: no gold overlap and the text is never annotated: a dictionary term the
  annotators did not mark.

``by_text`` splits the gold mentions and the predictions by whether the training part of their
fold annotated their normalised text (``train_text``) or not (``new_text``), with how many of
each are right: recall and precision on the texts the priors know and on new ones.

    python -m benchmarks error_analysis [CORPUS ...]

writes ``benchmarks/results/error_analysis.json`` and the table in ``docs/error-analysis.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import _oof
from benchmarks._common import RESULTS, write_result
from xlnel.evaluation import bootstrap_counts, document_counts  # noqa: E402
from xlnel.evaluation.matching import prefix_equivalent  # noqa: E402
from xlnel.normalization import normalize_string  # noqa: E402
from xlnel.types import Candidate, Document, Link  # noqa: E402

FN_CLASSES = ("overlap_lost", "boundary", "boundary_prefix", "wrong_concept", "unseen",
              "filtered")
FP_CLASSES = ("boundary", "boundary_prefix", "wrong_concept", "context_annotated_elsewhere",
              "context")
GAP_BINS = (0.05, 0.1, 0.2, 0.3, 1.0)
DOCS = Path(__file__).resolve().parent.parent / "docs" / "error-analysis.md"


def level_of(corpus: str) -> str:
    """The strict level a corpus is scored at."""
    return "concept" if corpus == "bc5cdr" else "span"


def _overlaps(a: Link, b: Link) -> bool:
    return a.start < b.end and b.start < a.end


def _best_scores(candidates: Sequence[Candidate], scores: np.ndarray,
                 ) -> dict[tuple[int, int, str | None], float]:
    """Best filter score per (start, end, concept) and per (start, end, None)."""
    best: dict[tuple[int, int, str | None], float] = {}
    for c, s in zip(candidates, scores.tolist(), strict=True):
        for key in ((c.span.start, c.span.end, c.concept_id), (c.span.start, c.span.end, None)):
            best[key] = max(best.get(key, -1.0), s)
    return best


def _hit(g: Link, p: Link, concept: bool) -> bool:
    if (g.start, g.end) != (p.start, p.end):
        return False
    return not concept or p.concept_id in g.concept_ids


def _classify_fn(g: Link, pred: Sequence[Link], best: dict[tuple[int, int, str | None], float],
                 threshold: float, concept: bool) -> tuple[str, float | None]:
    """The class of a missed gold mention and, for ``filtered``, its score gap."""
    ids = g.concept_ids if concept else (None,)
    top = max((best.get((g.start, g.end, cid), -1.0) for cid in ids), default=-1.0)
    exact = [p for p in pred if (p.start, p.end) == (g.start, g.end)]
    if exact:
        return "wrong_concept", None
    if top >= threshold:
        return "overlap_lost", None
    near = [p for p in pred if _overlaps(g, p)]
    if near:
        prefix = any(prefix_equivalent(g, p) for p in near)
        return ("boundary_prefix" if prefix else "boundary"), None
    if top < 0:
        return "unseen", None
    return "filtered", threshold - top


def _classify_fp(p: Link, gold: Sequence[Link], annotated: set[str], lang: str) -> str:
    exact = [g for g in gold if (g.start, g.end) == (p.start, p.end)]
    if exact:
        return "wrong_concept"
    near = [g for g in gold if _overlaps(g, p)]
    if near:
        return "boundary_prefix" if any(prefix_equivalent(g, p) for g in near) else "boundary"
    if normalize_string(p.text, lang) in annotated:
        return "context_annotated_elsewhere"
    return "context"


def training_texts(folds: Sequence[tuple[Sequence[Document], Sequence[Document]]], lang: str,
                   ) -> dict[str, frozenset[str]]:
    """For each held-out document id, the normalised texts its fold's training part annotated."""
    out = {}
    for train, test in folds:
        texts = frozenset(normalize_string(e.text, lang) for d in train for e in d.entities)
        out.update({d.id: texts for d in test})
    return out


def analyse(corpus: str, oof: _oof.OutOfFold, lang: str,
            known: dict[str, frozenset[str]] | None = None) -> dict[str, Any]:
    """Counts of every error class of one corpus's out-of-fold predictions; with ``known``
    (:func:`training_texts`), also the ``by_text`` counts."""
    concept = level_of(corpus) == "concept"
    annotated = {normalize_string(e.text, lang) for d in oof.gold for e in d.entities}
    fn: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    by_text: dict[str, Counter[str]] = {"train_text": Counter(), "new_text": Counter()}
    gaps: list[float] = []
    for gold_doc, cands, scores, thr, pred_doc in zip(
            oof.gold, oof.candidates, oof.scores, oof.thresholds, oof.pred, strict=True):
        gold = [g for g in gold_doc.entities if g.concept_ids or not concept]
        pred = list(pred_doc.entities)
        best = _best_scores(cands, scores)
        seen = known.get(gold_doc.id, frozenset()) if known is not None else frozenset()

        def side(link: Link, seen: frozenset[str] = seen) -> Counter[str]:
            text = normalize_string(link.text, lang)
            return by_text["train_text" if text in seen else "new_text"]

        for g in gold:
            side(g)["gold"] += 1
            if any(_hit(g, p, concept) for p in pred):
                side(g)["gold_found"] += 1
            else:
                cls, gap = _classify_fn(g, pred, best, thr, concept)
                fn[cls] += 1
                if gap is not None:
                    gaps.append(gap)
        idless = {(g.start, g.end) for g in gold_doc.entities if not g.concept_ids}
        for p in pred:
            if concept and (p.start, p.end) in idless:
                continue  # left out of concept-level scoring
            side(p)["predicted"] += 1
            if any(_hit(g, p, concept) for g in gold):
                side(p)["predicted_right"] += 1
            else:
                fp[_classify_fp(p, gold, annotated, lang)] += 1
    edges = np.concatenate([[0.0], GAP_BINS])
    hist = np.histogram(np.clip(gaps, 0, 1), bins=edges)[0].tolist() if gaps else [0] * 5
    out = {"fn": {k: fn[k] for k in FN_CLASSES}, "fp": {k: fp[k] for k in FP_CLASSES},
           "filtered_gap_bins": {f"<={b}": n for b, n in zip(GAP_BINS, hist, strict=True)}}
    if known is not None:
        out["by_text"] = {side: {k: counts[k] for k in ("gold", "gold_found", "predicted",
                                                         "predicted_right")}
                          for side, counts in by_text.items()}
    return out


def scores_with_ci(corpus: str, oof: _oof.OutOfFold) -> dict[str, Any]:
    """Strict P/R/F1 (and document level for BC5CDR) with 95% bootstrap intervals."""
    levels = [level_of(corpus)] + (["document"] if corpus == "bc5cdr" else [])
    out = {}
    for level in levels:
        ci = bootstrap_counts(document_counts(oof.gold, oof.pred, level), seed=0)
        out[level] = {**ci.scores.to_dict(), "ci": ci.to_dict()}
    return out


def markdown(results: dict[str, Any]) -> str:
    """The docs table of :func:`main`'s results."""
    lines = ["# Error analysis of the GBDT pipeline", "",
             "Generated by `python -m benchmarks error_analysis` from "
             "`benchmarks/results/error_analysis.json`. Camoni: out-of-fold predictions of "
             "5-fold cross-validation by document over all visible posts, strict span level; "
             "BC5CDR: train -> dev, mention-level concept. Shipped configs (every Camoni "
             "training set also takes the other two communities' visible posts, "
             "`data.extra_train`) with `linker.propagate` off. Class definitions are in the "
             "script's docstring.", "",
             "| corpus | level | P | R | F1 [95% CI] | FN | " + " | ".join(FN_CLASSES)
             + " | FP | " + " | ".join(FP_CLASSES) + " |",
             "|" + "---|" * (6 + len(FN_CLASSES) + len(FP_CLASSES))]
    for corpus, r in results["corpora"].items():
        level = level_of(corpus)
        s = r["scores"][level]
        e = r["errors"]
        lo, hi = s["ci"]["f1"]
        lines.append(f"| {corpus} | {level} | {s['precision']:.3f} | {s['recall']:.3f} | "
                     f"{s['f1']:.3f} [{lo:.3f}, {hi:.3f}] | {s['fn']} | "
                     + " | ".join(str(e["fn"][k]) for k in FN_CLASSES) + f" | {s['fp']} | "
                     + " | ".join(str(e["fp"][k]) for k in FP_CLASSES) + " |")
    lines += ["", "Missed gold mentions whose candidate was filtered out, by how far its best "
              "score fell below the threshold:", "",
              "| corpus | " + " | ".join(f"gap <= {b}" for b in GAP_BINS) + " |",
              "|" + "---|" * (1 + len(GAP_BINS))]
    for corpus, r in results["corpora"].items():
        bins = r["errors"]["filtered_gap_bins"]
        lines.append(f"| {corpus} | " + " | ".join(str(v) for v in bins.values()) + " |")
    if not any("by_text" in r["errors"] for r in results["corpora"].values()):
        return "\n".join(lines) + "\n"
    lines += ["", "Gold mentions and predictions by whether the training part of their fold "
              "annotated their text (`train_text`) or not (`new_text`): recall on each, and the "
              "precision of the predictions of each:", "",
              "| corpus | gold, train_text | recall, train_text | gold, new_text | "
              "recall, new_text | predictions, train_text | precision, train_text | "
              "predictions, new_text | precision, new_text |", "|" + "---|" * 9]
    for corpus, r in results["corpora"].items():
        if "by_text" not in r["errors"]:
            continue
        t, n = r["errors"]["by_text"]["train_text"], r["errors"]["by_text"]["new_text"]

        def share(a: int, b: int) -> str:
            return f"{a / b:.3f}" if b else "–"

        lines.append(f"| {corpus} | {t['gold']} | {share(t['gold_found'], t['gold'])} | "
                     f"{n['gold']} | {share(n['gold_found'], n['gold'])} | {t['predicted']} | "
                     f"{share(t['predicted_right'], t['predicted'])} | {n['predicted']} | "
                     f"{share(n['predicted_right'], n['predicted'])} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpora", nargs="*", default=list(_oof.CORPORA))
    args = parser.parse_args()
    t0 = time.perf_counter()
    target = RESULTS / "error_analysis.json"
    # corpora analysed by an earlier run are kept, so one corpus can be redone alone
    results: dict[str, Any] = (json.loads(target.read_text())["results"]["corpora"]
                               if target.is_file() else {})
    for corpus in args.corpora:
        lang = _oof.corpus_config(corpus).lang
        oof = _oof.shipped(corpus)
        known = training_texts(_oof.fold_documents(corpus), lang)
        results[corpus] = {"scores": scores_with_ci(corpus, oof),
                           "errors": analyse(corpus, oof, lang, known)}
        print(corpus, json.dumps(results[corpus]), flush=True)
    payload = {"folds": _oof.FOLDS, "seed": _oof.SEED, "corpora": results,
               "seconds": round(time.perf_counter() - t0, 1)}
    write_result("error_analysis", payload)
    DOCS.write_text(markdown(json.loads(target.read_text())["results"]),
                    encoding="utf-8")


if __name__ == "__main__":
    main()
