"""Recall of high-recall matching: how many gold mentions the candidate generator proposed.

The candidate stage is meant to over-generate, so its quality is the share of gold mentions
for which it offered the right span (``span`` level) or the right span with the right concept
(``concept`` level), together with how many candidates it needed to do so.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xlnel.types import Candidate, Document, Link

logger = logging.getLogger(__name__)

HRM_LEVELS: tuple[str, ...] = ("span", "concept")
"""Levels accepted by :func:`hrm_recall`."""


@dataclass(frozen=True)
class HRMReport:
    """Recall of a candidate generator against gold mentions.

    Attributes:
        level: ``span`` or ``concept``.
        recall: ``found / total``; 0.0 when ``total`` is 0.
        found: Gold mentions for which a suitable candidate was proposed.
        total: Gold mentions scored (at ``concept`` level, those with a concept id).
        spans: Distinct candidate spans (offsets) with at least one candidate, over all documents.
        candidates: Total number of candidates.
        candidates_per_span: ``candidates / spans``; 0.0 when ``spans`` is 0.
    """

    level: str
    recall: float
    found: int
    total: int
    spans: int
    candidates: int
    candidates_per_span: float

    def to_dict(self) -> dict[str, str | float | int]:
        """The seven fields as a plain dict (for JSON reports)."""
        return {
            "level": self.level,
            "recall": self.recall,
            "found": self.found,
            "total": self.total,
            "spans": self.spans,
            "candidates": self.candidates,
            "candidates_per_span": self.candidates_per_span,
        }


def _is_found(link: Link, proposed: Mapping[tuple[int, int], set[str]], level: str) -> bool:
    concepts = proposed.get((link.start, link.end))
    if concepts is None:
        return False
    if level == "span":
        return True
    return any(concept_id in concepts for concept_id in link.concept_ids)


def _proposed(candidates: Sequence[Candidate]) -> dict[tuple[int, int], set[str]]:
    """Concept ids proposed at each candidate span's offsets."""
    proposed: dict[tuple[int, int], set[str]] = {}
    for candidate in candidates:
        key = (candidate.span.start, candidate.span.end)
        proposed.setdefault(key, set()).add(candidate.concept_id)
    return proposed


def hrm_recall(
    gold: Sequence[Document],
    candidates: Mapping[str, Sequence[Candidate]],
    level: str = "span",
) -> HRMReport:
    """Share of gold mentions for which the candidate generator proposed a suitable candidate.

    At ``span`` level a gold mention is found when some candidate span has exactly its offsets;
    at ``concept`` level the candidate must also propose one of the mention's concept ids, and
    gold mentions without a concept id are left out of the total.

    Args:
        gold: Documents with gold mentions.
        candidates: Candidates of each document, keyed by document id. Documents missing from
            the mapping count as having no candidates.
        level: One of :data:`HRM_LEVELS`.

    Returns:
        The recall with its counts and the candidate volume.

    Raises:
        ValueError: For an unknown level, a repeated gold document id, or a candidate document
            id that is not in the gold documents.
    """
    if level not in HRM_LEVELS:
        raise ValueError(f"unknown HRM level {level!r}; allowed: {', '.join(HRM_LEVELS)}")
    gold_ids: set[str] = set()
    for doc in gold:
        if doc.id in gold_ids:
            raise ValueError(f"duplicate gold document id {doc.id!r}")
        gold_ids.add(doc.id)
    unknown = sorted(set(candidates) - gold_ids)
    if unknown:
        raise ValueError(f"candidates given for document {unknown[0]!r}, which is not in gold")

    found = total = spans = n_candidates = 0
    for doc in gold:
        doc_candidates = candidates.get(doc.id, ())
        proposed = _proposed(doc_candidates)
        spans += len(proposed)
        n_candidates += len(doc_candidates)
        for link in doc.entities:
            if level == "concept" and not link.concept_ids:
                continue
            total += 1
            found += _is_found(link, proposed, level)
    logger.debug("HRM %s recall: %d of %d gold mentions found", level, found, total)
    return HRMReport(
        level=level,
        recall=found / total if total else 0.0,
        found=found,
        total=total,
        spans=spans,
        candidates=n_candidates,
        candidates_per_span=n_candidates / spans if spans else 0.0,
    )
