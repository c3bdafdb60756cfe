"""The false negatives and false positives behind a score, each with what went wrong
(``xlnel evaluate GOLD PRED --errors FILE.tsv``).

At the mention levels a mention left unmatched is classed by the closest mention on the other
side (gold for a prediction, predictions for a gold mention):

``wrong_concept``
    One has exactly its offsets but links another concept (the ``concept`` levels).
``wrong_type``
    One has exactly its offsets but another entity type (the ``+type`` levels).
``duplicate``
    One has exactly its offsets (at the ``overlap`` level: overlaps it) but was matched to
    another mention: the same mention given twice on one side.
``boundary``
    None has its offsets, but one overlaps it: the largest overlap is reported.
``missed`` / ``spurious``
    Nothing on the other side overlaps it (a gold mention missed, a prediction of nothing).

At the ``document`` level each concept id of a document's gold and not of its predictions is a
``missed`` false negative, each the other way round a ``spurious`` false positive, shown with
the first mention that carries it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from xlnel.evaluation.matching import MENTION_MATCHERS
from xlnel.evaluation.metrics import pair_documents
from xlnel.evaluation.report import resolve_levels
from xlnel.io._atomic import write_tsv
from xlnel.types import Document, Link

__all__ = ["CATEGORIES", "ScoringError", "scoring_errors", "write_errors"]

CATEGORIES = ("wrong_concept", "wrong_type", "duplicate", "boundary", "missed", "spurious")
"""Classes of an unmatched mention (see the module docstring)."""

_HEADER = ("document", "level", "kind", "category", "start", "end", "text", "type",
           "concept_id", "other_start", "other_end", "other_text", "other_concept_id")


@dataclass(frozen=True)
class ScoringError:
    """One false negative (``kind="fn"``, a gold mention) or false positive (``"fp"``).

    Attributes:
        document: Document id.
        level: Evaluation level.
        kind: ``fn`` or ``fp``.
        category: One of :data:`CATEGORIES`.
        mention: The gold mention or prediction.
        other: The closest mention on the other side, if any.
        concept_id: At the ``document`` level, the concept id missed or predicted.
    """

    document: str
    level: str
    kind: str
    category: str
    mention: Link
    other: Link | None = None
    concept_id: str | None = None


def _overlap(a: Link, b: Link) -> int:
    return min(a.end, b.end) - max(a.start, b.start)


def _category(link: Link, others: Sequence[Link], level: str,
              is_gold: bool) -> tuple[str, Link | None]:
    """Why ``link`` found no counterpart among ``others`` (the other side's mentions)."""
    same = [o for o in others if (o.start, o.end) == (link.start, link.end)]
    if same and level != "overlap":
        if level.endswith("+type"):
            if all(o.type != link.type for o in same):
                return "wrong_type", same[0]
            # Only a mention of its own type could have matched it, so only those say whether
            # the concept was wrong or the mention was taken by another.
            same = [o for o in same if o.type == link.type]
        if level.startswith("concept") and all(
                (o.concept_id not in link.concept_ids) if is_gold
                else (link.concept_id not in o.concept_ids) for o in same):
            return "wrong_concept", same[0]
        return "duplicate", same[0]
    near = max(others, key=lambda o: _overlap(link, o), default=None)
    if near is None or _overlap(link, near) <= 0:
        return ("missed" if is_gold else "spurious"), None
    return ("duplicate" if level == "overlap" else "boundary"), near


def _mention_errors(doc_id: str, gold: Sequence[Link], pred: Sequence[Link],
                    level: str) -> Iterator[ScoringError]:
    match = MENTION_MATCHERS[level](gold, pred)
    matched_gold = {j for j, _ in match.pairs} | match.ignored_gold
    matched_pred = {i for _, i in match.pairs} | match.ignored_pred
    for j, link in enumerate(gold):
        if j not in matched_gold:
            category, other = _category(link, pred, level, True)
            yield ScoringError(doc_id, level, "fn", category, link, other)
    for i, link in enumerate(pred):
        if i not in matched_pred:
            category, other = _category(link, gold, level, False)
            yield ScoringError(doc_id, level, "fp", category, link, other)


def _document_errors(doc_id: str, gold: Sequence[Link],
                     pred: Sequence[Link]) -> Iterator[ScoringError]:
    def first_mentions(links: Sequence[Link]) -> dict[str, Link]:
        out: dict[str, Link] = {}
        for link in links:
            for concept_id in link.concept_ids:
                out.setdefault(concept_id, link)
        return out

    gold_ids, pred_ids = first_mentions(gold), first_mentions(pred)
    for concept_id, link in gold_ids.items():
        if concept_id not in pred_ids:
            yield ScoringError(doc_id, "document", "fn", "missed", link, None, concept_id)
    for concept_id, link in pred_ids.items():
        if concept_id not in gold_ids:
            yield ScoringError(doc_id, "document", "fp", "spurious", link, None, concept_id)


def scoring_errors(gold: Sequence[Document], pred: Sequence[Document],
                   levels: Iterable[str] = ("span",)) -> list[ScoringError]:
    """Every false negative and false positive of ``pred`` at each level, classed.

    Their numbers per level are the ``fn`` and ``fp`` of :func:`~xlnel.evaluation.evaluate`.

    Args:
        gold: Documents with gold mentions.
        pred: Documents with predicted mentions (documents are paired by id).
        levels: Names from :data:`~xlnel.evaluation.LEVELS`, or ``["all"]``.

    Returns:
        The errors, level by level, document by document in gold order, false negatives first.

    Raises:
        ValueError: For an unknown level, or documents :func:`~xlnel.evaluation.evaluate`
            refuses.
    """
    chosen = resolve_levels(list(levels))
    pairs = pair_documents(gold, pred)
    errors: list[ScoringError] = []
    for level in chosen:
        for gold_doc, pred_doc in pairs:
            predicted = () if pred_doc is None else pred_doc.entities
            errors.extend(_document_errors(gold_doc.id, gold_doc.entities, predicted)
                          if level == "document"
                          else _mention_errors(gold_doc.id, gold_doc.entities, predicted,
                                               level))
    return errors


def _row(error: ScoringError) -> list[object]:
    link, other = error.mention, error.other
    other_fields: list[object] = (["", "", "", ""] if other is None else
                                  [other.start, other.end, other.text,
                                   "|".join(other.concept_ids)])
    return [error.document, error.level, error.kind, error.category, link.start, link.end,
            link.text, link.type or "", error.concept_id or "|".join(link.concept_ids),
            *other_fields]


def write_errors(path: str | Path, errors: Iterable[ScoringError]) -> int:
    """Write errors as a TSV table (header first; tabs and line breaks of texts as spaces),
    atomically; returns the number of rows."""
    return write_tsv(path, _HEADER, map(_row, errors))
