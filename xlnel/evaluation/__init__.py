"""Evaluation stage: mention-level precision/recall/F1, high-recall-matching recall, and the
reference system's sampled-classifier protocol (for comparison with its published figures)."""

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
from xlnel.evaluation.protocol import ProtocolScores, galperin2022, galperin2022_pipeline

__all__ = [
    "HRM_LEVELS",
    "LEVELS",
    "UNTYPED",
    "HRMReport",
    "ProtocolScores",
    "Scores",
    "evaluate",
    "evaluate_by_type",
    "evaluate_per_document",
    "galperin2022",
    "galperin2022_pipeline",
    "hrm_recall",
]
