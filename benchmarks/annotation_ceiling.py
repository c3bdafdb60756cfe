"""How far linking by the span's text alone can go: the text-level ceiling of strict span F1.

The shipped pipelines decide a candidate span mostly by its text (what the training documents
say of it, its names) and little by its context. This benchmark measures what any decision that
looks only at the span's normalised text can reach on a corpus, whatever it learns:

- the candidate spans are the pipeline's (:func:`xlnel.candidates.spans.generate_spans` with the
  config's language, stop words and ``candidates.max_words``; Hebrew prefix-stripped variants
  included), so a gold mention that is no candidate span is missed by every such decision;
- each distinct normalised text ``t`` has its *annotated share*: of its occurrences among the
  candidate spans, the share that are gold mentions (exact offsets);
- a text-level decision links every occurrence of the texts whose share is at least a
  threshold, overlapping spans resolved as the linker does by default (the higher share first,
  then the longer span, then the earlier one);
- ``oracle``: the shares counted over every visible document, the ones scored included, at the
  threshold that maximises F1: an upper bound for a text-only decision (it knows the held-out
  annotations' shares, which no linker does);
- ``cross-validated``: the shares counted over the training part of each of the 5 folds by
  document of the shipped config (other communities' documents included, as it trains), the
  threshold chosen on the training part, applied to the held-out part; texts the training part
  never annotated are not linked. What memorising the annotations gives;
- ``oracle_known_texts``: on the same folds, the oracle's shares and threshold, but only for the
  texts the training part annotated: the best a decision can do that links no text the
  training documents never annotated; ``novel_gold`` counts the held-out gold mentions whose
  text the training part never annotated, which all such decisions miss.

Scores are strict span P/R/F1 of the pooled documents with 95% document-bootstrap intervals; for
the oracle also how many gold mentions are no candidate span, and the F1 at share 0.5.

    python -m benchmarks annotation_ceiling [CORPUS ...]    # default: the Camoni communities

writes ``benchmarks/results/annotation_ceiling.json``.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from benchmarks._common import one_of, write_result
from benchmarks._oof import corpus_config, fold_documents
from xlnel.candidates.spans import generate_spans
from xlnel.evaluation import bootstrap_counts
from xlnel.normalization import normalize_string
from xlnel.stopwords import load_stopwords
from xlnel.types import Document

COMMUNITIES = ("diabetes", "sclerosis", "depression")
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))

Key = tuple[str, int, int]  # document id, start, end


class SpanTexts:
    """Every candidate span of some documents with its normalised text, and the gold spans."""

    def __init__(self, docs: Sequence[Document], lang: str, max_words: int,
                 stopwords: frozenset[str]) -> None:
        self.text_of: dict[Key, str] = {}
        self.gold: set[Key] = set()
        self.docs = [d.id for d in docs]
        for d in docs:
            for s in generate_spans(d.text, lang, max_words, stopwords):
                self.text_of[(d.id, s.start, s.end)] = normalize_string(s.text, lang)
            self.gold |= {(d.id, g.start, g.end) for g in d.entities}

    def shares(self) -> dict[str, float]:
        """The annotated share of each text that is gold at least once."""
        seen: dict[str, int] = defaultdict(int)
        hits: dict[str, int] = defaultdict(int)
        for key, text in self.text_of.items():
            seen[text] += 1
            hits[text] += key in self.gold
        return {t: hits[t] / seen[t] for t in seen if hits[t]}

    def decide(self, shares: dict[str, float], threshold: float) -> set[Key]:
        """The spans a text-level decision links at ``threshold``, overlaps resolved."""
        picked = [(shares[t], k) for k, t in self.text_of.items()
                  if shares.get(t, 0.0) >= threshold]
        picked.sort(key=lambda x: (-x[0], -(x[1][2] - x[1][1]), x[1][1]))
        kept: dict[str, list[tuple[int, int]]] = defaultdict(list)
        out = set()
        for _, (doc, start, end) in picked:
            if any(s < end and start < e for s, e in kept[doc]):
                continue
            kept[doc].append((start, end))
            out.add((doc, start, end))
        return out

    def counts(self, predicted: set[Key]) -> list[list[int]]:
        """Per-document ``[tp, fp, fn]`` of ``predicted`` against the gold spans."""
        rows = {d: [0, 0, 0] for d in self.docs}
        for key in predicted:
            rows[key[0]][0 if key in self.gold else 1] += 1
        for key in self.gold - predicted:
            rows[key[0]][2] += 1
        return [rows[d] for d in self.docs]


def f1(counts: Sequence[Sequence[int]]) -> float:
    tp = sum(r[0] for r in counts)
    fp = sum(r[1] for r in counts)
    fn = sum(r[2] for r in counts)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def best_threshold(spans: SpanTexts, shares: dict[str, float]) -> tuple[float, float]:
    """The threshold of :data:`THRESHOLDS` with the highest F1 on ``spans`` (the lowest of
    ties) and that F1."""
    scored = [(f1(spans.counts(spans.decide(shares, t))), -t) for t in THRESHOLDS]
    best, neg = max(scored)
    return -neg, best


def scores(counts: list[list[int]]) -> dict[str, Any]:
    s = bootstrap_counts(counts, seed=0)
    return {"precision": round(s.scores.precision, 4), "recall": round(s.scores.recall, 4),
            "f1": round(s.scores.f1, 4), "f1_ci": [round(x, 4) for x in s.f1_ci],
            "tp": s.scores.tp, "fp": s.scores.fp, "fn": s.scores.fn}


def run(corpus: str) -> dict[str, Any]:
    """The oracle and cross-validated text-level decisions on one corpus."""
    cfg = corpus_config(corpus)
    stopwords = load_stopwords(cfg.lang, cfg.candidates.stopwords)
    folds = fold_documents(corpus)
    visible = [d for _, test in folds for d in test]

    def span_texts(docs: Sequence[Document]) -> SpanTexts:
        return SpanTexts(docs, cfg.lang, cfg.candidates.max_words, stopwords)

    everything = span_texts(visible)
    shares = everything.shares()
    threshold, _ = best_threshold(everything, shares)
    oracle = scores(everything.counts(everything.decide(shares, threshold)))
    at_half = f1(everything.counts(everything.decide(shares, 0.5)))
    unreachable = len(everything.gold - set(everything.text_of))
    pooled: list[list[int]] = []
    known: list[list[int]] = []
    chosen = []
    novel = 0
    for train, test in folds:
        seen = span_texts(train)
        train_shares = seen.shares()
        t, _ = best_threshold(seen, train_shares)
        chosen.append(t)
        held = span_texts(test)
        pooled += held.counts(held.decide(train_shares, t))
        known += held.counts(held.decide({x: shares[x] for x in train_shares if x in shares},
                                         threshold))
        novel += sum(held.text_of.get(g) not in train_shares for g in held.gold)
    return {"documents": len(visible), "gold_mentions": len(everything.gold),
            "not_candidate_spans": unreachable,
            "oracle": {**oracle, "threshold": threshold, "f1_at_half": round(at_half, 4)},
            "cross_validated": {**scores(pooled), "thresholds": chosen},
            "oracle_known_texts": {**scores(known), "threshold": threshold,
                                   "novel_gold": novel,
                                   "novel_gold_share": round(novel / len(everything.gold), 4)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpora", nargs="*", default=list(COMMUNITIES),
                        type=one_of(list(COMMUNITIES)))
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = {}
    for corpus in args.corpora:
        results[corpus] = run(corpus)
        r = results[corpus]
        print(corpus, "oracle", r["oracle"]["f1"], "cv", r["cross_validated"]["f1"], flush=True)
    write_result("annotation_ceiling", {
        "settings": {"corpora": args.corpora, "thresholds": list(THRESHOLDS), "folds": 5,
                     "level": "span", "bootstrap": {"resamples": 1000, "seed": 0}},
        "results": results, "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
