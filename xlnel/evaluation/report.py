"""Evaluation reports: every requested level with intervals, types and a paired comparison."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xlnel.evaluation.bootstrap import (
    PairedComparison,
    ScoresWithCI,
    bootstrap_counts,
    document_counts,
    paired_bootstrap_counts,
)
from xlnel.evaluation.metrics import (
    LEVELS,
    Scores,
    evaluate_by_type,
    same_text,
    text_difference,
)
from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["LevelReport", "check_predictions", "evaluate_report", "format_report", "resolve_levels"]


@dataclass(frozen=True)
class LevelReport:
    """Everything measured at one level.

    Attributes:
        level: One of :data:`~xlnel.evaluation.LEVELS`.
        scores: Micro-averaged scores of the predictions.
        ci: Bootstrap intervals, or ``None`` when not asked for.
        by_type: Scores per entity type, or ``None`` when not asked for.
        comparison: Paired bootstrap of the second predictions (B) against the first (A), or
            ``None`` when there are no second predictions.
    """

    level: str
    scores: Scores
    ci: ScoresWithCI | None = None
    by_type: dict[str, Scores] | None = None
    comparison: PairedComparison | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready data (absent parts are ``None``)."""
        return {
            "scores": self.scores.to_dict(),
            "ci": None if self.ci is None else self.ci.to_dict(),
            "by_type": None
            if self.by_type is None
            else {name: s.to_dict() for name, s in self.by_type.items()},
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
        }


def resolve_levels(levels: Sequence[str]) -> tuple[str, ...]:
    """Check level names; ``all`` stands for every level of :data:`LEVELS`.

    Raises:
        ValueError: For an unknown name, or no name at all.
    """
    if not levels:
        raise ValueError(f"give at least one level: {', '.join(LEVELS)} or all")
    if "all" in levels:
        return LEVELS
    for level in levels:
        if level not in LEVELS:
            raise ValueError(
                f"unknown evaluation level {level!r}; allowed: {', '.join(LEVELS)}, all"
            )
    return tuple(dict.fromkeys(levels))


def check_predictions(
    gold: Sequence[Document], pred: Sequence[Document], name: str = "predictions",
    gold_name: str = "the gold",
) -> None:
    """Refuse predictions that would silently score zero; warn about partial coverage.

    Args:
        gold: Gold documents.
        pred: Predicted documents.
        name: What to call the predictions in messages (their file name).
        gold_name: What to call the gold documents in messages (their file name).

    Raises:
        ValueError: When ``gold`` or ``pred`` holds no document, no predicted document id is
            a gold document id, or a predicted document's text differs from its gold text
            (naming both, and where the texts first differ).
    """
    if not gold:
        raise ValueError("the gold documents are empty: nothing to evaluate against")
    if not pred:
        raise ValueError(f"{name} holds no document: nothing to evaluate")
    gold_ids = {doc.id for doc in gold}
    covered = gold_ids & {doc.id for doc in pred}
    if not covered:
        example = next(iter(pred)).id
        raise ValueError(
            f"none of the {len(pred)} document ids of {name} is a gold document id "
            f"(first: {example!r}); were the predictions made on these gold documents?"
        )
    _check_texts(gold, pred, name, gold_name)
    missing = len(gold_ids) - len(covered)
    if missing:
        logger.warning(
            "%d of %d gold documents have no predictions in %s; their gold mentions count as "
            "misses",
            missing,
            len(gold_ids),
            name,
        )


def _check_texts(gold: Sequence[Document], pred: Sequence[Document], name: str,
                 gold_name: str) -> None:
    gold_texts: dict[str, str] = {}
    for doc in gold:
        gold_texts.setdefault(doc.id, doc.text)  # a repeated id is refused when scoring
    for doc in pred:
        text = gold_texts.get(doc.id)
        if text is not None and not same_text(text, doc.text):
            raise ValueError(
                f"document {doc.id!r}: its text in {name} differs from its text in {gold_name} "
                f"{text_difference(text, doc.text)}; predictions must be made on the gold text"
            )


