"""Bootstrap confidence intervals and the paired bootstrap test, resampling documents.

Mentions of one document are not independent (one author, one topic, the same concept named
again), so the unit of resampling is the document: a resample draws as many documents as the
corpus holds, with replacement, and sums their true positives, false positives and false
negatives into micro-averaged precision, recall and F1. The per-document counts are computed
once; resampling then only weights the rows of a ``(documents, 3)`` count array by how often
each document was drawn, so 1,000 resamples of 1,000 documents take a fraction of a second.

Intervals are percentile intervals: the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
quantiles of the resampled scores.

The paired test draws the same documents for both systems in each resample and looks at
``delta = F1(B) - F1(A)``. Its p-value is two-sided: twice the share of resamples whose delta
does not have the sign of the observed delta (zero counts as a flip), capped at 1; an observed
delta of exactly 0 gives 1. A small p-value says the sign of the difference is stable under
resampling of documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from xlnel.evaluation.metrics import Scores, evaluate_per_document
from xlnel.types import Document

__all__ = [
    "PairedComparison",
    "ScoresWithCI",
    "bootstrap_counts",
    "bootstrap_shares",
    "bootstrap_scores",
    "document_counts",
    "paired_bootstrap",
    "paired_bootstrap_counts",
    "paired_bootstrap_shares",
]

# Cap on the index entries drawn at once (resamples x documents), to bound memory.
_MAX_DRAWN = 4_000_000


@dataclass(frozen=True)
class ScoresWithCI:
    """Micro-averaged scores with bootstrap confidence intervals.

    Attributes:
        scores: Scores of the whole corpus (not resampled).
        precision_ci: ``(low, high)`` interval of precision.
        recall_ci: ``(low, high)`` interval of recall.
        f1_ci: ``(low, high)`` interval of F1.
        confidence: Coverage of the intervals (0.95).
        n_resamples: Bootstrap resamples drawn.
        n_documents: Documents resampled.
        seed: Seed of the random generator.
    """

    scores: Scores
    precision_ci: tuple[float, float]
    recall_ci: tuple[float, float]
    f1_ci: tuple[float, float]
    confidence: float
    n_resamples: int
    n_documents: int
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        """Intervals and bootstrap settings as a plain dict (the scores are left out)."""
        return {
            "precision": list(self.precision_ci),
            "recall": list(self.recall_ci),
            "f1": list(self.f1_ci),
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "n_documents": self.n_documents,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class PairedComparison:
    """Paired bootstrap comparison of system B against system A on the same documents.

    Attributes:
        scores_a: Scores of system A on the whole corpus.
        scores_b: Scores of system B on the whole corpus.
        delta_f1: ``scores_b.f1 - scores_a.f1``.
        delta_f1_ci: ``(low, high)`` percentile interval of the resampled deltas.
        p_value: Two-sided share of resamples where the delta's sign flips (module docstring).
        confidence: Coverage of the interval.
        n_resamples: Bootstrap resamples drawn.
        n_documents: Documents resampled.
        seed: Seed of the random generator.
    """

    scores_a: Scores
    scores_b: Scores
    delta_f1: float
    delta_f1_ci: tuple[float, float]
    p_value: float
    confidence: float
    n_resamples: int
    n_documents: int
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        """The comparison as a plain dict (for JSON reports)."""
        return {
            "a": self.scores_a.to_dict(),
            "b": self.scores_b.to_dict(),
            "delta_f1": self.delta_f1,
            "delta_f1_ci": list(self.delta_f1_ci),
            "p_value": self.p_value,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "n_documents": self.n_documents,
            "seed": self.seed,
        }


def document_counts(
    gold: Sequence[Document], pred: Sequence[Document], level: str = "span"
) -> NDArray[np.int64]:
    """Per-document ``[tp, fp, fn]`` at ``level``, one row per gold document in gold order.

    Raises:
        ValueError: As :func:`xlnel.evaluation.evaluate`.
    """
    rows = [(s.tp, s.fp, s.fn) for s in evaluate_per_document(gold, pred, level).values()]
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), 3)


def _check_counts(counts: ArrayLike, name: str) -> NDArray[np.int64]:
    array = np.asarray(counts)
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"{name} must have shape (documents, 3) for tp, fp, fn; got {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(f"{name} holds no document; the bootstrap needs at least one")
    if np.any(array < 0) or not np.all(np.equal(np.mod(array, 1), 0)):
        raise ValueError(f"{name} must hold non-negative integer counts")
    return array.astype(np.int64)


def _check_settings(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")


def _resampled_sums(
    counts: NDArray[np.int64], n_resamples: int, seed: int | None
) -> NDArray[np.int64]:
    """Column sums of ``n_resamples`` resamples of the rows of ``counts``, with replacement."""
    rng = np.random.default_rng(seed)
    n_docs = counts.shape[0]
    chunk = max(1, _MAX_DRAWN // n_docs)
    sums = np.empty((n_resamples, counts.shape[1]), dtype=np.int64)
    for begin in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - begin)
        rows = rng.integers(0, n_docs, size=(size, n_docs))
        # How often each resample drew each document, then a product with the counts: much
        # faster than summing the gathered rows.
        flat = (rows + np.arange(size)[:, None] * n_docs).ravel()
        weights = np.bincount(flat, minlength=size * n_docs).reshape(size, n_docs)
        sums[begin : begin + size] = weights @ counts
    return sums


def _prf(sums: NDArray[np.int64]) -> tuple[NDArray[np.float64], ...]:
    """Precision, recall and F1 of ``[tp, fp, fn]`` rows, 0.0 where undefined (as Scores)."""
    tp, fp, fn = (sums[:, k].astype(np.float64) for k in range(3))

    def ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)

    # 2 tp / (2 tp + fp + fn) is the harmonic mean of precision and recall, and 0 when tp is 0.
    return ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2 * tp, 2 * tp + fp + fn)


def _interval(values: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_counts(
    counts: ArrayLike,
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> ScoresWithCI:
    """Bootstrap intervals of micro precision, recall and F1 from per-document counts.

    Args:
        counts: ``(documents, 3)`` array of ``[tp, fp, fn]`` per document, such as
            :func:`document_counts` gives, or the rows of pooled out-of-fold predictions.
        n_resamples: Resamples of the documents, each as many as ``counts`` has rows.
        seed: Seed of :func:`numpy.random.default_rng`; the same seed gives the same intervals.
        confidence: Coverage of the percentile intervals.

    Returns:
        The corpus scores with their intervals.

    Raises:
        ValueError: For a badly shaped, empty or negative ``counts``, ``n_resamples < 1`` or a
            confidence outside (0, 1).
    """
    array = _check_counts(counts, "counts")
    _check_settings(n_resamples, confidence)
    precision, recall, f1 = _prf(_resampled_sums(array, n_resamples, seed))
    tp, fp, fn = (int(v) for v in array.sum(axis=0))
    return ScoresWithCI(
        scores=Scores.from_counts(tp, fp, fn),
        precision_ci=_interval(precision, confidence),
        recall_ci=_interval(recall, confidence),
        f1_ci=_interval(f1, confidence),
        confidence=confidence,
        n_resamples=n_resamples,
        n_documents=array.shape[0],
        seed=seed,
    )


def bootstrap_scores(
    gold: Sequence[Document],
    pred: Sequence[Document],
    level: str = "span",
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> ScoresWithCI:
    """Scores of ``pred`` against ``gold`` at ``level`` with bootstrap intervals over documents.

    Args:
        gold: Documents with gold mentions (every one is resampled).
        pred: Documents with predicted mentions, a subset of the gold ids.
        level: One of :data:`xlnel.evaluation.LEVELS`.
        n_resamples: Resamples of the gold documents.
        seed: Seed of the random generator.
        confidence: Coverage of the percentile intervals.

    Returns:
        The corpus scores with their intervals.

    Raises:
        ValueError: As :func:`xlnel.evaluation.evaluate` and :func:`bootstrap_counts` (an empty
            gold corpus cannot be resampled).
    """
    counts = document_counts(gold, pred, level)
    return bootstrap_counts(counts, n_resamples, seed, confidence)


def paired_bootstrap_counts(
    counts_a: ArrayLike,
    counts_b: ArrayLike,
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> PairedComparison:
    """Paired bootstrap test of F1(B) - F1(A) from per-document counts of both systems.

    Args:
        counts_a: ``(documents, 3)`` ``[tp, fp, fn]`` of system A.
        counts_b: Counts of system B on the same documents, in the same row order.
        n_resamples: Resamples; each draws the same documents for A and B.
        seed: Seed of the random generator.
        confidence: Coverage of the interval of the delta.

    Returns:
        Both systems' scores, the delta with its interval and the two-sided p-value.

    Raises:
        ValueError: As :func:`bootstrap_counts`, or when the two arrays differ in shape.
    """
    array_a, array_b = _check_counts(counts_a, "counts_a"), _check_counts(counts_b, "counts_b")
    if array_a.shape != array_b.shape:
        raise ValueError(
            f"counts_a and counts_b must cover the same documents; shapes {array_a.shape} "
            f"and {array_b.shape}"
        )
    _check_settings(n_resamples, confidence)
    sums = _resampled_sums(np.hstack([array_a, array_b]), n_resamples, seed)
    deltas = _prf(sums[:, 3:])[2] - _prf(sums[:, :3])[2]
    scores_a = Scores.from_counts(*(int(v) for v in array_a.sum(axis=0)))
    scores_b = Scores.from_counts(*(int(v) for v in array_b.sum(axis=0)))
    delta = scores_b.f1 - scores_a.f1
    return PairedComparison(
        scores_a=scores_a,
        scores_b=scores_b,
        delta_f1=delta,
        delta_f1_ci=_interval(deltas, confidence),
        p_value=_sign_flip_p_value(delta, deltas),
        confidence=confidence,
        n_resamples=n_resamples,
        n_documents=array_a.shape[0],
        seed=seed,
    )


def _sign_flip_p_value(delta: float, deltas: NDArray[np.float64]) -> float:
    """Twice the share of resampled deltas not of the observed delta's sign, capped at 1."""
    if delta == 0.0:
        return 1.0
    flips = deltas <= 0.0 if delta > 0.0 else deltas >= 0.0
    return float(min(1.0, 2.0 * float(np.mean(flips))))


