"""Precision, recall and F1 of predictions against gold annotations.

Seven levels are offered (:data:`LEVELS`); ``docs/evaluation.md`` works an example of each.

``span``
    A prediction is correct when a gold mention has exactly its offsets; concepts are ignored.
``span-prefix``
    As ``span``, but a start that differs by one attached Hebrew one-letter prefix (a letter of
    :data:`~xlnel.candidates.spans.HEBREW_PREFIX_LETTERS`, on either side) is accepted when the
    ends are equal: gold ``סוכרת`` matches predicted ``בסוכרת`` and the other way round. It is
    reported beside ``span``, never instead of it.
``concept``
    A prediction is correct when a gold mention has exactly its offsets and lists the predicted
    concept (``pred.concept_id in gold.concept_ids``, so a composite gold ``A|B`` accepts ``A``
    or ``B``). Gold mentions without a concept id are left out of scoring, and so are predictions
    at exactly their offsets.
``overlap``
    A prediction is correct when it shares at least one character with a gold mention;
    concepts are ignored.
``span+type``, ``concept+type``
    As ``span`` and ``concept``, and the prediction's entity type must be the gold mention's
    (``None`` matches only ``None``): the strict typed measure of NER, for links typed as their
    corpus (``linker.entity_types``).
``document``
    The BioCreative V CDR measure: per document, the set of concept ids of the gold mentions
    (composite ids split, mentions without an id left out) against the set of concept ids of
    the predictions; offsets are ignored and an id counts once per document however often it
    is mentioned. Counts are summed over documents.

At the mention levels matching is one-to-one: a gold mention is matched by at most one
prediction, so duplicate predictions of one mention give one true positive and false positives
for the rest.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from xlnel.evaluation.matching import MENTION_MATCHERS, Matcher
from xlnel.io._atomic import ONE_LINE
from xlnel.types import Document, Link

logger = logging.getLogger(__name__)

LEVELS: tuple[str, ...] = ("span", "span-prefix", "concept", "overlap", "span+type",
                           "concept+type", "document")
"""Levels accepted by :func:`evaluate`."""

UNTYPED = "UNTYPED"
"""Key of :func:`evaluate_by_type` for mentions whose type is ``None``."""


def _ratio(numerator: int, denominator: int) -> float:
    """``numerator / denominator``, or 0.0 when the denominator is 0."""
    return numerator / denominator if denominator else 0.0


@dataclass(frozen=True)
class Scores:
    """Counts of true positives, false positives and false negatives with the derived scores.

    Undefined ratios are 0.0, as with scikit-learn's ``zero_division=0`` and seqeval: precision
    is 0.0 when there are no predictions, recall is 0.0 when there is no gold, and F1 is 0.0
    when precision + recall is 0. In particular, empty gold with empty predictions scores
    0.0 / 0.0 / 0.0 (check ``tp + fp + fn == 0`` to tell that case apart).

    Attributes:
        precision: ``tp / (tp + fp)``.
        recall: ``tp / (tp + fn)``.
        f1: Harmonic mean of precision and recall.
        tp: Predictions matched to a gold mention.
        fp: Scored predictions matched to no gold mention.
        fn: Scored gold mentions matched by no prediction.
    """

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int

    @classmethod
    def from_counts(cls, tp: int, fp: int, fn: int) -> Scores:
        """Build scores from counts.

        Args:
            tp: True positives.
            fp: False positives.
            fn: False negatives.

        Returns:
            The scores, with 0.0 wherever a ratio is undefined.

        Raises:
            ValueError: If a count is negative.
        """
        for name, value in (("tp", tp), ("fp", fp), ("fn", fn)):
            if value < 0:
                raise ValueError(f"{name} must be a non-negative count, got {value}")
        precision = _ratio(tp, tp + fp)
        recall = _ratio(tp, tp + fn)
        denominator = precision + recall
        f1 = 2 * precision * recall / denominator if denominator else 0.0
        return cls(precision=precision, recall=recall, f1=f1, tp=tp, fp=fp, fn=fn)

    def to_dict(self) -> dict[str, float | int]:
        """The six fields as a plain dict (for JSON reports)."""
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
        }


def _type_key(link: Link) -> str:
    return UNTYPED if link.type is None else link.type


@dataclass
class _DocumentCounts:
    """``[tp, fp, fn]`` of one document, in all and per type."""

    total: tuple[int, int, int]
    by_type: dict[str, list[int]] = field(default_factory=dict)


_Counter = Callable[[Sequence[Link], Sequence[Link]], _DocumentCounts]


def _mention_counter(matcher: Matcher) -> _Counter:
    """Counts of a mention level: tp and fn under the gold type, fp under the prediction's."""

    def count(gold: Sequence[Link], pred: Sequence[Link]) -> _DocumentCounts:
        match = matcher(gold, pred)
        by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        matched_gold = {j for j, _ in match.pairs}
        matched_pred = {i for _, i in match.pairs}
        for j, link in enumerate(gold):
            if j not in match.ignored_gold:
                by_type[_type_key(link)][0 if j in matched_gold else 2] += 1
        for i, link in enumerate(pred):
            if i not in matched_pred and i not in match.ignored_pred:
                by_type[_type_key(link)][1] += 1
        tp, fp, fn = (sum(c[k] for c in by_type.values()) for k in range(3))
        return _DocumentCounts((tp, fp, fn), dict(by_type))

    return count


