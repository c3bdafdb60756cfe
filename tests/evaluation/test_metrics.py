"""Hand-worked cases for xlnel.evaluation.metrics."""

from __future__ import annotations

import re

import pytest

from xlnel.evaluation import (
    LEVELS,
    UNTYPED,
    Scores,
    evaluate,
    evaluate_by_type,
    evaluate_per_document,
)
from xlnel.evaluation.matching import MENTION_MATCHERS
from xlnel.evaluation.metrics import pair_documents
from xlnel.types import Document, Link

TEXT = "aspirin treats headache and fever in diabetes patients"


def link(start: int, end: int, *ids: str, type: str | None = None) -> Link:
    return Link(start=start, end=end, text=TEXT[start:end], concept_ids=ids, type=type)


def doc(*links: Link, doc_id: str = "d1", text: str = TEXT) -> Document:
    return Document(id=doc_id, text=text, entities=links)


def counts(scores: Scores) -> tuple[int, int, int]:
    return scores.tp, scores.fp, scores.fn


# --- Scores -----------------------------------------------------------------------------------


def test_from_counts_golden_values() -> None:
    scores = Scores.from_counts(tp=3, fp=1, fn=2)
    assert scores.precision == pytest.approx(0.75)
    assert scores.recall == pytest.approx(0.6)
    assert scores.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)


def test_from_counts_all_zero_is_zero() -> None:
    assert Scores.from_counts(0, 0, 0) == Scores(0.0, 0.0, 0.0, 0, 0, 0)


def test_from_counts_rejects_negative() -> None:
    with pytest.raises(ValueError, match="fp"):
        Scores.from_counts(1, -1, 0)


def test_to_dict_keys_and_values() -> None:
    assert Scores.from_counts(1, 1, 0).to_dict() == {
        "precision": 0.5,
        "recall": 1.0,
        "f1": pytest.approx(2 / 3),
        "tp": 1,
        "fp": 1,
        "fn": 0,
    }


# --- whole-corpus cases, every level -------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_empty_corpus(level: str) -> None:
    assert counts(evaluate([], [], level)) == (0, 0, 0)


@pytest.mark.parametrize("level", LEVELS)
def test_identical_empty_documents_score_zero(level: str) -> None:
    scores = evaluate([doc()], [doc()], level)
    assert scores == Scores(0.0, 0.0, 0.0, 0, 0, 0)


@pytest.mark.parametrize("level", LEVELS)
def test_identical(level: str) -> None:
    gold = [doc(link(0, 7, "C1"), link(15, 23, "C2"), link(36, 44, "C3", "C4"))]
    scores = evaluate(gold, gold, level)
    # the document level counts concept ids: the composite C3|C4 gives two
    assert counts(scores) == ((4, 0, 0) if level == "document" else (3, 0, 0))
    assert (scores.precision, scores.recall, scores.f1) == pytest.approx((1.0, 1.0, 1.0))


@pytest.mark.parametrize("level", LEVELS)
def test_only_false_positives(level: str) -> None:
    scores = evaluate([doc()], [doc(link(0, 7, "C1"), link(15, 23, "C2"))], level)
    assert counts(scores) == (0, 2, 0)
    assert (scores.precision, scores.recall, scores.f1) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("level", LEVELS)
def test_only_false_negatives(level: str) -> None:
    scores = evaluate([doc(link(0, 7, "C1"), link(15, 23, "C2"))], [doc()], level)
    assert counts(scores) == (0, 0, 2)


@pytest.mark.parametrize("level", LEVELS)
def test_missing_predicted_document_counts_gold_as_fn(level: str) -> None:
    gold = [doc(link(0, 7, "C1")), doc(link(0, 7, "C1"), link(8, 14, "C2"), doc_id="d2")]
    scores = evaluate(gold, [doc(link(0, 7, "C1"))], level)
    assert counts(scores) == (1, 0, 2)
    assert scores.recall == pytest.approx(1 / 3)


# --- span level ----------------------------------------------------------------------------------


def test_span_level_ignores_concepts_and_needs_exact_offsets() -> None:
    gold = [doc(link(0, 7, "C1"), link(15, 23, "C2"))]
    pred = [doc(link(0, 7, "WRONG"), link(15, 22, "C2"))]
    scores = evaluate(gold, pred, "span")
    assert counts(scores) == (1, 1, 1)
    assert scores.f1 == pytest.approx(0.5)


def test_span_level_duplicate_predictions_one_tp() -> None:
    gold = [doc(link(0, 7))]
    pred = [doc(link(0, 7), link(0, 7), link(0, 7))]
    assert counts(evaluate(gold, pred, "span")) == (1, 2, 0)


