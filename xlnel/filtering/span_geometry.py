"""Where each candidate's span stands among the document's spans, for the filter's features:
how many names of its span match better, the span's best and second-best scores, and whether a
longer or overlapping span matches better.
"""

from __future__ import annotations

import bisect

import numpy as np


def scores_above(group: np.ndarray, scores: np.ndarray, n_groups: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate, how many candidates of its span score strictly higher; and each
    span's best score."""
    order = np.lexsort((scores, group))  # by span, then ascending score
    g, s = group[order], scores[order]
    n = len(order)
    group_end = np.searchsorted(g, np.arange(n_groups), side="right")
    # the end of each run of equal scores in a span: candidates above it score higher
    run_start = np.ones(n, dtype=bool)
    run_start[1:] = (g[1:] != g[:-1]) | (s[1:] != s[:-1])
    run = np.cumsum(run_start) - 1
    run_end = np.append(np.flatnonzero(run_start)[1:], n)
    above = np.empty(n, dtype=np.float64)
    above[order] = group_end[g] - run_end[run]
    best = s[group_end - 1]
    return above, best


def inside_better_span(best: dict[tuple[int, int], float]) -> set[tuple[int, int]]:
    """Spans lying inside a longer span whose best candidate scores higher; a longer, better
    match usually wins the overlap."""
    return _beaten(best, inside=True)


def second_best(group: np.ndarray, scores: np.ndarray, n_groups: int) -> np.ndarray:
    """Each span's second-best matcher score (0 when it has one candidate)."""
    order = np.lexsort((-scores, group))  # by span, then descending score
    g, s = group[order], scores[order]
    starts = np.searchsorted(g, np.arange(n_groups), side="left")
    ends = np.searchsorted(g, np.arange(n_groups), side="right")
    return np.where(ends - starts > 1, s[np.minimum(starts + 1, len(s) - 1)], 0.0)


def overlaps_better_span(best: dict[tuple[int, int], float]) -> set[tuple[int, int]]:
    """Spans sharing a character with another span whose best candidate scores higher."""
    return _beaten(best, inside=False)


def _beaten(best: dict[tuple[int, int], float], inside: bool) -> set[tuple[int, int]]:
    """Spans with a better-scoring span around them (``inside``) or overlapping them."""
    keys = sorted(best)
    starts = [k[0] for k in keys]
    out: set[tuple[int, int]] = set()
    for s, e in keys:
        # spans have at most a few words, so a container or an overlap starts shortly before
        lo = bisect.bisect_left(starts, s - 80)
        hi = bisect.bisect_right(starts, s) if inside else bisect.bisect_left(starts, e)
        if any((keys[j][1] >= e if inside else keys[j][1] > s) and keys[j] != (s, e)
               and best[keys[j]] > best[(s, e)] for j in range(lo, hi)):
            out.add((s, e))
    return out