def evaluate_report(
    gold: Sequence[Document],
    pred: Sequence[Document],
    levels: Sequence[str] = ("span",),
    *,
    by_type: bool = False,
    n_resamples: int | None = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    compare: Sequence[Document] | None = None,
    pred_name: str = "predictions",
    compare_name: str = "compared predictions",
    gold_name: str = "the gold",
) -> dict[str, LevelReport]:
    """Evaluate predictions at several levels, with intervals, types and a paired test.

    Args:
        gold: Gold documents.
        pred: Predicted documents (system A when ``compare`` is given).
        levels: Names from :data:`LEVELS`, or ``["all"]``.
        by_type: Add the per-type breakdown.
        n_resamples: Bootstrap resamples of the documents; ``None`` or 0 skips the intervals
            (the paired comparison still needs them and uses 1000 then).
        seed: Seed of the bootstrap.
        confidence: Coverage of the intervals.
        compare: Predictions of a system B to compare with ``pred`` by paired bootstrap.
        pred_name: Name of ``pred`` in messages (its file).
        compare_name: Name of ``compare`` in messages.
        gold_name: Name of ``gold`` in messages (its file).

    Returns:
        One :class:`LevelReport` per level, in the order asked.

    Raises:
        ValueError: For an unknown level, empty or non-overlapping predictions (see
            :func:`check_predictions`), or any error of :func:`xlnel.evaluation.evaluate`.
    """
    names = resolve_levels(levels)
    check_predictions(gold, pred, pred_name, gold_name)
    if compare is not None:
        check_predictions(gold, compare, compare_name, gold_name)
    if not any(doc.entities for doc in gold):
        logger.warning(
            "none of the %d gold documents has a mention: recall is undefined and every "
            "predicted link counts as a false positive (JSONL gold lists its mentions under "
            "\"entities\")",
            len(gold),
        )
    reports: dict[str, LevelReport] = {}
    for level in names:
        counts = document_counts(gold, pred, level)
        total = Scores.from_counts(*(int(v) for v in counts.sum(axis=0)))
        ci = None
        if n_resamples:
            ci = bootstrap_counts(counts, n_resamples, seed, confidence)
        comparison = None
        if compare is not None:
            counts_b = document_counts(gold, compare, level)
            comparison = paired_bootstrap_counts(
                counts, counts_b, n_resamples or 1000, seed, confidence
            )
        types = evaluate_by_type(gold, pred, level) if by_type else None
        reports[level] = LevelReport(level, total, ci, types, comparison)
    return reports


def _score_row(label: str, scores: Scores) -> str:
    return (
        f"{label:<16} {scores.precision:7.4f} {scores.recall:7.4f} {scores.f1:7.4f} "
        f"{scores.tp:7d} {scores.fp:7d} {scores.fn:7d}"
    )


def _ci_row(ci: ScoresWithCI) -> str:
    cells = (f"{low:.4f}-{high:.4f}" for low, high in (ci.precision_ci, ci.recall_ci, ci.f1_ci))
    return f"{f'  {ci.confidence:.0%} CI':<16} " + "  ".join(cells)


def _comparison_rows(comparison: PairedComparison) -> list[str]:
    low, high = comparison.delta_f1_ci
    return [
        _score_row("compared (B)", comparison.scores_b),
        f"delta F1 B - A {comparison.delta_f1:+.4f} ({comparison.confidence:.0%} CI "
        f"{low:+.4f} to {high:+.4f}), paired bootstrap p = {comparison.p_value:.4f}",
    ]


def format_report(reports: dict[str, LevelReport]) -> str:
    """A small text table per level: P / R / F1, counts, intervals, types, comparison."""
    blocks = []
    for level, report in reports.items():
        lines = [f"== {level} ==", f"{'':<16} {'P':>7} {'R':>7} {'F1':>7} {'tp':>7} {'fp':>7} "
                 f"{'fn':>7}", _score_row("all", report.scores)]
        if report.ci is not None:
            lines.append(_ci_row(report.ci))
        for name, scores in (report.by_type or {}).items():
            lines.append(_score_row(f"  {name}"[:16], scores))
        if report.comparison is not None:
            lines.extend(_comparison_rows(report.comparison))
        if report.ci is not None:
            n_docs = report.ci.n_documents
            lines.append(f"({report.ci.n_resamples} bootstrap resamples of {n_docs} "
                         f"document{'' if n_docs == 1 else 's'}, seed {report.ci.seed})")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