def test_span_level_duplicate_gold_counts_each() -> None:
    gold = [doc(link(0, 7, "C1"), link(0, 7, "C2"))]
    assert counts(evaluate(gold, [doc(link(0, 7))], "span")) == (1, 0, 1)
    assert counts(evaluate(gold, [doc(link(0, 7), link(0, 7))], "span")) == (2, 0, 0)


# --- concept level -------------------------------------------------------------------------------


def test_concept_level_wrong_concept_is_fp_and_fn() -> None:
    gold = [doc(link(0, 7, "C1"), link(15, 23, "C2"))]
    pred = [doc(link(0, 7, "C1"), link(15, 23, "C9"))]
    scores = evaluate(gold, pred, "concept")
    assert counts(scores) == (1, 1, 1)
    assert (scores.precision, scores.recall) == pytest.approx((0.5, 0.5))


def test_concept_level_idless_gold_and_prediction_on_it_are_left_out() -> None:
    gold = [doc(link(0, 7, "C1"), link(15, 23))]
    pred = [doc(link(0, 7, "C1"), link(15, 23, "C2"), link(15, 23))]
    assert counts(evaluate(gold, pred, "concept")) == (1, 0, 0)
    # the id-less gold mention still counts at span level
    assert counts(evaluate(gold, pred, "span")) == (2, 1, 0)


def test_concept_level_only_idless_gold_scores_zero() -> None:
    assert counts(evaluate([doc(link(0, 7))], [doc()], "concept")) == (0, 0, 0)


def test_concept_level_composite_gold_accepts_either_id() -> None:
    gold = [doc(link(36, 44, "C3", "C4"))]
    for concept in ("C3", "C4"):
        assert counts(evaluate(gold, [doc(link(36, 44, concept))], "concept")) == (1, 0, 0)
    # one gold mention is matched once, even by both of its ids
    both = [doc(link(36, 44, "C3"), link(36, 44, "C4"))]
    assert counts(evaluate(gold, both, "concept")) == (1, 1, 0)


def test_concept_level_matching_is_maximal() -> None:
    # greedy in order would give pred C1 to the composite gold and leave pred C2 unmatched
    gold = [doc(link(0, 7, "C1", "C2"), link(0, 7, "C1"))]
    pred = [doc(link(0, 7, "C1"), link(0, 7, "C2"))]
    assert counts(evaluate(gold, pred, "concept")) == (2, 0, 0)


def test_concept_level_prediction_without_id_is_fp() -> None:
    gold = [doc(link(0, 7, "C1"))]
    assert counts(evaluate(gold, [doc(link(0, 7))], "concept")) == (0, 1, 1)


def test_concept_level_uses_first_predicted_id() -> None:
    gold = [doc(link(0, 7, "C1"))]
    assert counts(evaluate(gold, [doc(link(0, 7, "C9", "C1"))], "concept")) == (0, 1, 1)


def test_concept_level_duplicate_predictions_one_tp() -> None:
    gold = [doc(link(0, 7, "C1"))]
    pred = [doc(link(0, 7, "C1"), link(0, 7, "C1"))]
    assert counts(evaluate(gold, pred, "concept")) == (1, 1, 0)


# --- overlap level -------------------------------------------------------------------------------


def test_overlap_level_partial_overlap_is_tp() -> None:
    gold = [doc(link(15, 23))]  # "headache"
    pred = [doc(link(20, 27))]  # "che and"
    assert counts(evaluate(gold, pred, "overlap")) == (1, 0, 0)


def test_overlap_level_touching_spans_do_not_overlap() -> None:
    gold = [doc(link(0, 7))]
    assert counts(evaluate(gold, [doc(link(7, 14))], "overlap")) == (0, 1, 1)


def test_overlap_level_one_prediction_over_two_gold() -> None:
    gold = [doc(link(15, 23), link(28, 33))]  # "headache", "fever"
    pred = [doc(link(15, 33))]  # "headache and fever"
    scores = evaluate(gold, pred, "overlap")
    assert counts(scores) == (1, 0, 1)
    assert (scores.precision, scores.recall) == pytest.approx((1.0, 0.5))


def test_overlap_level_two_predictions_over_one_gold() -> None:
    gold = [doc(link(15, 33))]
    pred = [doc(link(15, 23), link(28, 33))]
    scores = evaluate(gold, pred, "overlap")
    assert counts(scores) == (1, 1, 0)
    assert scores.f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)


