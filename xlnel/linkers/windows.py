"""Long documents linked window by window, so memory stays bounded per document.

Candidate spans, their candidates (tens per span) and the filter's feature matrix (a row per
candidate) grow with the length of a document. A document longer than
``linker.window_chars`` is therefore cut at paragraph or sentence boundaries into parts of about
that length. Each part *owns* the spans that start inside it and is linked inside a window that
reaches ``linker.window_overlap`` characters further on both sides, so that a span near the cut,
and the context its features read, is seen whole. Per window, only the best candidate of each
owned span above the threshold is kept (offsets shifted back to the document); overlaps are
resolved once over the whole document, as :func:`~xlnel.linkers.decide.decide` does.

A document no longer than ``window_chars`` is one window, linked whole. For longer
ones the links are those of whole-document linking as long as no span is longer than the
overlap and no feature of the filter looks further than the overlap from its span.

:func:`link_windowed` is the one place that decides which documents are linked whole and
which window by window: :meth:`xlnel.runtime.Pipeline.link_batch` and the cells of ``xlnel
experiment`` (:mod:`xlnel.experiments.runner`) both call it, so an experiment scores the links
that ``xlnel link`` gives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from xlnel.config import LinkerConfig
from xlnel.linkers.decide import BestPerSpan, best_per_span, decide_as, resolve_overlaps
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.types import Candidate, Document

__all__ = ["Window", "document_windows", "link_in_windows", "link_windowed", "owned_candidates",
           "plan_windows", "window_documents"]

# Where a cut may fall, best first: after a blank line, after a line end, after a sentence end
# followed by a space, after a space.
_CUTS = (re.compile(r"\n[ \t]*\n"), re.compile(r"\n"), re.compile(r"[.!?;][ \t]"),
         re.compile(r"\s"))

ScoreFn = Callable[[Sequence[Document]], tuple[list[list[Candidate]], list[np.ndarray]]]


@dataclass(frozen=True)
class Window:
    """A part of a document: the text linked (``start``-``end``) and the spans it owns.

    Attributes:
        start: First character of the window's text.
        end: One past its last character.
        own_start: First character a span owned by this window may start at.
        own_end: One past the last such character (the next window's ``own_start``).
    """

    start: int
    end: int
    own_start: int
    own_end: int


def _cut_near(text: str, target: int, lo: int) -> int:
    """A cut position in ``(lo, target]``: just after the best boundary nearest ``target``."""
    for pattern in _CUTS:
        best = -1
        for m in pattern.finditer(text, lo + 1, target):
            best = m.end()
        if best > lo and best <= target:
            return best
    return target


def plan_windows(text: str, size: int, overlap: int) -> list[Window]:
    """Cut ``text`` into owned parts of at most ``size`` characters, each in a wider window.

    Args:
        text: The document text.
        size: Most characters a part owns; a text this long or shorter is one window.
        overlap: Characters each window reaches beyond its part on either side.

    Returns:
        Windows in text order; their owned parts cover the text exactly once.

    Raises:
        ValueError: When ``size`` is not positive or ``overlap`` is negative.
    """
    if size < 1 or overlap < 0:
        raise ValueError(f"window size must be >= 1 and overlap >= 0, got {size}, {overlap}")
    if len(text) <= size:
        return [Window(0, len(text), 0, len(text))]
    bounds = [0]
    while len(text) - bounds[-1] > size:
        # look back at most half a part for a good boundary; cut hard if there is none
        bounds.append(_cut_near(text, bounds[-1] + size, bounds[-1] + size // 2))
    bounds.append(len(text))
    return [Window(max(0, a - overlap), min(len(text), b + overlap), a, b)
            for a, b in zip(bounds, bounds[1:], strict=False)]


def _shifted(candidate: Candidate, offset: int) -> Candidate:
    span = candidate.span
    return replace(candidate, span=replace(span, start=span.start + offset,
                                           end=span.end + offset))


def document_windows(document: Document, linker: LinkerConfig) -> list[Window] | None:
    """The windows ``document`` is linked in under a ``linker`` config section, ``None`` when
    it is linked whole (no longer than ``linker.window_chars``)."""
    if len(document.text) <= linker.window_chars:
        return None
    return plan_windows(document.text, linker.window_chars, linker.window_overlap)


def window_documents(document: Document, windows: Sequence[Window]) -> Iterator[Document]:
    """The text of each window as a document of its own, ``ID#wK`` for window ``K``."""
    for k, w in enumerate(windows):
        yield Document(f"{document.id}#w{k}", document.text[w.start:w.end])


def owned_candidates(windows: Sequence[Window], candidates: Sequence[Sequence[Candidate]]
                     ) -> list[Candidate]:
    """The candidates a document linked window by window is decided on: those of each window's
    own spans (``candidates[k]`` are window ``k``'s), offsets in the whole text, in window
    order, so a span in two windows counts once, as :func:`link_in_windows` counts it."""
    return [_shifted(c, w.start) for w, cands in zip(windows, candidates, strict=True)
            for c in cands if w.own_start <= c.span.start + w.start < w.own_end]


def link_in_windows(document: Document, windows: Sequence[Window], score: ScoreFn,
                    threshold: float, overlap: str, batch: int = 1) -> Document:
    """Link ``document`` window by window (see the module docstring).

    Args:
        document: The document.
        windows: Its windows (:func:`plan_windows`).
        score: Candidates and filter scores of a batch of window documents.
        threshold: The filter's threshold.
        overlap: The linker's overlap rule.
        batch: Windows scored together.

    Returns:
        The document with its links as entities, offsets in the whole text.
    """
    best: BestPerSpan = {}
    parts = list(window_documents(document, windows))
    for lo in range(0, len(parts), batch):
        cands, scores = score(parts[lo:lo + batch])
        for w, c, s in zip(windows[lo:lo + batch], cands, scores, strict=True):
            for (start, end), (f, g, cand) in best_per_span(c, s, threshold).items():
                if w.own_start <= start + w.start < w.own_end:
                    best[(start + w.start, end + w.start)] = (f, g, _shifted(cand, w.start))
    return resolve_overlaps(document, best, overlap)


def link_windowed(documents: Sequence[Document], score: ScoreFn, threshold: float,
                  linker: LinkerConfig, lexicon: AnnotationLexicon | None = None
                  ) -> list[Document]:
    """Link documents as a pipeline does: those no longer than ``linker.window_chars``
    together and whole (:func:`~xlnel.linkers.decide.decide_as`, with every decision of the
    ``linker`` section), longer ones window by window (:func:`link_in_windows`), one window at
    a time so memory stays bounded.

    Args:
        documents: The documents.
        score: Candidates and filter scores of a batch of documents: first of all the whole
            documents at once, then of each window document (:func:`window_documents`).
        threshold: The filter's threshold.
        linker: The ``linker`` config section.
        lexicon: The training annotations' lexicon (used with ``linker.lexicon``).

    Returns:
        The documents with their links as entities, in input order.
    """
    plans = [document_windows(d, linker) for d in documents]
    whole = [d for d, plan in zip(documents, plans, strict=True) if plan is None]
    cands, scores = score(whole) if whole else ([], [])
    decided = iter([decide_as(d, c, s, threshold, linker, lexicon)
                    for d, c, s in zip(whole, cands, scores, strict=True)])
    return [next(decided) if plan is None
            else link_in_windows(d, plan, score, threshold, linker.overlap)
            for d, plan in zip(documents, plans, strict=True)]
