"""From scored candidates to links: best concept per span, overlaps resolved."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from xlnel.evaluation import evaluate
from xlnel.types import Candidate, Document, Link


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
    best: dict[tuple[int, int], tuple[float, float, Candidate]] = {}
    for cand, score in zip(candidates, scores, strict=True):
        if score < threshold:
            continue
        key = (cand.span.start, cand.span.end)
        # ties on the filter score go to the closer string match
        rank = (float(score), cand.score)
        if key not in best or rank > best[key][:2]:
            best[key] = (rank[0], rank[1], cand)
    if overlap == "score":
        chosen = sorted(best.values(), key=lambda t: (-t[0], -(t[2].span.end - t[2].span.start),
                                                       -t[1], t[2].span.start))
    else:
        chosen = sorted(best.values(), key=lambda t: (-(t[2].span.end - t[2].span.start),
                                                       -t[0], -t[1], t[2].span.start))
    links: list[Link] = []
    taken: list[tuple[int, int]] = []
    for score, _, cand in chosen:
        s, e = cand.span.start, cand.span.end
        if overlap != "none" and any(s < te and ts < e for ts, te in taken):
            continue
        taken.append((s, e))
        links.append(Link(s, e, cand.span.text, (cand.concept_id,), score=round(score, 6),
                          matched_name=cand.name))
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
