"""Evaluation of files: gold and predicted documents read from disk."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from xlnel.evaluation.errors import scoring_errors, write_errors
from xlnel.evaluation.metrics import Scores, evaluate
from xlnel.evaluation.report import LevelReport, evaluate_report
from xlnel.io.documents import read_annotated_documents
from xlnel.io.kb_history import kb_id_history, resolve_documents
from xlnel.types import Document

__all__ = ["evaluate_files", "evaluate_files_report", "read_corpus"]

logger = logging.getLogger(__name__)


def read_corpus(path: str | Path, role: str = "corpus",
                format: str | None = None) -> list[Document]:
    """Read documents for evaluation, refusing input that holds no annotations.

    Args:
        path: JSONL, PubTator or BioC file (optionally ``.gz``), a BRAT folder, or ``-`` for
            the standard input.
        role: What the corpus is (``gold``, ``predictions``), for messages.
        format: One of :data:`xlnel.io.FORMATS`; ``None`` tells it from the name (``-`` is
            JSONL).

    Returns:
        The documents.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        ValueError: For a folder without ``.ann`` files, a plain-text file, or a format that
            cannot be told.
        FormatError: When the file does not follow its format.
    """
    return read_annotated_documents(path, role, format)


def evaluate_files(gold: str | Path, pred: str | Path, level: str = "span") -> Scores:
    """Precision, recall and F1 of the predictions in ``pred`` against ``gold``.

    Both files may be JSONL, PubTator or BioC (by extension); documents are matched by id.
    """
    return evaluate(read_corpus(gold, "gold"), read_corpus(pred, "predictions"), level)


def evaluate_files_report(
    gold: str | Path,
    pred: str | Path,
    levels: Sequence[str] = ("span",),
    *,
    by_type: bool = False,
    n_resamples: int | None = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    compare: str | Path | None = None,
    kb: str | Path | None = None,
    errors: str | Path | None = None,
    pred_format: str | None = None,
) -> dict[str, LevelReport]:
    """:func:`~xlnel.evaluation.report.evaluate_report` of files (``xlnel evaluate``).

    Args:
        gold: Gold corpus file or BRAT folder.
        pred: Predicted corpus (system A when ``compare`` is given).
        levels: Names from :data:`~xlnel.evaluation.LEVELS`, or ``["all"]``.
        by_type: Add the per-type breakdown.
        n_resamples: Bootstrap resamples; ``None`` or 0 skips the intervals.
        seed: Seed of the bootstrap.
        confidence: Coverage of the intervals.
        compare: Predictions of a system B, compared with ``pred`` by paired bootstrap.
        kb: Knowledge-base spec whose retired ids (:func:`xlnel.io.kb_history.kb_id_history`)
            are replaced by current ones in every file's concept ids before scoring, so a gold
            written against an older release of the ontology is not held against a system.
        errors: A TSV file to write every false negative and false positive of ``pred`` into,
            at each level, classed (:mod:`xlnel.evaluation.errors`).
        pred_format: The format of ``pred`` and ``compare`` (one of
            :data:`xlnel.io.FORMATS`); ``None`` tells it from their names (``-``, the standard
            input, is JSONL).

    Returns:
        One report per level.

    Raises:
        FileNotFoundError: When a file does not exist.
        ValueError: For a predictions file with no document or no gold document id, an empty
            BRAT folder, an unknown level, or an error of :func:`~xlnel.evaluation.evaluate`.
        FormatError: When a file does not follow its format.
    """
    gold_docs = read_corpus(gold, "gold")
    if not gold_docs:
        raise ValueError(f"gold {gold} holds no document: nothing to evaluate against")
    pred_docs = read_corpus(pred, "predictions", pred_format)
    compared = (None if compare is None
                else read_corpus(compare, "compared predictions", pred_format))
    if kb is not None:
        history = kb_id_history(kb)
        gold_docs, changed = resolve_documents(gold_docs, history)
        logger.info("%d retired concept ids of the gold mapped to current ones", changed)
        pred_docs = resolve_documents(pred_docs, history)[0]
        compared = None if compared is None else resolve_documents(compared, history)[0]
    reports = evaluate_report(
        gold_docs,
        pred_docs,
        levels,
        by_type=by_type,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        compare=compared,
        pred_name=str(pred),
        compare_name=str(compare),
        gold_name=str(gold),
    )
    if errors is not None:  # after the checks of evaluate_report: no table for refused input
        write_errors(errors, scoring_errors(gold_docs, pred_docs, levels))
    return reports
