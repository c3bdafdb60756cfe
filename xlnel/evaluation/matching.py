"""One-to-one matching of predicted mentions to gold mentions within one document.

Each matcher takes the gold and the predicted mentions of one document and returns a
:class:`Match`: the ``(gold, prediction)`` index pairs that count as true positives, plus the
mentions left out of scoring. :mod:`xlnel.evaluation.metrics` turns matches into counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from xlnel.candidates.spans import HEBREW_PREFIX_LETTERS
from xlnel.types import Link

__all__ = ["MENTION_MATCHERS", "Match", "Matcher", "prefix_equivalent", "typed"]


@dataclass
class Match:
    """Result of matching one document: matched pairs and mentions left out of scoring.

    Attributes:
        pairs: ``(gold index, prediction index)`` pairs, each index at most once.
        ignored_gold: Gold indices that are neither true positives nor false negatives.
        ignored_pred: Prediction indices that are neither true nor false positives.
    """

    pairs: list[tuple[int, int]] = field(default_factory=list)
    ignored_gold: set[int] = field(default_factory=set)
    ignored_pred: set[int] = field(default_factory=set)


Matcher = Callable[[Sequence[Link], Sequence[Link]], Match]


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


def match_span(gold: Sequence[Link], pred: Sequence[Link]) -> Match:
    """Exact offsets; concepts ignored."""
    by_offsets = _group_by_offsets(gold)
    edges = {i: by_offsets.get((p.start, p.end), []) for i, p in enumerate(pred)}
    return Match(pairs=_max_matching(edges))


def prefix_equivalent(gold: Link, pred: Link) -> bool:
    """Whether two mentions are the same up to one attached Hebrew one-letter prefix.

    The end offsets must be equal and the starts equal, or one mention must start exactly one
    character earlier on a letter of :data:`~xlnel.candidates.spans.HEBREW_PREFIX_LETTERS`
    (``בסוכרת`` against ``סוכרת``, either side).
    """
    if gold.end != pred.end:
        return False
    if gold.start == pred.start:
        return True
    if pred.start == gold.start - 1:
        return _starts_with_prefix_letter(pred)
    if gold.start == pred.start - 1:
        return _starts_with_prefix_letter(gold)
    return False


def _starts_with_prefix_letter(link: Link) -> bool:
    return link.text != "" and link.text[0] in HEBREW_PREFIX_LETTERS


def match_span_prefix(gold: Sequence[Link], pred: Sequence[Link]) -> Match:
    """Offsets equal up to one attached Hebrew prefix letter (:func:`prefix_equivalent`)."""
    by_end: dict[int, list[int]] = defaultdict(list)
    for j, g in enumerate(gold):
        by_end[g.end].append(j)
    edges = {
        i: [j for j in by_end.get(p.end, []) if prefix_equivalent(gold[j], p)]
        for i, p in enumerate(pred)
    }
    return Match(pairs=_max_matching(edges))


def match_concept(gold: Sequence[Link], pred: Sequence[Link]) -> Match:
    """Exact offsets and ``pred.concept_id in gold.concept_ids``; id-less gold left out."""
    match = Match()
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


def match_overlap(gold: Sequence[Link], pred: Sequence[Link]) -> Match:
    """At least one shared character; concepts ignored.

    The pairs are a maximum matching (as many true positives as one-to-one pairing allows) and,
    among maximum matchings, one with the largest total overlap, so a prediction is paired with
    the gold mention it overlaps most unless that would leave another pair unmade. Mentions
    are matched a cluster at a time (runs of mentions whose extents chain together), so a long
    document costs no more than its clusters.
    """
    pairs: list[tuple[int, int]] = []
    for golds, preds in _overlap_clusters(gold, pred):
        overlaps = np.array([[max(0, min(gold[j].end, pred[i].end)
                                  - max(gold[j].start, pred[i].start)) for i in preds]
                             for j in golds], dtype=np.int64)
        # One more pair outweighs any gain in total overlap, so the number of pairs comes first.
        weights = np.where(overlaps > 0, overlaps + int(overlaps.sum()) + 1, 0)
        rows, cols = linear_sum_assignment(weights, maximize=True)
        pairs += [(golds[r], preds[c]) for r, c in zip(rows, cols, strict=True)
                  if overlaps[r, c] > 0]
    return Match(pairs=sorted(pairs))


def _overlap_clusters(gold: Sequence[Link], pred: Sequence[Link]
                      ) -> list[tuple[list[int], list[int]]]:
    """Gold and predicted indices grouped into runs of chained extents holding both kinds;
    no mention overlaps one of another run."""
    items = sorted([(m.start, m.end, 0, j) for j, m in enumerate(gold)]
                   + [(m.start, m.end, 1, i) for i, m in enumerate(pred)])
    clusters: list[tuple[list[int], list[int]]] = []
    end = -1
    for start, stop, kind, index in items:
        if start >= end or not clusters:
            clusters.append(([], []))
        clusters[-1][kind].append(index)
        end = max(end, stop) if start < end else stop
    return [(golds, preds) for golds, preds in clusters if golds and preds]


def typed(matcher: Matcher) -> Matcher:
    """``matcher`` within each entity type: a prediction is matched only to gold mentions of
    its own type (a missing type, ``None``, is a type of its own), as NER scores are."""

    def match(gold: Sequence[Link], pred: Sequence[Link]) -> Match:
        out = Match()
        for kind in dict.fromkeys([g.type for g in gold] + [p.type for p in pred]):
            gi = [j for j, g in enumerate(gold) if g.type == kind]
            pi = [i for i, p in enumerate(pred) if p.type == kind]
            found = matcher([gold[j] for j in gi], [pred[i] for i in pi])
            out.pairs += [(gi[j], pi[i]) for j, i in found.pairs]
            out.ignored_gold |= {gi[j] for j in found.ignored_gold}
            out.ignored_pred |= {pi[i] for i in found.ignored_pred}
        out.pairs.sort()
        return out

    return match


MENTION_MATCHERS: dict[str, Matcher] = {
    "span": match_span,
    "span-prefix": match_span_prefix,
    "concept": match_concept,
    "overlap": match_overlap,
    "span+type": typed(match_span),
    "concept+type": typed(match_concept),
}
"""Matcher of each mention-level evaluation level."""
