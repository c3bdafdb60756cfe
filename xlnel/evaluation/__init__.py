"""Evaluation stage: precision/recall/F1 at the levels of :data:`LEVELS`, the classed errors
behind them, bootstrap intervals and HRM recall.

The reference system's sampled-classifier protocol runs whole pipelines, so it lives above the
stages, in :mod:`xlnel.analysis.protocol`."""

from __future__ import annotations

from xlnel.evaluation.bootstrap import (
    PairedComparison,
    ScoresWithCI,
    bootstrap_counts,
    bootstrap_scores,
    document_counts,
    paired_bootstrap,
    paired_bootstrap_counts,
)
from xlnel.evaluation.errors import ScoringError, scoring_errors, write_errors
from xlnel.evaluation.hrm import HRM_LEVELS, HRMReport, hrm_recall
from xlnel.evaluation.metrics import (
    LEVELS,
    UNTYPED,
    Scores,
    evaluate,
    evaluate_by_type,
    evaluate_per_document,
)
from xlnel.evaluation.report import LevelReport, evaluate_report, format_report

__all__ = [
    "HRM_LEVELS",
    "LEVELS",
    "UNTYPED",
    "HRMReport",
    "LevelReport",
    "PairedComparison",
    "Scores",
    "ScoresWithCI",
    "ScoringError",
    "bootstrap_counts",
    "bootstrap_scores",
    "document_counts",
    "evaluate",
    "evaluate_by_type",
    "evaluate_per_document",
    "evaluate_report",
    "format_report",
    "hrm_recall",
    "paired_bootstrap",
    "paired_bootstrap_counts",
    "scoring_errors",
    "write_errors",
]