def paired_bootstrap(
    gold: Sequence[Document],
    pred_a: Sequence[Document],
    pred_b: Sequence[Document],
    level: str = "span",
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> PairedComparison:
    """Paired bootstrap test of system B against system A on the same gold documents.

    Args:
        gold: Documents with gold mentions.
        pred_a: Predictions of system A (the baseline).
        pred_b: Predictions of system B.
        level: One of :data:`xlnel.evaluation.LEVELS`.
        n_resamples: Resamples of the gold documents, shared by both systems.
        seed: Seed of the random generator.
        confidence: Coverage of the interval of the delta.

    Returns:
        Both systems' scores, ``delta_f1 = F1(B) - F1(A)`` with its interval and p-value.

    Raises:
        ValueError: As :func:`xlnel.evaluation.evaluate` and :func:`paired_bootstrap_counts`.
    """
    return paired_bootstrap_counts(
        document_counts(gold, pred_a, level),
        document_counts(gold, pred_b, level),
        n_resamples,
        seed,
        confidence,
    )


def bootstrap_shares(
    hits: ArrayLike,
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> list[tuple[float, float]]:
    """Bootstrap intervals of the share of hits in each column, resampling rows (items).

    Args:
        hits: ``(items, columns)`` array of 0/1 (or counts), e.g. correct at 1 and at 10.
        n_resamples: Resamples drawn.
        seed: Seed of the random generator.
        confidence: Coverage of the percentile intervals.

    Returns:
        One ``(low, high)`` interval per column.

    Raises:
        ValueError: On an empty or non-2-D array, or bad settings.
    """
    _check_settings(n_resamples, confidence)
    array = np.asarray(hits, dtype=np.int64)
    if array.ndim != 2 or array.shape[0] == 0:
        raise ValueError(f"hits must be a non-empty (items, columns) array, got {array.shape}")
    shares = _resampled_sums(array, n_resamples, seed) / array.shape[0]
    return [_interval(shares[:, j], confidence) for j in range(array.shape[1])]


def paired_bootstrap_shares(
    hits_a: ArrayLike,
    hits_b: ArrayLike,
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Paired bootstrap test of the share of hits of B minus A on the same items.

    Args:
        hits_a: One 0/1 per item of system A (e.g. correct at 1).
        hits_b: System B's on the same items, in the same order.
        n_resamples: Resamples; each draws the same items for A and B.
        seed: Seed of the random generator.
        confidence: Coverage of the interval of the delta.

    Returns:
        ``share_a``, ``share_b``, ``delta`` (B - A), ``delta_ci`` and the two-sided ``p``
        (twice the share of resampled deltas not of the observed delta's sign), with
        ``items``, ``b_only`` and ``a_only`` (items only one system gets right).

    Raises:
        ValueError: On empty or not 1-D hits, hits of different lengths, or bad settings.
    """
    array_a, array_b = np.asarray(hits_a, dtype=np.int64), np.asarray(hits_b, dtype=np.int64)
    if array_a.ndim != 1 or array_a.shape[0] == 0 or array_a.shape != array_b.shape:
        raise ValueError(
            f"hits_a and hits_b must be non-empty 1-D arrays over the same items; shapes "
            f"{array_a.shape} and {array_b.shape}"
        )
    _check_settings(n_resamples, confidence)
    n = array_a.shape[0]
    sums = _resampled_sums(np.stack([array_a, array_b], axis=1), n_resamples, seed)
    deltas = (sums[:, 1] - sums[:, 0]) / n
    delta = float(array_b.sum() - array_a.sum()) / n
    return {
        "items": n,
        "share_a": float(array_a.sum()) / n,
        "share_b": float(array_b.sum()) / n,
        "delta": delta,
        "delta_ci": list(_interval(deltas, confidence)),
        "p": _sign_flip_p_value(delta, deltas),
        "b_only": int(((array_b > 0) & (array_a == 0)).sum()),
        "a_only": int(((array_a > 0) & (array_b == 0)).sum()),
        "n_resamples": n_resamples,
        "confidence": confidence,
    }