def _set_counts(gold: set[str], pred: set[str]) -> tuple[int, int, int]:
    return len(gold & pred), len(pred - gold), len(gold - pred)


def _count_document_level(gold: Sequence[Link], pred: Sequence[Link]) -> _DocumentCounts:
    """Concept-id sets of one document; per type, ids of gold and predictions of that type.

    A predicted id without a type takes the types of the gold mentions with that id, or
    :data:`UNTYPED` when no gold mention has it.
    """
    gold_types: dict[str, set[str]] = defaultdict(set)
    for link in gold:
        for concept_id in link.concept_ids:
            gold_types[concept_id].add(_type_key(link))
    pred_types: dict[str, set[str]] = defaultdict(set)
    for link in pred:
        for concept_id in link.concept_ids:
            if link.type is not None:
                pred_types[concept_id].add(link.type)
            else:
                pred_types[concept_id] |= gold_types.get(concept_id, {UNTYPED})
    by_type: dict[str, list[int]] = {}
    for name in set().union(*gold_types.values(), *pred_types.values()):
        gold_ids = {c for c, types in gold_types.items() if name in types}
        pred_ids = {c for c, types in pred_types.items() if name in types}
        by_type[name] = list(_set_counts(gold_ids, pred_ids))
    return _DocumentCounts(_set_counts(set(gold_types), set(pred_types)), by_type)


_COUNTERS: dict[str, _Counter] = {
    **{level: _mention_counter(matcher) for level, matcher in MENTION_MATCHERS.items()},
    "document": _count_document_level,
}


def _check_level(level: str) -> _Counter:
    try:
        return _COUNTERS[level]
    except KeyError:
        raise ValueError(
            f"unknown evaluation level {level!r}; allowed: {', '.join(LEVELS)}"
        ) from None


def text_difference(gold: str, pred: str) -> str:
    """Where two texts first differ, with a few characters of each from there (for messages).

    A tab or line break against a space is no difference (:func:`same_text`).

    Returns:
        Such as ``at character 17 (of 17 gold, 18 predicted): gold '', predicted ' '``.
    """
    flat = zip(gold.translate(ONE_LINE), pred.translate(ONE_LINE), strict=False)
    at = next((i for i, (a, b) in enumerate(flat) if a != b), min(len(gold), len(pred)))
    return (f"at character {at} (of {len(gold)} gold, {len(pred)} predicted): gold "
            f"{gold[at:at + 20]!r}, predicted {pred[at:at + 20]!r}")


def _index_by_id(documents: Sequence[Document], role: str) -> dict[str, Document]:
    index: dict[str, Document] = {}
    for doc in documents:
        if doc.id in index:
            raise ValueError(f"duplicate {role} document id {doc.id!r}")
        index[doc.id] = doc
    return index


def same_text(gold: str, pred: str) -> bool:
    """Whether predictions made on ``pred`` can be scored against ``gold``: the texts are equal
    once tabs and line breaks are read as spaces, as one-line formats (PubTator) write them;
    such a change keeps every offset."""
    return gold == pred or gold.translate(ONE_LINE) == pred.translate(ONE_LINE)


def _on_gold_text(gold: Document, pred: Document) -> Document:
    """``pred`` with the gold text, and its mentions' texts taken from it."""
    if pred.text == gold.text:
        return pred
    entities = tuple(replace(link, text=gold.text[link.start:link.end])
                     for link in pred.entities)
    return replace(pred, text=gold.text, entities=entities)


