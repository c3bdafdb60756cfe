"""Bootstrap intervals and the paired bootstrap test, on small hand-made corpora."""

from __future__ import annotations

import numpy as np
import pytest

from xlnel.evaluation import (
    LEVELS,
    bootstrap_counts,
    bootstrap_scores,
    document_counts,
    evaluate,
    paired_bootstrap,
    paired_bootstrap_counts,
)
from xlnel.evaluation.bootstrap import bootstrap_shares, paired_bootstrap_shares
from xlnel.types import Document, Link

TEXT = "aspirin treats headache and fever in diabetes patients"
SPANS = ((0, 7), (15, 23), (28, 33), (37, 45))


def corpus(n_docs: int, keep: int) -> list[Document]:
    """``n_docs`` documents, each with the first ``keep`` of four mentions (ids C0..C3)."""
    return [
        Document(
            f"d{n}",
            TEXT,
            tuple(Link(s, e, TEXT[s:e], (f"C{k}",)) for k, (s, e) in enumerate(SPANS[:keep])),
        )
        for n in range(n_docs)
    ]


def noisy(gold: list[Document], drop: float, seed: int) -> list[Document]:
    """Predictions that miss each gold mention with probability ``drop``."""
    rng = np.random.default_rng(seed)
    return [
        Document(d.id, d.text, tuple(e for e in d.entities if rng.random() >= drop)) for d in gold
    ]


def test_document_counts_rows_follow_gold_order() -> None:
    gold = corpus(2, 4)
    pred = [Document("d1", TEXT, gold[1].entities[:1])]
    assert document_counts(gold, pred).tolist() == [[0, 0, 4], [1, 0, 3]]


@pytest.mark.parametrize("level", LEVELS)
def test_identical_predictions_give_interval_of_one(level: str) -> None:
    gold = corpus(5, 3)
    result = bootstrap_scores(gold, gold, level, n_resamples=200)
    assert result.scores.f1 == pytest.approx(1.0)
    for interval in (result.precision_ci, result.recall_ci, result.f1_ci):
        assert interval == pytest.approx((1.0, 1.0))
    assert (result.n_resamples, result.n_documents, result.seed) == (200, 5, 0)


def test_same_seed_same_interval_other_seed_differs() -> None:
    gold = corpus(30, 4)
    pred = noisy(gold, 0.3, seed=1)
    first = bootstrap_scores(gold, pred, n_resamples=300, seed=7)
    assert bootstrap_scores(gold, pred, n_resamples=300, seed=7) == first
    assert bootstrap_scores(gold, pred, n_resamples=300, seed=8).f1_ci != first.f1_ci


def test_interval_contains_the_corpus_score() -> None:
    gold = corpus(40, 4)
    pred = noisy(gold, 0.4, seed=2)
    result = bootstrap_scores(gold, pred, n_resamples=500)
    assert result.scores == evaluate(gold, pred)
    low, high = result.recall_ci
    assert low < result.scores.recall < high
    assert result.precision_ci == pytest.approx((1.0, 1.0))


def test_bootstrap_counts_golden_two_documents() -> None:
    # rows: a perfect document and an empty-prediction one. A resample holds k perfect rows
    # (recall k/2); its 2.5% / 97.5% percentiles are 0 and 1 with enough resamples.
    result = bootstrap_counts([[2, 0, 0], [0, 0, 2]], n_resamples=2000, seed=0)
    assert (result.scores.tp, result.scores.fp, result.scores.fn) == (2, 0, 2)
    assert result.recall_ci == pytest.approx((0.0, 1.0))
    assert result.to_dict()["recall"] == pytest.approx([0.0, 1.0])


def test_bootstrap_handles_large_corpora_in_chunks() -> None:
    counts = np.tile([[1, 0, 1]], (50_000, 1))  # more rows x resamples than one chunk
    result = bootstrap_counts(counts, n_resamples=200)
    assert result.recall_ci == pytest.approx((0.5, 0.5))


