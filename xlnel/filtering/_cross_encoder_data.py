"""The cross-encoder's data plumbing (:mod:`xlnel.filtering.cross_encoder`): the dev split, the
training pairs and each epoch's examples, and a cascade's cut and combined scores."""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from xlnel.filtering._pairs import candidate_windows
from xlnel.filtering.labels import label_candidates
from xlnel.types import Candidate, Document

logger = logging.getLogger(__name__)


def split_indices(n: int, fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """(dev, train) document indices: ``round(fraction * n)`` seeded random ones for dev."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    n_dev = round(fraction * n)
    if n_dev == 0 or n_dev == n:
        return [], list(range(n))
    dev = set(order[:n_dev])
    return sorted(dev), [i for i in range(n) if i not in dev]


def dev_split(documents: Sequence[Document], fraction: float,
              seed: int) -> tuple[list[int], list[int]]:
    """(dev, train) indices of :func:`split_indices`, or no dev split when its documents hold
    no gold mention.

    On such a dev split every epoch would score F1 0, so early stopping would keep the first
    epoch and the threshold would be the highest dev score; without a dev split every epoch
    runs and the threshold is chosen on the training documents. A warning says so.
    """
    dev, train = split_indices(len(documents), fraction, seed)
    if dev and not any(documents[i].entities for i in dev):
        logger.warning("cross-encoder: the %d dev documents hold no gold mention to stop early "
                       "or choose the threshold on; training on all %d documents without a "
                       "dev split", len(dev), len(documents))
        return [], list(range(len(documents)))
    return dev, train


@dataclass
class DevPart:
    """Documents with their candidates (and out-of-fold prefilter scores in a cascade)."""

    documents: list[Document]
    candidates: list[Sequence[Candidate]]
    prefilter: list[np.ndarray] | None


def recall_cut(scores: np.ndarray, labels: np.ndarray, recall: float) -> float:
    """The highest score cut that keeps at least ``recall`` of the positive candidates.

    Raises:
        ValueError: If no candidate is positive.
    """
    positive = np.sort(np.asarray(scores, dtype=np.float64)[np.asarray(labels, dtype=bool)])
    if positive.size == 0:
        raise ValueError("no positive candidate to choose the prefilter's cut on")
    keep = math.ceil(recall * positive.size - 1e-9)
    return float(positive[positive.size - max(1, keep)])


def combine(pre: np.ndarray, probs: np.ndarray, mode: str) -> np.ndarray:
    """A cascade's final scores from the prefilter's and the transformer's (0 = unread)."""
    if mode == "mean":
        return (pre + probs) / 2.0
    return probs


def f1_at(dev: DevPart, scores: Sequence[np.ndarray], threshold: float, level: str) -> float:
    """F1 at ``level`` of the links ``scores`` keep at ``threshold``."""
    from xlnel.evaluation.metrics import evaluate
    from xlnel.linkers.decide import decide

    pred = [decide(d, c, s, threshold)
            for d, c, s in zip(dev.documents, dev.candidates, scores, strict=True)]
    return evaluate(list(dev.documents), pred, level).f1


def negatives_per_epoch(n_pos: int, n_neg: int, neg_ratio: float | None) -> int:
    """Negatives an epoch reads: all, or at most ``neg_ratio`` per positive."""
    return n_neg if neg_ratio is None else min(n_neg, math.ceil(neg_ratio * n_pos))


def epoch_examples(pos: list[tuple[str, str]], neg: list[tuple[str, str]],
                   neg_ratio: float | None, rng: random.Random
                   ) -> list[tuple[str, str, float]]:
    """One epoch's shuffled (window, name, label) examples: every positive and the negatives
    :func:`negatives_per_epoch` allows, sampled afresh."""
    n_neg = negatives_per_epoch(len(pos), len(neg), neg_ratio)
    negatives = neg if n_neg == len(neg) else rng.sample(neg, n_neg)
    examples = [(w, n, 1.0) for w, n in pos] + [(w, n, 0.0) for w, n in negatives]
    rng.shuffle(examples)
    return examples


def training_pairs(documents: Sequence[Document], kept: Sequence[Sequence[Candidate]],
                   level: str, window: int, mark_span: bool
                   ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The positive and the negative (window, name) pairs of the candidates the transformer
    reads (``kept``, per document), labelled at ``level``."""
    label_of: dict[tuple[str, str], bool] = {}
    for doc, cands in zip(documents, kept, strict=True):
        # the level the threshold is chosen at (as the GBDT filter does): at span level a
        # name without a concept id (a names-list entry) is not a false negative
        labels = label_candidates(doc, cands, level=level)
        windows = candidate_windows(doc, cands, window, mark_span)
        # one pair per distinct text: a name under two concept ids, one of them gold, is
        # a positive (the transformer reads only the text)
        for text, cand, label in zip(windows, cands, labels, strict=True):
            key = (text, cand.name)
            label_of[key] = label_of.get(key, False) or bool(label)
    pos = [key for key, label in label_of.items() if label]
    neg = [key for key, label in label_of.items() if not label]
    return pos, neg
