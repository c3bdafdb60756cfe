"""Hand-worked cases for the ``document`` and ``span-prefix`` evaluation levels."""

from __future__ import annotations

import pytest

from xlnel.evaluation import (
    UNTYPED,
    Scores,
    evaluate,
    evaluate_by_type,
    evaluate_per_document,
)
from xlnel.evaluation.matching import prefix_equivalent
from xlnel.types import Document, Link

TEXT = "aspirin treats headache and fever in diabetes patients"


def link(start: int, end: int, *ids: str, type: str | None = None, text: str = TEXT) -> Link:
    return Link(start=start, end=end, text=text[start:end], concept_ids=ids, type=type)


def doc(*links: Link, doc_id: str = "d1", text: str = TEXT) -> Document:
    return Document(id=doc_id, text=text, entities=links)


def counts(scores: Scores) -> tuple[int, int, int]:
    return scores.tp, scores.fp, scores.fn


# --- document level ------------------------------------------------------------------------------


def test_document_level_ignores_offsets_and_repeats() -> None:
    # gold ids {C1, C2}; predictions name C1 twice (elsewhere), C2 at the wrong span, and C9
    gold = [doc(link(0, 7, "C1"), link(15, 23, "C2"), link(28, 33, "C1"))]
    pred = [doc(link(37, 45, "C1"), link(46, 54, "C1"), link(0, 5, "C2"), link(8, 14, "C9"))]
    scores = evaluate(gold, pred, "document")
    assert counts(scores) == (2, 1, 0)
    assert (scores.precision, scores.recall) == pytest.approx((2 / 3, 1.0))
    assert scores.f1 == pytest.approx(0.8)


def test_document_level_splits_composite_gold_ids() -> None:
    gold = [doc(link(36, 44, "C3", "C4"))]  # PubTator "C3|C4"
    assert counts(evaluate(gold, [doc(link(36, 44, "C3"))], "document")) == (1, 0, 1)
    both = [doc(link(36, 44, "C3"), link(0, 7, "C4"))]
    assert counts(evaluate(gold, both, "document")) == (2, 0, 0)


def test_document_level_ignores_idless_mentions() -> None:
    # PubTator "-1" is read as no concept id: it is neither gold nor predicted
    gold = [doc(link(0, 7), link(15, 23, "C2"))]
    pred = [doc(link(0, 7), link(15, 23, "C2"), link(28, 33))]
    assert counts(evaluate(gold, pred, "document")) == (1, 0, 0)


def test_document_level_counts_ids_per_document() -> None:
    # C1 in both documents counts twice; C2 found in d1 but gold only in d2 is fp + fn
    gold = [doc(link(0, 7, "C1")), doc(link(0, 7, "C1"), link(15, 23, "C2"), doc_id="d2")]
    pred = [doc(link(0, 7, "C1"), link(15, 23, "C2")), doc(link(0, 7, "C1"), doc_id="d2")]
    assert counts(evaluate(gold, pred, "document")) == (2, 1, 1)
    per_doc = evaluate_per_document(gold, pred, "document")
    assert counts(per_doc["d1"]) == (1, 1, 0)
    assert counts(per_doc["d2"]) == (1, 0, 1)


def test_document_level_empty() -> None:
    assert counts(evaluate([doc()], [doc()], "document")) == (0, 0, 0)
    assert counts(evaluate([doc()], [doc(link(0, 7, "C1"))], "document")) == (0, 1, 0)
    assert counts(evaluate([doc(link(0, 7, "C1"))], [], "document")) == (0, 0, 1)


