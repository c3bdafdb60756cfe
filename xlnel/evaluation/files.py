"""Evaluation of files: gold and predicted documents read from disk."""

from __future__ import annotations

from pathlib import Path

from xlnel.evaluation.metrics import Scores, evaluate
from xlnel.io import read_documents


def evaluate_files(gold: str | Path, pred: str | Path, level: str = "span") -> Scores:
    """Precision, recall and F1 of the predictions in ``pred`` against ``gold``.

    Both files may be JSONL or PubTator (by extension); documents are matched by id.
    """
    return evaluate(read_documents(gold), read_documents(pred), level)
