"""From scored candidates to links: best concept per span, overlaps resolved."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from xlnel.evaluation import evaluate
from xlnel.types import Candidate, Document, Link

BestPerSpan = dict[tuple[int, int], tuple[float, float, Candidate]]
"""Per span ``(start, end)``: the filter score, string score and candidate chosen for it."""


def decide(document: Document, candidates: Sequence[Candidate], scores: np.ndarray,
           threshold: float, overlap: str = "longest") -> Document:
    """Keep, per span, the best candidate scoring at least ``threshold``; resolve overlaps.

    Args:
        document: The document the candidates belong to.
        candidates: Its candidates.
        scores: One score per candidate (the filter's, or the matcher's cosine).
        threshold: Minimum score, inclusive.
        overlap: ``longest``: among overlapping spans keep the longer, then the higher scored;
            ``score``: the higher scored, then the longer; ``none``: keep them all.

    Returns:
        The document with the links as its entities.
    """
    return resolve_overlaps(document, best_per_span(candidates, scores, threshold), overlap)


def best_per_span(candidates: Sequence[Candidate], scores: np.ndarray,
                  threshold: float) -> BestPerSpan:
    """The best candidate of each span among those scoring at least ``threshold``."""
    best: BestPerSpan = {}
    for cand, score in zip(candidates, scores, strict=True):
        if score < threshold:
            continue
        key = (cand.span.start, cand.span.end)
        # ties on the filter score go to the closer string match
        rank = (float(score), cand.score)
        if key not in best or rank > best[key][:2]:
            best[key] = (rank[0], rank[1], cand)
    return best


def resolve_overlaps(document: Document, best: BestPerSpan, overlap: str = "longest") -> Document:
    """Links from each span's best candidate, overlapping spans resolved (see :func:`decide`)."""
    if overlap == "score":
        chosen = sorted(best.values(), key=lambda t: (-t[0], -(t[2].span.end - t[2].span.start),
                                                       -t[1], t[2].span.start))
    else:
        chosen = sorted(best.values(), key=lambda t: (-(t[2].span.end - t[2].span.start),
                                                       -t[0], -t[1], t[2].span.start))
    links: list[Link] = []
    # the kept spans never overlap, so sorted by start their ends are sorted too: a new span
    # overlaps a kept one only if it overlaps its neighbour on either side (bisect, not a scan)
    starts: list[int] = []
    ends: list[int] = []
    for score, _, cand in chosen:
        s, e = cand.span.start, cand.span.end
        if overlap != "none":
            i = bisect.bisect_left(starts, s)
            if (i > 0 and ends[i - 1] > s) or (i < len(starts) and starts[i] < e):
                continue
            starts.insert(i, s)
            ends.insert(i, e)
        links.append(Link(s, e, cand.span.text, (cand.concept_id,), score=round(score, 6)))
    links.sort(key=lambda link: (link.start, link.end))
    return replace(document, entities=tuple(links))


def choose_threshold(documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
                     scores: Sequence[np.ndarray], level: str = "span",
                     overlap: str = "longest", steps: int = 41) -> tuple[float, float]:
    """The threshold with the best F1 on annotated documents, and that F1.

    Thresholds tried are ``steps`` quantiles of the scores plus ``steps`` evenly spaced values
    in [0, 1]; among equal F1s the highest threshold wins, as it keeps fewer links.
    """
    pooled = np.concatenate([np.asarray(s, dtype=np.float64) for s in scores] or [np.zeros(0)])
    if pooled.size == 0:
        return 0.5, 0.0
    # quantiles alone leave the sparse high-score range (where positives sit) nearly unsampled
    grid = np.unique(np.concatenate([np.quantile(pooled, np.linspace(0, 1, steps)),
                                     np.linspace(0.0, 1.0, steps)]))
    grid = grid[(grid >= pooled.min()) & (grid <= pooled.max())]
    best_t, best_f1 = float(grid[-1]), -1.0
    for t in grid[::-1]:
        pred = [decide(d, c, s, float(t), overlap)
                for d, c, s in zip(documents, candidates, scores, strict=True)]
        f1 = evaluate(list(documents), pred, level).f1
        if f1 > best_f1 + 1e-12:
            best_t, best_f1 = float(t), f1
    return best_t, best_f1
