"""From scored candidates to links: best concept per span, overlaps resolved."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from xlnel.evaluation import evaluate
from xlnel.types import Candidate, Document, Link

_Best = tuple[float, float, Candidate]


def decide(document: Document, candidates: Sequence[Candidate], scores: np.ndarray,
           threshold: float, overlap: str = "longest", propagate: bool = False) -> Document:
    """Keep, per span, the best candidate scoring at least ``threshold``; resolve overlaps.

    Args:
        document: The document the candidates belong to.
        candidates: Its candidates.
        scores: One score per candidate (the filter's, or the matcher's cosine).
        threshold: Minimum score, inclusive.
        overlap: ``longest``: among overlapping spans keep the longer, then the higher scored;
            ``score``: the higher scored, then the longer; ``none``: keep them all.
        propagate: Also link the other occurrences of a linked text in the document whose
            candidates score at least half the threshold (they are raised to the threshold,
            then overlaps are resolved again): a post names its terms more than once.

    Returns:
        The document with the links as its entities.
    """
    ordered = _ordered_bests(candidates, scores, overlap)
    links = _resolve(ordered, threshold, overlap)
    if propagate and links:
        linked = {link.text for link in links}
        raised = np.array([max(s, threshold) if c.span.text in linked and s >= threshold / 2
                           else s for c, s in zip(candidates, np.asarray(scores).tolist(),
                                                  strict=True)])
        links = _resolve(_ordered_bests(candidates, raised, overlap), threshold, overlap)
    return replace(document, entities=tuple(links))


def _ordered_bests(candidates: Sequence[Candidate], scores: np.ndarray,
                   overlap: str) -> list[_Best]:
    """Each span's best candidate as (score, matcher score, candidate), in the order overlaps
    are resolved.

    Candidates are ranked by score, ties going to the closer string match; a span's best
    candidate passes a threshold exactly when any of its candidates does, so this does not
    depend on the threshold.
    """
    best: dict[tuple[int, int], _Best] = {}
    for cand, score in zip(candidates, np.asarray(scores, dtype=np.float64).tolist(),
                           strict=True):
        key = (cand.span.start, cand.span.end)
        held = best.get(key)
        if held is None or (score, cand.score) > held[:2]:
            best[key] = (score, cand.score, cand)
    if overlap == "score":
        return sorted(best.values(), key=lambda t: (-t[0], -(t[2].span.end - t[2].span.start),
                                                     -t[1], t[2].span.start))
    return sorted(best.values(), key=lambda t: (-(t[2].span.end - t[2].span.start),
                                                 -t[0], -t[1], t[2].span.start))


def _resolve(ordered: Sequence[_Best], threshold: float, overlap: str) -> list[Link]:
    """Links of the spans scoring at least ``threshold``, taken greedily in ``ordered``."""
    links: list[Link] = []
    taken: list[tuple[int, int]] = []
    for score, _, cand in ordered:
        if score < threshold:
            continue
        s, e = cand.span.start, cand.span.end
        if overlap != "none" and any(s < te and ts < e for ts, te in taken):
            continue
        taken.append((s, e))
        links.append(Link(s, e, cand.span.text, (cand.concept_id,), score=round(score, 6),
                          matched_name=cand.name))
    links.sort(key=lambda link: (link.start, link.end))
    return links


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
    # the best candidate per span and the resolution order do not depend on the threshold
    ordered = [_ordered_bests(c, s, overlap) for c, s in zip(candidates, scores, strict=True)]
    for t in grid[::-1]:
        pred = [replace(d, entities=tuple(_resolve(o, float(t), overlap)))
                for d, o in zip(documents, ordered, strict=True)]
        f1 = evaluate(list(documents), pred, level).f1
        if f1 > best_f1 + 1e-12:
            best_t, best_f1 = float(t), f1
    return best_t, best_f1