def pair_documents(
    gold: Sequence[Document], pred: Sequence[Document]
) -> list[tuple[Document, Document | None]]:
    """Pair each gold document with the predicted document of the same id, if any.

    A predicted text that differs from the gold text only by spaces for tabs and line breaks
    (:func:`same_text`) is replaced by the gold text.

    Raises:
        ValueError: If ids repeat, a predicted id is not in gold, or the texts differ.
    """
    gold_by_id = _index_by_id(gold, "gold")
    pred_by_id = _index_by_id(pred, "predicted")
    for doc_id, doc in pred_by_id.items():
        if doc_id not in gold_by_id:
            raise ValueError(f"predicted document {doc_id!r} is not in the gold documents")
        if not same_text(gold_by_id[doc_id].text, doc.text):
            raise ValueError(
                f"document {doc_id!r}: predicted text differs from the gold text "
                f"{text_difference(gold_by_id[doc_id].text, doc.text)}; predictions must be "
                "made on the gold text"
            )
        pred_by_id[doc_id] = _on_gold_text(gold_by_id[doc_id], doc)
    missing = [doc_id for doc_id in gold_by_id if doc_id not in pred_by_id]
    if missing:
        logger.info(
            "%d gold documents have no predictions; their mentions count as fn", len(missing)
        )
    return [(doc, pred_by_id.get(doc.id)) for doc in gold]


def _document_counts(
    gold: Sequence[Document], pred: Sequence[Document], level: str
) -> Iterator[tuple[str, _DocumentCounts]]:
    """Each gold document's id with its counts at ``level`` (the level is checked first)."""
    counter = _check_level(level)
    return (
        (gold_doc.id, counter(gold_doc.entities, () if pred_doc is None else pred_doc.entities))
        for gold_doc, pred_doc in pair_documents(gold, pred)
    )


def evaluate(gold: Sequence[Document], pred: Sequence[Document], level: str = "span") -> Scores:
    """Micro-averaged precision, recall and F1 of predictions over a corpus.

    Documents are matched by id. A gold document without a predicted document contributes its
    gold mentions (at the ``document`` level: its gold concept ids) as false negatives.

    Args:
        gold: Documents with gold mentions.
        pred: Documents with predicted mentions, a subset of the gold ids.
        level: One of :data:`LEVELS` (see the module docstring).

    Returns:
        Scores summed over all documents.

    Raises:
        ValueError: For an unknown level, a repeated document id, a predicted document id that
            is not in gold, or a predicted document whose text differs from the gold text
            (other than by spaces for tabs and line breaks, see :func:`same_text`).
    """
    tp = fp = fn = 0
    for _, counts in _document_counts(gold, pred, level):
        d_tp, d_fp, d_fn = counts.total
        tp, fp, fn = tp + d_tp, fp + d_fp, fn + d_fn
    return Scores.from_counts(tp, fp, fn)


def evaluate_per_document(
    gold: Sequence[Document], pred: Sequence[Document], level: str = "span"
) -> dict[str, Scores]:
    """Scores of each gold document, keyed by document id (error analysis, bootstrap).

    Args:
        gold: Documents with gold mentions.
        pred: Documents with predicted mentions.
        level: One of :data:`LEVELS`.

    Returns:
        One :class:`Scores` per gold document, in gold order; their counts add up to those of
        :func:`evaluate`.

    Raises:
        ValueError: As :func:`evaluate`.
    """
    return {
        doc_id: Scores.from_counts(*counts.total)
        for doc_id, counts in _document_counts(gold, pred, level)
    }


def evaluate_by_type(
    gold: Sequence[Document], pred: Sequence[Document], level: str = "span"
) -> dict[str, Scores]:
    """Scores broken down by entity type.

    At the mention levels matching ignores types, as in :func:`evaluate`: a true positive and a
    false negative are counted under the gold mention's type, a false positive under the
    prediction's type, and the counts add up to those of :func:`evaluate`.

    At the ``document`` level each type is scored on its own, as BioCreative scores chemicals
    and diseases: the gold ids of a type are those of gold mentions of that type, the predicted
    ids those of predictions of that type (an untyped prediction takes the types of the gold
    mentions with its id in the document, else :data:`UNTYPED`). An id predicted under the wrong
    type is then a false positive of one type and a false negative of the other, so the counts
    add up to those of :func:`evaluate` only when every id has one type in gold and predictions.

    A missing type (``None``) is counted under :data:`UNTYPED`.

    Args:
        gold: Documents with gold mentions.
        pred: Documents with predicted mentions.
        level: One of :data:`LEVELS`.

    Returns:
        Scores per type, sorted by type name.

    Raises:
        ValueError: As :func:`evaluate`.
    """
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for _, counts in _document_counts(gold, pred, level):
        for name, (tp, fp, fn) in counts.by_type.items():
            total = totals[name]
            total[0], total[1], total[2] = total[0] + tp, total[1] + fp, total[2] + fn
    return {name: Scores.from_counts(*totals[name]) for name in sorted(totals)}
