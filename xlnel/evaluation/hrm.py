"""Recall of high-recall matching: how many gold mentions the candidate generator proposed.

The candidate stage is meant to over-generate, so its quality is the share of gold mentions
for which it offered the right span (``span`` level) or the right span with the right concept
(``concept`` level), together with how many candidates it needed to do so.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xlnel.io._atomic import write_tsv
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


@dataclass(frozen=True)
class Unreached:
    """A gold mention the candidate generator did not reach at one level.

    Attributes:
        document: Document id.
        level: ``span`` or ``concept``.
        mention: The gold mention.
        reason: ``no_span`` (no candidate has its offsets) or ``other_concepts`` (candidates
            have its offsets, none with its concept).
        nearest: For ``no_span``, the best-scoring candidate among those whose spans overlap
            the mention most; for ``other_concepts``, the best-scoring candidate at its offsets;
            ``None`` when no candidate overlaps it.
    """

    document: str
    level: str
    mention: Link
    reason: str
    nearest: Candidate | None


def _nearest(link: Link, candidates: Sequence[Candidate]) -> Candidate | None:
    def overlap(c: Candidate) -> int:
        return min(link.end, c.span.end) - max(link.start, c.span.start)

    best = max(candidates, key=lambda c: (overlap(c), c.score), default=None)
    return best if best is not None and overlap(best) > 0 else None


def unreached(gold: Sequence[Document], candidates: Mapping[str, Sequence[Candidate]],
              level: str = "span") -> list[Unreached]:
    """The gold mentions :func:`hrm_recall` counts as not found, with the nearest candidate.

    Args:
        gold: Documents with gold mentions.
        candidates: Candidates of each document, keyed by document id.
        level: One of :data:`HRM_LEVELS`.

    Returns:
        One row a gold mention not found, in document and mention order; their number is
        ``total - found`` of :func:`hrm_recall`.
    """
    if level not in HRM_LEVELS:
        raise ValueError(f"unknown HRM level {level!r}; allowed: {', '.join(HRM_LEVELS)}")
    rows = []
    for doc in gold:
        doc_candidates = candidates.get(doc.id, ())
        proposed = _proposed(doc_candidates)
        for link in doc.entities:
            if (level == "concept" and not link.concept_ids) or _is_found(link, proposed, level):
                continue
            at_span = [c for c in doc_candidates
                       if (c.span.start, c.span.end) == (link.start, link.end)]
            if at_span:
                best = max(at_span, key=lambda c: c.score)
                rows.append(Unreached(doc.id, level, link, "other_concepts", best))
            else:
                rows.append(Unreached(doc.id, level, link, "no_span",
                                      _nearest(link, doc_candidates)))
    return rows


_HEADER = ("document", "level", "reason", "start", "end", "text", "concept_id", "nearest_start",
           "nearest_end", "nearest_text", "nearest_concept_id", "nearest_name", "nearest_score")


def _row(row: Unreached) -> list[object]:
    link, near = row.mention, row.nearest
    nearest: list[object] = ([""] * 6 if near is None else
                             [near.span.start, near.span.end, near.span.text, near.concept_id,
                              near.name, f"{near.score:.4f}"])
    return [row.document, row.level, row.reason, link.start, link.end, link.text,
            "|".join(link.concept_ids), *nearest]


def write_unreached(path: str | Path, rows: Iterable[Unreached]) -> int:
    """Write :func:`unreached` rows as a TSV table (header first), atomically; returns the
    number of rows."""
    return write_tsv(path, _HEADER, map(_row, rows))
