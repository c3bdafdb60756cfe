"""Tests of the classed false negatives and false positives (``evaluate --errors``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from xlnel.evaluation import LEVELS, evaluate, scoring_errors, write_errors
from xlnel.types import Document, Link

TEXT = "type 2 diabetes and high blood pressure with fever, fever"
#       0    5 7      15  19   24    30       39   44     51 53


def _link(start: int, end: int, concept: str | None = None, type_: str | None = None) -> Link:
    return Link(start, end, TEXT[start:end], (concept,) if concept else (), type_)


GOLD = [Document("d", TEXT, (
    _link(0, 15, "C1", "Disease"),     # predicted as 7-15: boundary
    _link(20, 39, "C2", "Disease"),    # predicted with another concept: wrong_concept
    _link(45, 50, "C3", "Sign"),       # predicted with another type only
    _link(52, 57, "C3", "Sign"),       # not predicted at all: missed
))]
PRED = [Document("d", TEXT, (
    _link(7, 15, "C1", "Disease"),
    _link(20, 39, "C9", "Disease"),
    _link(20, 39, "C9", "Disease"),    # the same prediction twice
    _link(40, 44),                     # "with": spurious
    _link(45, 50, "C3", "Disease"),
))]


def _table(level: str) -> list[tuple[str, str, int, int]]:
    return [(e.kind, e.category, e.mention.start, e.mention.end)
            for e in scoring_errors(GOLD, PRED, [level])]


def test_concept_level_classes() -> None:
    assert _table("concept") == [
        ("fn", "boundary", 0, 15), ("fn", "wrong_concept", 20, 39), ("fn", "missed", 52, 57),
        ("fp", "boundary", 7, 15), ("fp", "wrong_concept", 20, 39),
        ("fp", "wrong_concept", 20, 39), ("fp", "spurious", 40, 44)]


def test_span_and_typed_levels() -> None:
    assert _table("span") == [("fn", "boundary", 0, 15), ("fn", "missed", 52, 57),
                              ("fp", "boundary", 7, 15), ("fp", "duplicate", 20, 39),
                              ("fp", "spurious", 40, 44)]
    assert ("fn", "wrong_type", 45, 50) in _table("span+type")
    assert ("fp", "wrong_type", 45, 50) in _table("span+type")


def test_document_level_lists_concept_ids() -> None:
    errors = scoring_errors(GOLD, PRED, ["document"])
    assert [(e.kind, e.concept_id, e.mention.start) for e in errors] == [
        ("fn", "C2", 20), ("fp", "C9", 20)]


@pytest.mark.parametrize("level", LEVELS)
def test_counts_agree_with_the_scores(level: str) -> None:
    counts = Counter(e.kind for e in scoring_errors(GOLD, PRED, [level]))
    scores = evaluate(GOLD, PRED, level)
    assert (counts["fn"], counts["fp"]) == (scores.fn, scores.fp)


def test_identical_and_missing_predictions() -> None:
    assert scoring_errors(GOLD, GOLD, LEVELS) == []
    missing = scoring_errors(GOLD, [], ["span"])
    assert [e.category for e in missing] == ["missed"] * 4


def test_write_and_unknown_level(tmp_path: Path) -> None:
    path = tmp_path / "errors.tsv"
    assert write_errors(path, scoring_errors(GOLD, PRED, ["concept"])) == 7
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t")[:4] == ["document", "level", "kind", "category"]
    assert lines[1].split("\t") == ["d", "concept", "fn", "boundary", "0", "15",
                                    "type 2 diabetes", "Disease", "C1", "7", "15", "diabetes",
                                    "C1"]
    with pytest.raises(ValueError, match="unknown evaluation level"):
        scoring_errors(GOLD, PRED, ["spans"])


def test_overlap_level_errors_follow_the_maximum_matching() -> None:
    # "fever in diabetes" and "diabetes" predicted for gold fever and diabetes: both paired.
    text = "Aspirin relieved headache and fever in diabetes patients."
    gold = [Document("d", text, (Link(30, 35, "fever"), Link(39, 47, "diabetes")))]
    pred = [Document("d", text, (Link(30, 47, "fever in diabetes"), Link(39, 47, "diabetes"),
                                 Link(39, 47, "diabetes")))]
    errors = scoring_errors(gold, pred, ["overlap"])
    assert [(e.kind, e.category, e.mention.start) for e in errors] == [
        ("fp", "duplicate", 39)]
    assert evaluate(gold, pred, "overlap").fp == 1


def test_concept_type_level_judges_the_concept_by_mentions_of_its_own_type() -> None:
    # Gold C2 Disease at 20-39; predicted there as Disease C9 and as Sign C2: the prediction of
    # its own type has another concept, and nothing was matched to the gold mention.
    pred = [Document("d", TEXT, (_link(20, 39, "C9", "Disease"), _link(20, 39, "C2", "Sign")))]
    gold = [Document("d", TEXT, (_link(20, 39, "C2", "Disease"),))]
    errors = scoring_errors(gold, pred, ["concept+type"])
    assert [(e.kind, e.category, e.other.concept_ids if e.other else None)
            for e in errors] == [("fn", "wrong_concept", ("C9",)),
                                 ("fp", "wrong_concept", ("C2",)),
                                 ("fp", "wrong_type", ("C2",))]