def test_overlap_level_prefers_largest_overlap() -> None:
    # gold A = [0, 10), gold B = [8, 20); pred P = [5, 12) overlaps A by 5, B by 4;
    # pred Q = [9, 10) overlaps A by 1, B by 1.  P-A first, then Q-B: two tp.
    text = "x" * 20
    gold = [Document("d", text, (Link(0, 10, text[:10]), Link(8, 20, text[8:])))]
    pred = [Document("d", text, (Link(5, 12, text[5:12]), Link(9, 10, text[9:10])))]
    assert counts(evaluate(gold, pred, "overlap")) == (2, 0, 0)


def test_overlap_level_is_a_maximum_matching() -> None:
    # The docs' example: gold fever [30, 35) and diabetes [39, 47); predictions
    # "fever in diabetes" [30, 47) overlaps fever by 5 and diabetes by 8, "diabetes" [39, 47)
    # overlaps diabetes by 8.  Pairing the largest overlap first would give one pair; the
    # maximum matching pairs [30, 47)-fever and [39, 47)-diabetes: tp 2.
    text = "Aspirin relieved headache and fever in diabetes patients."
    gold = [Document("d", text, (Link(30, 35, "fever"), Link(39, 47, "diabetes")))]
    pred = [Document("d", text, (Link(30, 47, "fever in diabetes"), Link(39, 47, "diabetes")))]
    assert counts(evaluate(gold, pred, "overlap")) == (2, 0, 0)
    assert MENTION_MATCHERS["overlap"](gold[0].entities, pred[0].entities).pairs == [
        (0, 0), (1, 1)]


def test_overlap_level_takes_largest_total_overlap_among_maximum_matchings() -> None:
    # gold A = [0, 10), B = [10, 12); pred P = [0, 12) overlaps A by 10, B by 2; pred Q = [5, 6)
    # overlaps A by 1.  P-A (10) leaves Q unpaired; the only two-pair matching is P-B, Q-A
    # (total 3), so it wins.  With Q gone P pairs with A, its largest overlap (10 > 2).
    text = "x" * 16
    gold = (Link(0, 10, text[:10]), Link(10, 12, text[10:12]))
    p, q = Link(0, 12, text[:12]), Link(5, 6, text[5:6])
    assert MENTION_MATCHERS["overlap"](gold, (p, q)).pairs == [(0, 1), (1, 0)]
    assert MENTION_MATCHERS["overlap"](gold, (p,)).pairs == [(0, 0)]
    assert MENTION_MATCHERS["overlap"]((), (p,)).pairs == []


def test_overlap_level_ignores_concepts() -> None:
    gold = [doc(link(0, 7, "C1"))]
    assert counts(evaluate(gold, [doc(link(0, 5, "C9"))], "overlap")) == (1, 0, 0)


# --- errors --------------------------------------------------------------------------------------


def test_unknown_level() -> None:
    allowed = "span, span-prefix, concept, overlap, span+type, concept+type, document"
    with pytest.raises(ValueError, match=re.escape(allowed)):
        evaluate([doc()], [doc()], "token")
    with pytest.raises(ValueError, match="'token'"):  # checked before any document is read
        evaluate([], [], "token")


def test_unknown_predicted_document_id() -> None:
    with pytest.raises(ValueError, match="'nope'"):
        evaluate([doc()], [doc(doc_id="nope")])


def test_text_mismatch() -> None:
    with pytest.raises(ValueError, match=r"'d1'.*text"):
        evaluate([doc()], [doc(text=TEXT.upper())])


def test_duplicate_document_id() -> None:
    with pytest.raises(ValueError, match="duplicate gold document id 'd1'"):
        evaluate([doc(), doc()], [])


# --- breakdowns ----------------------------------------------------------------------------------


def test_evaluate_per_document() -> None:
    gold = [doc(link(0, 7)), doc(link(0, 7), doc_id="d2")]
    pred = [doc(link(0, 7), link(8, 14))]
    per_doc = evaluate_per_document(gold, pred)
    assert list(per_doc) == ["d1", "d2"]
    assert counts(per_doc["d1"]) == (1, 1, 0)
    assert counts(per_doc["d2"]) == (0, 0, 1)