@pytest.mark.parametrize(
    "counts, message",
    [
        (np.zeros((0, 3)), "no document"),
        (np.zeros((2, 2)), "shape"),
        ([[1, -1, 0]], "non-negative"),
        ([[0.5, 0, 0]], "integer"),
    ],
)
def test_bootstrap_counts_rejects_bad_counts(counts: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_counts(counts)  # type: ignore[arg-type]


def test_bootstrap_counts_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_counts([[1, 0, 0]], n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_counts([[1, 0, 0]], confidence=1.0)


def test_paired_test_of_a_system_against_itself() -> None:
    gold = corpus(20, 4)
    pred = noisy(gold, 0.3, seed=3)
    result = paired_bootstrap(gold, pred, pred, n_resamples=300)
    assert result.delta_f1 == 0.0
    assert result.delta_f1_ci == (0.0, 0.0)
    assert result.p_value == 1.0
    assert result.scores_a == result.scores_b


def test_paired_test_finds_a_clearly_better_system() -> None:
    gold = corpus(40, 4)
    worse, better = noisy(gold, 0.6, seed=4), noisy(gold, 0.1, seed=5)
    result = paired_bootstrap(gold, worse, better, n_resamples=500)
    assert result.delta_f1 == pytest.approx(
        evaluate(gold, better).f1 - evaluate(gold, worse).f1
    )
    assert result.delta_f1 > 0.2
    assert result.delta_f1_ci[0] > 0.0
    assert result.p_value < 0.01
    # the other way round: same p-value, negative delta
    reverse = paired_bootstrap(gold, better, worse, n_resamples=500)
    assert reverse.delta_f1 == pytest.approx(-result.delta_f1)
    assert reverse.p_value == pytest.approx(result.p_value)


def test_paired_p_value_golden() -> None:
    # A finds document 0's one mention and misses document 1's three; B the other way round.
    a = [[1, 0, 0], [0, 0, 3]]
    b = [[0, 0, 1], [3, 0, 0]]
    result = paired_bootstrap_counts(a, b, n_resamples=4000, seed=0)
    assert result.delta_f1 == pytest.approx(6 / 7 - 2 / 5)
    # Resamples of two documents: (0, 0) gives F1 1 for A and 0 for B, a flip; (1, 1), (0, 1)
    # and (1, 0) keep B ahead. Flips in 1/4 of the resamples: p = 2 * 1/4.
    assert result.p_value == pytest.approx(0.5, abs=0.05)


def test_paired_counts_must_cover_the_same_documents() -> None:
    with pytest.raises(ValueError, match="same documents"):
        paired_bootstrap_counts([[1, 0, 0]], [[1, 0, 0], [1, 0, 0]])


def test_bootstrap_shares_all_or_nothing_columns_have_point_intervals() -> None:
    hits = [[1, 0], [1, 0], [1, 0]]
    assert bootstrap_shares(hits, n_resamples=50) == [(1.0, 1.0), (0.0, 0.0)]


def test_bootstrap_shares_interval_holds_the_share() -> None:
    hits = [[i % 2, 1] for i in range(200)]
    (low, high), (low_k, high_k) = bootstrap_shares(hits, n_resamples=500, seed=1)
    assert low < 0.5 < high and high - low < 0.2
    assert low_k == high_k == 1.0


def test_bootstrap_shares_rejects_empty_input() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_shares(np.zeros((0, 2)))


def test_paired_bootstrap_shares_counts_by_hand() -> None:
    a = [1, 1, 0, 0, 1, 0, 0, 0, 1, 1]
    b = [1, 1, 1, 1, 1, 0, 1, 0, 1, 0]
    out = paired_bootstrap_shares(a, b, n_resamples=500, seed=1)
    assert (out["share_a"], out["share_b"]) == (0.5, 0.7)
    assert out["delta"] == pytest.approx(0.2)
    assert (out["b_only"], out["a_only"], out["items"]) == (3, 1, 10)
    low, high = out["delta_ci"]
    assert low <= 0.2 <= high and 0.0 < out["p"] <= 1.0


def test_paired_bootstrap_shares_of_one_system_is_no_difference() -> None:
    out = paired_bootstrap_shares([1, 0, 1], [1, 0, 1], n_resamples=50)
    assert out["delta"] == 0.0 and out["delta_ci"] == [0.0, 0.0] and out["p"] == 1.0


def test_paired_bootstrap_shares_rejects_unpaired_hits() -> None:
    with pytest.raises(ValueError, match="same items"):
        paired_bootstrap_shares([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="same items"):
        paired_bootstrap_shares([], [])
