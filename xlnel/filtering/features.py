"""Match features of (span, name) candidates for the gradient-boosted filter.

Besides string similarity and shape, the strongest signals are *priors* learnt from annotated
documents: how often a span text was a gold mention when it occurred, and how often a name was
the right one when it was proposed. On the training documents they are computed out of fold, so
the classifier never sees a prior that already knows the answer.

With a context ``window`` of Ws > 0 words, two more span features summarise the words around the
span (Ws on each side): the highest and the mean share of gold spans among the spans that had
each of those words in their window.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from xlnel.normalization import normalize_string
from xlnel.types import Candidate, Document

_WORD = re.compile(r"\w+")

#: Features of the span alone (computed once per span), then of the (span, name) pair.
SPAN_FEATURES = (
    "span_chars", "span_words", "prefix_chars", "prev_stop", "next_stop", "prev_boundary",
    "next_boundary", "has_digit", "latin_in_other_script", "inside_better_span",
    "n_candidates", "mention_prior", "mention_seen", "context_prior",
)
PAIR_FEATURES = (
    "score", "rank", "gap_to_best", "name_chars", "length_ratio", "exact", "name_prior",
    "name_seen",
)
FEATURE_NAMES = SPAN_FEATURES + PAIR_FEATURES
#: Added after the span features when the extractor has a context window.
WINDOW_FEATURES = ("window_prior_max", "window_prior_mean")


@dataclass
class Priors:
    """Counts of (positive, seen) per normalised mention text, name, previous word and word of
    the context window."""

    mention: dict[str, list[int]] = field(default_factory=dict)
    name: dict[str, list[int]] = field(default_factory=dict)
    context: dict[str, list[int]] = field(default_factory=dict)
    window: dict[str, list[int]] = field(default_factory=dict)

    def add(self, table: str, key: str, positive: bool) -> None:
        """Count one occurrence of ``key`` in ``table``."""
        counts = getattr(self, table).setdefault(key, [0, 0])
        counts[0] += int(positive)
        counts[1] += 1

    def rate(self, table: str, key: str, alpha: float = 1.0) -> tuple[float, int]:
        """Smoothed share of positive occurrences and the number seen."""
        pos, seen = getattr(self, table).get(key, (0, 0))
        return (pos + 0.1 * alpha) / (seen + alpha), seen


class FeatureExtractor:
    """Turns candidates of a document into a feature matrix (one row per candidate)."""

    def __init__(self, lang: str, stopwords: frozenset[str], window: int = 0) -> None:
        if window < 0:
            raise ValueError(f"window must be at least 0 words, got {window}")
        self.lang = lang
        self.stopwords = stopwords
        self.window = window
        # the same span text recurs for each of its candidates and names recur across spans
        self._norms: dict[str, str] = {}

    def norm(self, text: str) -> str:
        """The normalised form used as the key of priors."""
        norm = self._norms.get(text)
        if norm is None:
            if len(self._norms) >= 1_000_000:  # bounded, for linking whole corpora
                self._norms.clear()
            norm = self._norms[text] = normalize_string(text, self.lang)
        return norm

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Names of the columns :meth:`transform` returns."""
        if self.window:
            return SPAN_FEATURES + WINDOW_FEATURES + PAIR_FEATURES
        return FEATURE_NAMES

    def count(self, priors: Priors, document: Document, candidates: Sequence[Candidate],
              labels: np.ndarray) -> None:
        """Add one document's candidates to the prior counts."""
        span_pos: dict[tuple[int, int], bool] = {}
        word_start: dict[tuple[int, int], int] = {}
        for cand, y in zip(candidates, labels, strict=True):
            priors.add("name", self.norm(cand.name), bool(y))
            key = (cand.span.start, cand.span.end)
            span_pos[key] = span_pos.get(key, False) or bool(y)
            word_start[key] = cand.span.start - len(cand.span.stripped_prefix)
        for (s, e), y in span_pos.items():
            priors.add("mention", self.norm(document.text[s:e]), y)
            priors.add("context", self._prev_word(document.text, s), y)
            if self.window:
                for word in self._window_words(document.text, word_start[(s, e)], e):
                    priors.add("window", word, y)

    def _window_words(self, text: str, start: int, end: int) -> list[str]:
        """The distinct normalised words among ``window`` words on each side of
        ``text[start:end]``, sorted (so feature values do not depend on hash order)."""
        reach = 40 * self.window
        left = _WORD.findall(text[max(0, start - reach):start])[-self.window:]
        right = _WORD.findall(text[end:end + reach])[:self.window]
        return sorted({self.norm(w) for w in left + right})

    def _prev_word(self, text: str, start: int) -> str:
        words = _WORD.findall(text[max(0, start - 40):start])
        return self.norm(words[-1]) if words else "<s>"

    def _next_word(self, text: str, end: int) -> str:
        m = _WORD.search(text, end, min(len(text), end + 40))
        return self.norm(m.group()) if m else "</s>"

    def transform(self, document: Document, candidates: Sequence[Candidate],
                  priors: Priors) -> np.ndarray:
        """Feature matrix of shape (len(candidates), len(self.feature_names))."""
        by_span: dict[tuple[int, int], list[float]] = {}
        for c in candidates:
            by_span.setdefault((c.span.start, c.span.end), []).append(c.score)
        ascending = {k: sorted(v) for k, v in by_span.items()}  # ranks by bisection
        best = {k: v[-1] for k, v in ascending.items()}
        better_inside = _inside_better_span(best)
        span_rows: dict[tuple[int, int], tuple[list[float], str]] = {}
        rows = np.zeros((len(candidates), len(self.feature_names)), dtype=np.float32)
        for i, c in enumerate(candidates):
            key = (c.span.start, c.span.end)
            if key not in span_rows:
                span_rows[key] = (self._span_features(document.text, c, len(by_span[key]),
                                                      key in better_inside, priors),
                                  self.norm(c.span.text))
            span_row, span_norm = span_rows[key]
            rows[i] = span_row + self._pair_features(c, span_norm, ascending[key], best[key],
                                                     priors)
        return rows

    def _pair_features(self, c: Candidate, span_norm: str, ascending: list[float],
                       best: float, priors: Priors) -> list[float]:
        name_norm = self.norm(c.name)
        name_prior, name_seen = priors.rate("name", name_norm)
        better = len(ascending) - bisect.bisect_right(ascending, c.score)  # scores above it
        return [c.score, float(better), best - c.score,
                float(len(name_norm)), len(name_norm) / max(1, len(span_norm)),
                float(span_norm == name_norm), name_prior, math.log1p(name_seen)]

    def _span_features(self, text: str, c: Candidate, n_candidates: int, inside_better: bool,
                       priors: Priors) -> list[float]:
        s, e = c.span.start, c.span.end
        word_start = s - len(c.span.stripped_prefix)
        before = text[word_start - 1] if word_start > 0 else "\n"
        after = text[e] if e < len(text) else "\n"
        prev_word, next_word = self._prev_word(text, word_start), self._next_word(text, e)
        latin = self.lang != "en" and bool(re.search(r"[A-Za-z]", c.span.text))
        mention_prior, mention_seen = priors.rate("mention", self.norm(c.span.text))
        context_prior, _ = priors.rate("context", prev_word)
        window: list[float] = []
        if self.window:
            rates = [priors.rate("window", w)[0]
                     for w in self._window_words(text, word_start, e)] or [priors.rate(
                         "window", "")[0]]
            window = [max(rates), float(np.mean(rates))]
        return [float(e - s), float(len(c.span.text.split())), float(len(c.span.stripped_prefix)),
                float(prev_word in self.stopwords), float(next_word in self.stopwords),
                float(not before.isalnum()), float(not after.isalnum()),
                float(any(ch.isdigit() for ch in c.span.text)), float(latin),
                float(inside_better), float(n_candidates), mention_prior,
                float(np.log1p(mention_seen)), context_prior, *window]


def _inside_better_span(best: dict[tuple[int, int], float]) -> set[tuple[int, int]]:
    """Spans lying inside a longer span whose best candidate scores higher; a longer, better
    match usually wins the overlap."""
    keys = sorted(best)
    starts = [k[0] for k in keys]
    out: set[tuple[int, int]] = set()
    for s, e in keys:
        # spans have at most a few words, so a container starts shortly before
        lo = bisect.bisect_left(starts, s - 80)
        hi = bisect.bisect_right(starts, s)
        if any(keys[j][1] >= e and keys[j] != (s, e) and best[keys[j]] > best[(s, e)]
               for j in range(lo, hi)):
            out.add((s, e))
    return out


def count_priors(extractor: FeatureExtractor, documents: Sequence[Document],
                 candidates: Sequence[Sequence[Candidate]],
                 labels: Sequence[np.ndarray]) -> Priors:
    """Prior counts over many documents."""
    priors = Priors()
    for d, c, y in zip(documents, candidates, labels, strict=True):
        extractor.count(priors, d, c, y)
    return priors
