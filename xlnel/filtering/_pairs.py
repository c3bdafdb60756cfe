"""The text pairs a cross-encoder filter reads (no torch needed).

A candidate becomes the pair (window, name): the window is the span with a few words on each
side, cut from the original document text; the name is the dictionary name proposed for it.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from xlnel.candidates.spans import tokenize
from xlnel.types import Candidate, Document, Span


def window_bounds(starts: Sequence[int], ends: Sequence[int], span: Span,
                  size: int) -> tuple[int, int]:
    """Character bounds of ``span`` widened by ``size`` words on each side.

    Words cut by the span's edges (a Hebrew prefix stripped off the span's first word) count
    as the span's own words, so the window always holds whole words.

    Args:
        starts: Start offsets of the document's words, in order (from
            :func:`xlnel.candidates.spans.tokenize`).
        ends: Their end offsets.
        span: The candidate span.
        size: Words taken on each side; 0 gives the span's own words.

    Returns:
        ``(start, end)`` offsets into the document text.
    """
    first = bisect.bisect_right(ends, span.start)  # first word ending after the span starts
    last = bisect.bisect_left(starts, span.end) - 1  # last word starting before the span ends
    left, right = span.start, span.end
    lo = max(0, first - size)
    if lo < len(starts):
        left = min(left, starts[lo])
    hi = min(len(ends) - 1, last + size)
    if hi >= 0:
        right = max(right, ends[hi])
    return left, right


SPAN_MARKERS = ("[", "]")
"""Put around the span inside its window when spans are marked."""


def document_windows(document: Document, spans: Sequence[Span], size: int,
                     mark_span: bool = False) -> list[str]:
    """The window text of each span of one document (the text is tokenised once).

    Args:
        document: The document the spans index into.
        spans: Spans of that document.
        size: Words taken on each side of a span.
        mark_span: Put :data:`SPAN_MARKERS` around the span. Without them, spans that differ
            only by a stripped prefix or by a word at the text's edge share one window.

    Returns:
        One window per span, cut verbatim from ``document.text`` (plus the markers).
    """
    words = tokenize(document.text)
    starts = [start for start, _ in words]
    ends = [end for _, end in words]
    text = document.text
    out: list[str] = []
    for span in spans:
        left, right = window_bounds(starts, ends, span, size)
        if mark_span:
            out.append(f"{text[left:span.start]}{SPAN_MARKERS[0]}{text[span.start:span.end]}"
                       f"{SPAN_MARKERS[1]}{text[span.end:right]}")
        else:
            out.append(text[left:right])
    return out


def candidate_windows(document: Document, candidates: Sequence[Candidate], size: int,
                      mark_span: bool = False) -> list[str]:
    """The window of each candidate's span (spans shared by candidates are cut once)."""
    unique: dict[Span, int] = {}
    for cand in candidates:
        unique.setdefault(cand.span, len(unique))
    windows = document_windows(document, list(unique), size, mark_span)
    return [windows[unique[cand.span]] for cand in candidates]


def top_k_mask(candidates: Sequence[Candidate], k: int | None) -> np.ndarray:
    """Which candidates carry one of the ``k`` best distinct names of their span.

    Names are ranked by their best matcher score at the span (ties keep the generator's
    order); every candidate with a kept name is kept, so a name listed under several concept
    ids (a names list plus DFT entries) takes one of the ``k`` places, not several, and the
    transformer still reads ``k`` different names. ``k`` None keeps every candidate.
    """
    if k is None:
        return np.ones(len(candidates), dtype=bool)
    return name_ranks(candidates) <= k


def name_ranks(candidates: Sequence[Candidate]) -> np.ndarray:
    """The 1-based rank of each candidate's name among the distinct names of its span."""
    ranks = np.zeros(len(candidates), dtype=np.int64)
    for ordered in _best_first_per_span(candidates):
        rank_of: dict[str, int] = {}
        for i in ordered:
            ranks[i] = rank_of.setdefault(candidates[i].name, len(rank_of) + 1)
    return ranks


def span_ranks(candidates: Sequence[Candidate]) -> np.ndarray:
    """The 1-based rank of each candidate by matcher score among those of its span."""
    ranks = np.zeros(len(candidates), dtype=np.int64)
    for ordered in _best_first_per_span(candidates):
        ranks[ordered] = np.arange(1, len(ordered) + 1)
    return ranks


def _best_first_per_span(candidates: Sequence[Candidate]) -> list[list[int]]:
    """Candidate indices grouped by span, each group by descending score (stable on ties)."""
    by_span: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, cand in enumerate(candidates):
        by_span[(cand.span.start, cand.span.end)].append(i)
    return [sorted(indices, key=lambda i: -candidates[i].score) for indices in by_span.values()]