def test_document_level_by_type() -> None:
    gold = [
        doc(
            link(0, 7, "C1", type="Chemical"),
            link(15, 23, "C2", type="Disease"),
            link(28, 33, "C3", type="Disease"),
        )
    ]
    pred = [
        doc(
            link(0, 7, "C1"),  # untyped: takes the gold type of C1 -> Chemical tp
            link(15, 23, "C2", type="Chemical"),  # wrong type: Chemical fp, Disease fn
            link(28, 33, "C3", type="Disease"),
            link(37, 45, "C9"),  # untyped, not in gold -> UNTYPED fp
        )
    ]
    by_type = evaluate_by_type(gold, pred, "document")
    assert list(by_type) == ["Chemical", "Disease", UNTYPED]
    assert counts(by_type["Chemical"]) == (1, 1, 0)
    assert counts(by_type["Disease"]) == (1, 0, 1)
    assert counts(by_type[UNTYPED]) == (0, 1, 0)
    # types are ignored overall: C1, C2, C3 found, C9 spurious
    assert counts(evaluate(gold, pred, "document")) == (3, 1, 0)


def test_document_level_by_type_adds_up_when_types_agree() -> None:
    gold = [doc(link(0, 7, "C1", type="Chemical"), link(15, 23, "C2", type="Disease"))]
    pred = [doc(link(0, 7, "C1", type="Chemical"), link(28, 33, "C5", type="Disease"))]
    by_type = evaluate_by_type(gold, pred, "document")
    total = evaluate(gold, pred, "document")
    summed = [sum(c) for c in zip(*(counts(s) for s in by_type.values()), strict=True)]
    assert tuple(summed) == counts(total) == (1, 1, 1)


# --- span-prefix level ---------------------------------------------------------------------------

HE = "חולה בסוכרת וכאבים"  # "patient with-diabetes and-pains"; ב at 5, ו at 12


def he(start: int, end: int) -> Link:
    return link(start, end, text=HE)


def he_doc(*links: Link) -> Document:
    return doc(*links, text=HE)


def test_span_prefix_accepts_prefix_on_prediction_side() -> None:
    gold, pred = [he_doc(he(6, 11))], [he_doc(he(5, 11))]  # סוכרת / בסוכרת
    assert counts(evaluate(gold, pred, "span-prefix")) == (1, 0, 0)
    assert counts(evaluate(gold, pred, "span")) == (0, 1, 1)


def test_span_prefix_accepts_prefix_on_gold_side() -> None:
    gold, pred = [he_doc(he(12, 18))], [he_doc(he(13, 18))]  # וכאבים / כאבים
    assert counts(evaluate(gold, pred, "span-prefix")) == (1, 0, 0)


def test_span_prefix_rejects_other_letters() -> None:
    # חולה / ולה: ח is not a prefix letter
    assert counts(evaluate([he_doc(he(1, 4))], [he_doc(he(0, 4))], "span-prefix")) == (0, 1, 1)
    # a Latin letter in front is not a prefix either
    text = "xdiabetes"
    gold, pred = doc(link(1, 9, text=text), text=text), doc(link(0, 9, text=text), text=text)
    assert counts(evaluate([gold], [pred], "span-prefix")) == (0, 1, 1)


def test_span_prefix_rejects_two_character_difference() -> None:
    text = "ולסוכרת"  # ול + סוכרת: two prefix letters
    gold, pred = doc(link(2, 7, text=text), text=text), doc(link(0, 7, text=text), text=text)
    assert counts(evaluate([gold], [pred], "span-prefix")) == (0, 1, 1)


def test_span_prefix_needs_equal_ends() -> None:
    assert counts(evaluate([he_doc(he(6, 11))], [he_doc(he(5, 10))], "span-prefix")) == (0, 1, 1)


def test_span_prefix_is_one_to_one() -> None:
    # both predictions fit the one gold mention: one tp, one fp
    gold, pred = [he_doc(he(6, 11))], [he_doc(he(5, 11), he(6, 11))]
    assert counts(evaluate(gold, pred, "span-prefix")) == (1, 1, 0)


def test_prefix_equivalent_ignores_empty_text() -> None:
    # a link built without its text cannot show a prefix letter
    assert not prefix_equivalent(Link(6, 11, "סוכרת"), Link(5, 11, ""))
