"""Precision, recall and F1 of predicted mentions against gold annotations.

Three matching levels are offered (:data:`LEVELS`):

``span``
    A prediction is correct when a gold mention has exactly its offsets; concepts are ignored.
``concept``
    A prediction is correct when a gold mention has exactly its offsets and lists the predicted
    concept (``pred.concept_id in gold.concept_ids``, so a composite gold ``A|B`` accepts ``A``
    or ``B``). Gold mentions without a concept id are left out of scoring, and so are predictions
    at exactly their offsets.
``overlap``
    A prediction is correct when it shares at least one character with a gold mention;
    concepts are ignored.

At every level matching is one-to-one: a gold mention is matched by at most one prediction, so
duplicate predictions of one mention give one true positive and false positives for the rest.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from xlnel.types import Document, Link

logger = logging.getLogger(__name__)

LEVELS: tuple[str, ...] = ("span", "concept", "overlap")
"""Matching levels accepted by :func:`evaluate`."""

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


@dataclass
class _Match:
    """Result of matching one document: matched pairs and mentions left out of scoring."""

    pairs: list[tuple[int, int]] = field(default_factory=list)
    ignored_gold: set[int] = field(default_factory=set)
    ignored_pred: set[int] = field(default_factory=set)


def _max_matching(edges: dict[int, list[int]]) -> list[tuple[int, int]]:
    """Maximum bipartite matching (Kuhn's augmenting paths) of predictions to gold mentions.

    Args:
        edges: For each prediction index, the gold indices it may be matched to.

    Returns:
        ``(gold, pred)`` index pairs of a maximum one-to-one matching.
    """
    owner: dict[int, int] = {}  # gold index -> prediction index

    def augment(pred: int, seen: set[int]) -> bool:
        for gold in edges[pred]:
            if gold in seen:
                continue
            seen.add(gold)
            if gold not in owner or augment(owner[gold], seen):
                owner[gold] = pred
                return True
        return False

    for pred in sorted(edges):
        augment(pred, set())
    return sorted(owner.items())


def _group_by_offsets(links: Sequence[Link]) -> dict[tuple[int, int], list[int]]:
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for index, link in enumerate(links):
        groups[(link.start, link.end)].append(index)
    return groups


def _match_span(gold: Sequence[Link], pred: Sequence[Link]) -> _Match:
    by_offsets = _group_by_offsets(gold)
    edges = {i: by_offsets.get((p.start, p.end), []) for i, p in enumerate(pred)}
    return _Match(pairs=_max_matching(edges))


def _match_concept(gold: Sequence[Link], pred: Sequence[Link]) -> _Match:
    match = _Match()
    match.ignored_gold = {i for i, g in enumerate(gold) if not g.concept_ids}
    idless_offsets = {(gold[i].start, gold[i].end) for i in match.ignored_gold}
    by_offsets = _group_by_offsets(gold)
    edges: dict[int, list[int]] = {}
    for i, p in enumerate(pred):
        edges[i] = [
            j
            for j in by_offsets.get((p.start, p.end), [])
            if p.concept_id is not None and p.concept_id in gold[j].concept_ids
        ]
    match.pairs = _max_matching(edges)
    matched_pred = {p for _, p in match.pairs}
    # A prediction on an id-less gold mention cannot be judged, so it is neither tp nor fp.
    match.ignored_pred = {
        i
        for i, p in enumerate(pred)
        if i not in matched_pred and (p.start, p.end) in idless_offsets
    }
    return match


def _match_overlap(gold: Sequence[Link], pred: Sequence[Link]) -> _Match:
    scored: list[tuple[int, int, int]] = []
    for j, g in enumerate(gold):
        for i, p in enumerate(pred):
            overlap = min(g.end, p.end) - max(g.start, p.start)
            if overlap > 0:
                scored.append((-overlap, j, i))
    scored.sort()  # largest overlap first; ties by gold then prediction order
    match = _Match()
    used_gold: set[int] = set()
    used_pred: set[int] = set()
    for _, j, i in scored:
        if j not in used_gold and i not in used_pred:
            used_gold.add(j)
            used_pred.add(i)
            match.pairs.append((j, i))
    return match


_MATCHERS: dict[str, Callable[[Sequence[Link], Sequence[Link]], _Match]] = {
    "span": _match_span,
    "concept": _match_concept,
    "overlap": _match_overlap,
}


def _check_level(level: str) -> Callable[[Sequence[Link], Sequence[Link]], _Match]:
    try:
        return _MATCHERS[level]
    except KeyError:
        raise ValueError(
            f"unknown evaluation level {level!r}; allowed: {', '.join(LEVELS)}"
        ) from None


def _index_by_id(documents: Sequence[Document], role: str) -> dict[str, Document]:
    index: dict[str, Document] = {}
    for doc in documents:
        if doc.id in index:
            raise ValueError(f"duplicate {role} document id {doc.id!r}")
        index[doc.id] = doc
    return index


def _pair_documents(
    gold: Sequence[Document], pred: Sequence[Document]
) -> list[tuple[Document, Document | None]]:
    """Pair each gold document with the predicted document of the same id, if any.

    Raises:
        ValueError: If ids repeat, a predicted id is not in gold, or the texts differ.
    """
    gold_by_id = _index_by_id(gold, "gold")
    pred_by_id = _index_by_id(pred, "predicted")
    for doc_id, doc in pred_by_id.items():
        if doc_id not in gold_by_id:
            raise ValueError(f"predicted document {doc_id!r} is not in the gold documents")
        if doc.text != gold_by_id[doc_id].text:
            raise ValueError(
                f"document {doc_id!r}: predicted text differs from the gold text; "
                "predictions must be made on the gold text"
            )
    missing = [doc_id for doc_id in gold_by_id if doc_id not in pred_by_id]
    if missing:
        logger.info(
            "%d gold documents have no predictions; their mentions count as fn", len(missing)
        )
    return [(doc, pred_by_id.get(doc.id)) for doc in gold]


def _matched_documents(
    gold: Sequence[Document], pred: Sequence[Document], level: str
) -> Iterable[tuple[Document, tuple[Link, ...], _Match]]:
    """Yield each gold document with its predicted mentions and their matching."""
    matcher = _check_level(level)
    for gold_doc, pred_doc in _pair_documents(gold, pred):
        pred_links = pred_doc.entities if pred_doc is not None else ()
        yield gold_doc, pred_links, matcher(gold_doc.entities, pred_links)


def _counts(n_gold: int, n_pred: int, match: _Match) -> tuple[int, int, int]:
    tp = len(match.pairs)
    fp = n_pred - len(match.ignored_pred) - tp
    fn = n_gold - len(match.ignored_gold) - tp
    return tp, fp, fn


def evaluate(gold: Sequence[Document], pred: Sequence[Document], level: str = "span") -> Scores:
    """Micro-averaged precision, recall and F1 of predicted mentions over a corpus.

    Documents are matched by id. A gold document without a predicted document contributes its
    gold mentions as false negatives.

    Args:
        gold: Documents with gold mentions.
        pred: Documents with predicted mentions, a subset of the gold ids.
        level: One of :data:`LEVELS` (see the module docstring).

    Returns:
        Scores summed over all documents.

    Raises:
        ValueError: For an unknown level, a repeated document id, a predicted document id that
            is not in gold, or a predicted document whose text differs from the gold text.
    """
    tp = fp = fn = 0
    for gold_doc, pred_links, match in _matched_documents(gold, pred, level):
        d_tp, d_fp, d_fn = _counts(len(gold_doc.entities), len(pred_links), match)
        tp, fp, fn = tp + d_tp, fp + d_fp, fn + d_fn
    return Scores.from_counts(tp, fp, fn)


def evaluate_per_document(
    gold: Sequence[Document], pred: Sequence[Document], level: str = "span"
) -> dict[str, Scores]:
    """Scores of each gold document, keyed by document id (for error analysis).

    Args:
        gold: Documents with gold mentions.
        pred: Documents with predicted mentions.
        level: One of :data:`LEVELS`.

    Returns:
        One :class:`Scores` per gold document, in gold order.

    Raises:
        ValueError: As :func:`evaluate`.
    """
    return {
        gold_doc.id: Scores.from_counts(*_counts(len(gold_doc.entities), len(pred_links), match))
        for gold_doc, pred_links, match in _matched_documents(gold, pred, level)
    }


def _type_key(link: Link) -> str:
    return UNTYPED if link.type is None else link.type


def evaluate_by_type(
    gold: Sequence[Document], pred: Sequence[Document], level: str = "span"
) -> dict[str, Scores]:
    """Scores broken down by entity type; the counts add up to those of :func:`evaluate`.

    Matching ignores types, as in :func:`evaluate`. A true positive and a false negative are
    counted under the gold mention's type, a false positive under the prediction's type.
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
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for gold_doc, pred_links, match in _matched_documents(gold, pred, level):
        matched_gold = {j for j, _ in match.pairs}
        matched_pred = {i for _, i in match.pairs}
        for j, link in enumerate(gold_doc.entities):
            if j not in match.ignored_gold:
                counts[_type_key(link)][0 if j in matched_gold else 2] += 1
        for i, link in enumerate(pred_links):
            if i not in matched_pred and i not in match.ignored_pred:
                counts[_type_key(link)][1] += 1
    return {name: Scores.from_counts(*counts[name]) for name in sorted(counts)}
