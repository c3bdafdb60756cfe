"""Hand-worked cases for xlnel.evaluation.hrm."""

from __future__ import annotations

import pytest

from xlnel.evaluation import HRMReport, hrm_recall
from xlnel.types import Candidate, Document, Link, Span

TEXT = "aspirin treats headache and fever"


def link(start: int, end: int, *ids: str) -> Link:
    return Link(start=start, end=end, text=TEXT[start:end], concept_ids=ids)


def cand(start: int, end: int, concept_id: str) -> Candidate:
    span = Span(start=start, end=end, text=TEXT[start:end])
    return Candidate(span=span, concept_id=concept_id, name=span.text, score=1.0)


GOLD = [
    Document("d1", TEXT, (link(0, 7, "C1"), link(15, 23, "C2", "C3"), link(28, 33))),
    Document("d2", TEXT, (link(0, 7, "C1"),)),
]
CANDIDATES = {
    "d1": [
        cand(0, 7, "C9"),  # right span, wrong concept
        cand(0, 7, "C8"),
        cand(15, 23, "C3"),  # composite gold: second id is enough
        cand(28, 33, "C4"),  # id-less gold
        cand(15, 20, "C2"),  # wrong span
    ],
}  # d2 missing: no candidates


def test_span_level() -> None:
    report = hrm_recall(GOLD, CANDIDATES, "span")
    assert (report.found, report.total) == (3, 4)
    assert report.recall == pytest.approx(0.75)
    assert (report.spans, report.candidates) == (4, 5)
    assert report.candidates_per_span == pytest.approx(1.25)


def test_concept_level_leaves_out_idless_gold() -> None:
    report = hrm_recall(GOLD, CANDIDATES, "concept")
    assert (report.found, report.total) == (1, 3)
    assert report.recall == pytest.approx(1 / 3)
    assert report.level == "concept"


def test_all_found() -> None:
    gold = [Document("d1", TEXT, (link(0, 7, "C1"),))]
    report = hrm_recall(gold, {"d1": [cand(0, 7, "C1")]}, "concept")
    assert report.recall == pytest.approx(1.0)


def test_empty() -> None:
    report = hrm_recall([], {})
    assert report == HRMReport("span", 0.0, 0, 0, 0, 0, 0.0)
    assert report.to_dict() == {
        "level": "span",
        "recall": 0.0,
        "found": 0,
        "total": 0,
        "spans": 0,
        "candidates": 0,
        "candidates_per_span": 0.0,
    }


def test_no_candidates() -> None:
    report = hrm_recall(GOLD, {})
    assert (report.found, report.total, report.recall) == (0, 4, 0.0)


def test_unknown_level() -> None:
    with pytest.raises(ValueError, match=r"'overlap'.*span, concept"):
        hrm_recall(GOLD, CANDIDATES, "overlap")


def test_unknown_candidate_document() -> None:
    with pytest.raises(ValueError, match="'d3'"):
        hrm_recall(GOLD, {"d3": [cand(0, 7, "C1")]})


def test_unreached_rows_name_the_reason_and_nearest_candidate(tmp_path) -> None:
    from xlnel.evaluation.hrm import unreached, write_unreached

    span_rows = unreached(GOLD, CANDIDATES, "span")
    assert [(r.document, r.mention.start, r.reason, r.nearest) for r in span_rows] == [
        ("d2", 0, "no_span", None)]
    concept_rows = unreached(GOLD, CANDIDATES, "concept")
    assert [(r.document, r.reason, r.nearest and r.nearest.concept_id)
            for r in concept_rows] == [("d1", "other_concepts", "C9"), ("d2", "no_span", None)]
    for level in ("span", "concept"):
        report = hrm_recall(GOLD, CANDIDATES, level)
        assert len(unreached(GOLD, CANDIDATES, level)) == report.total - report.found
    # a mention whose span no candidate has: the overlapping candidate is the nearest
    gold = [Document("d1", TEXT, (link(15, 27, "C2"),))]
    (row,) = unreached(gold, CANDIDATES, "span")
    assert (row.reason, row.nearest.span.start, row.nearest.span.end) == ("no_span", 15, 23)
    path = tmp_path / "missed.tsv"
    assert write_unreached(path, concept_rows) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[1].split("\t") == ["d1", "concept", "other_concepts", "0", "7", "aspirin", "C1",
                                    "0", "7", "aspirin", "C9", "aspirin", "1.0000"]
    with pytest.raises(ValueError, match="unknown HRM level"):
        unreached(GOLD, CANDIDATES, "document")