def test_evaluate_by_type_adds_up() -> None:
    gold = [
        doc(
            link(0, 7, "C1", type="Chemical"),
            link(15, 23, "C2", type="Disease"),
            link(28, 33, "C3", type="Disease"),
        )
    ]
    pred = [
        doc(
            link(0, 7, "C1"),  # untyped prediction: tp under the gold type
            link(15, 23, "C2", type="Disease"),
            link(37, 45, "C4", type="Disease"),  # fp under its own type
            link(46, 54, "C5"),  # untyped fp
        )
    ]
    by_type = evaluate_by_type(gold, pred, "concept")
    assert list(by_type) == ["Chemical", "Disease", UNTYPED]
    assert counts(by_type["Chemical"]) == (1, 0, 0)
    assert counts(by_type["Disease"]) == (1, 1, 1)
    assert counts(by_type[UNTYPED]) == (0, 1, 0)
    total = evaluate(gold, pred, "concept")
    summed = [sum(c) for c in zip(*(counts(s) for s in by_type.values()), strict=True)]
    assert tuple(summed) == counts(total)


# --- typed levels ---------------------------------------------------------------------------


def test_typed_levels_need_the_gold_type_too() -> None:
    gold = [doc(link(0, 7, "C1", type="Disease"), link(15, 23, "C2", type="Chemical"),
                link(36, 44, "C3", type="Disease"))]
    pred = [doc(link(0, 7, "C1", type="Disease"),    # right offsets, concept and type
                link(15, 23, "C2", type="Disease"),  # right offsets and concept, wrong type
                link(36, 44, "C9", type="Disease"))]  # right offsets and type, wrong concept
    assert counts(evaluate(gold, pred, "span")) == (3, 0, 0)
    assert counts(evaluate(gold, pred, "span+type")) == (2, 1, 1)
    assert counts(evaluate(gold, pred, "concept")) == (2, 1, 1)
    assert counts(evaluate(gold, pred, "concept+type")) == (1, 2, 2)


def test_typed_levels_match_an_untyped_prediction_only_to_untyped_gold() -> None:
    gold = [doc(link(0, 7, "C1", type="Disease"), link(15, 23, "C2"))]
    pred = [doc(link(0, 7, "C1"), link(15, 23, "C2"))]
    assert counts(evaluate(gold, pred, "span+type")) == (1, 1, 1)


def test_typed_concept_level_leaves_predictions_on_id_less_gold_of_their_type_out() -> None:
    gold = [doc(link(0, 7, type="Disease"), link(15, 23, "C2", type="Disease"))]
    pred = [doc(link(0, 7, "C1", type="Disease"), link(15, 23, "C2", type="Disease"))]
    assert counts(evaluate(gold, pred, "concept+type")) == (1, 0, 0)


def test_predicted_text_with_spaces_for_tabs_and_line_breaks_is_scored_on_the_gold_text() -> None:
    text = "fever\tand\r\ndiabetes"
    gold = [Document("d", text, (Link(0, 5, "fever"), Link(11, 19, "diabetes")))]
    flat = text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    pred = [Document("d", flat, (Link(0, 10, flat[:10]), Link(11, 19, "diabetes")))]
    assert counts(evaluate(gold, pred, "span")) == (1, 1, 1)
    [(_, paired)] = pair_documents(gold, pred)
    assert paired is not None and paired.text == text
    assert [link.text for link in paired.entities] == ["fever\tand\r", "diabetes"]
    with pytest.raises(ValueError, match="at character 5 .*predicted '_and"):
        evaluate(gold, [Document("d", flat.replace(" and", "_and"))], "span")


def test_overlap_matching_by_clusters_is_the_whole_maximum_matching() -> None:
    """Matching cluster by cluster pairs as many mentions, with as much overlap, as one
    assignment over all of a document's mentions."""
    import random

    import numpy as np
    from scipy.optimize import linear_sum_assignment

    def spans(rng: random.Random, n: int) -> list[Link]:
        out = []
        for _ in range(n):
            start = rng.randrange(0, 60)
            out.append(Link(start, start + rng.randrange(1, 8), "t", ("C",)))
        return out

    rng = random.Random(7)
    for _ in range(200):
        gold, pred = spans(rng, rng.randrange(0, 9)), spans(rng, rng.randrange(0, 9))
        pairs = MENTION_MATCHERS["overlap"](gold, pred).pairs
        overlap = np.array([[max(0, min(g.end, p.end) - max(g.start, p.start)) for p in pred]
                            for g in gold], dtype=np.int64).reshape(len(gold), len(pred))
        rows, cols = linear_sum_assignment(overlap > 0, maximize=True)
        best = int((overlap[rows, cols] > 0).sum()) if overlap.size else 0
        assert len(pairs) == best
        assert len({j for j, _ in pairs}) == len({i for _, i in pairs}) == len(pairs)
        assert all(overlap[j, i] > 0 for j, i in pairs)
