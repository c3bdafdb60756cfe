"""Evaluation stage: mention-level precision/recall/F1 and high-recall-matching recall."""

from __future__ import annotations

from xlnel.evaluation.hrm import HRM_LEVELS, HRMReport, hrm_recall
from xlnel.evaluation.metrics import (
    LEVELS,
    UNTYPED,
    Scores,
    evaluate,
    evaluate_by_type,
    evaluate_per_document,
)

__all__ = [
    "HRM_LEVELS",
    "LEVELS",
    "UNTYPED",
    "HRMReport",
    "Scores",
    "evaluate",
    "evaluate_by_type",
    "evaluate_per_document",
    "hrm_recall",
]
