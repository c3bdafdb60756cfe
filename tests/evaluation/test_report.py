"""Evaluation reports of documents and files: levels, intervals, types, refusals."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlnel.evaluation import LEVELS, evaluate, evaluate_report, format_report
from xlnel.evaluation.files import evaluate_files, evaluate_files_report, read_corpus
from xlnel.evaluation.report import check_predictions, resolve_levels
from xlnel.io import write_jsonl
from xlnel.types import Document, Link

TEXT = "aspirin treats headache and fever in diabetes patients"


def link(start: int, end: int, *ids: str, type: str | None = None) -> Link:
    return Link(start, end, TEXT[start:end], ids, type)


GOLD = [
    Document("d1", TEXT, (link(0, 7, "C1", type="Chemical"), link(15, 23, "C2", type="Disease"))),
    Document("d2", TEXT, (link(28, 33, "C3", type="Disease"),)),
]
PRED = [
    Document("d1", TEXT, (link(0, 7, "C1", type="Chemical"), link(15, 23, "C9", type="Disease"))),
    Document("d2", TEXT, ()),
]


def test_resolve_levels() -> None:
    assert resolve_levels(["all"]) == LEVELS
    assert resolve_levels(["document", "span", "document"]) == ("document", "span")
    with pytest.raises(ValueError, match="'token'"):
        resolve_levels(["token"])
    with pytest.raises(ValueError, match="at least one"):
        resolve_levels([])


def test_report_scores_match_evaluate() -> None:
    reports = evaluate_report(GOLD, PRED, ["all"], by_type=True, n_resamples=100)
    assert list(reports) == list(LEVELS)
    for level, report in reports.items():
        assert report.scores == evaluate(GOLD, PRED, level)
        assert report.ci is not None and report.ci.n_resamples == 100
        assert report.by_type is not None and report.comparison is None
    concept = reports["concept"]
    assert (concept.scores.tp, concept.scores.fp, concept.scores.fn) == (1, 1, 2)
    assert concept.by_type is not None
    assert set(concept.by_type) == {"Chemical", "Disease"}


def test_report_without_intervals_and_with_comparison() -> None:
    reports = evaluate_report(GOLD, PRED, ["span"], n_resamples=None, compare=GOLD)
    report = reports["span"]
    assert report.ci is None and report.by_type is None
    assert report.comparison is not None
    assert report.comparison.delta_f1 == pytest.approx(1.0 - report.scores.f1)
    data = report.to_dict()
    assert set(data) == {"scores", "ci", "by_type", "comparison"}
    assert data["comparison"]["b"]["f1"] == pytest.approx(1.0)


def test_format_report_has_a_table_per_level() -> None:
    text = format_report(evaluate_report(GOLD, PRED, ["span", "document"], by_type=True,
                                         n_resamples=50, compare=GOLD))
    assert "== span ==" in text and "== document ==" in text
    assert "95% CI" in text and "Chemical" in text and "delta F1 B - A" in text


def test_check_predictions_refuses_silent_zeros(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ValueError, match="pred.jsonl holds no document"):
        check_predictions(GOLD, [], "pred.jsonl")
    with pytest.raises(ValueError, match=r"none of the 1 document ids of p\.jsonl.*'x'"):
        check_predictions(GOLD, [Document("x", TEXT)], "p.jsonl")
    with pytest.raises(ValueError, match="gold documents are empty"):
        check_predictions([], PRED)
    changed = [Document(PRED[0].id, PRED[0].text + " ")]
    with pytest.raises(ValueError, match=(
            rf"document '{PRED[0].id}': its text in p\.jsonl differs from its text in g\.jsonl "
            rf"at character {len(TEXT)} \(of {len(TEXT)} gold, {len(TEXT) + 1} predicted\): "
            r"gold '', predicted ' '")):
        check_predictions(GOLD, changed, "p.jsonl", "g.jsonl")
    with caplog.at_level(logging.WARNING):
        check_predictions(GOLD, PRED[:1], "p.jsonl")
    assert "1 of 2 gold documents have no predictions in p.jsonl" in caplog.text


def test_report_warns_about_a_gold_without_mentions(caplog: pytest.LogCaptureFixture) -> None:
    bare = [Document(doc.id, doc.text) for doc in GOLD]
    with caplog.at_level(logging.WARNING):
        evaluate_report(bare, PRED, ["span"], n_resamples=None, compare=PRED)
    assert caplog.text.count(f"none of the {len(GOLD)} gold documents has a mention") == 1
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        evaluate_report(GOLD, PRED, ["span"], n_resamples=None)
    assert "has a mention" not in caplog.text


def test_files_report_and_refusals(tmp_path: Path) -> None:
    gold, pred, empty = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl", tmp_path / "e.jsonl"
    write_jsonl(gold, GOLD)
    write_jsonl(pred, PRED)
    empty.write_text("")
    reports = evaluate_files_report(gold, pred, ["concept"], n_resamples=20)
    assert reports["concept"].scores == evaluate(GOLD, PRED, "concept")
    assert evaluate_files(gold, pred, "concept") == reports["concept"].scores
    with pytest.raises(ValueError, match=r"e\.jsonl holds no document"):
        evaluate_files_report(gold, empty)
    with pytest.raises(ValueError, match=r"gold .*e\.jsonl holds no document"):
        evaluate_files_report(empty, pred)


def test_read_corpus_refuses_folder_without_brat_files(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("not a corpus")
    with pytest.raises(ValueError, match="folder without BRAT"):
        read_corpus(tmp_path, "predictions")
    with pytest.raises(FileNotFoundError):
        read_corpus(tmp_path / "missing.jsonl")


def test_read_corpus_reads_a_brat_folder(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("aspirin")
    (tmp_path / "a.ann").write_text("T1\tChemical 0 7\taspirin\n")
    docs = read_corpus(tmp_path)
    assert [(d.id, len(d.entities)) for d in docs] == [("a", 1)]
