"""Cross-validation folds by document: every document lies in exactly one test fold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xlnel.folds import deal

T = TypeVar("T")


def assign_folds(n: int, k: int, seed: int) -> list[int]:
    """The fold (``0..k-1``) of each of ``n`` documents, in input order.

    The positions are shuffled and dealt round-robin (:func:`xlnel.folds.deal`), so the fold
    sizes differ by at most one and the same ``(n, k, seed)`` always gives the same folds.

    Raises:
        ValueError: If ``k`` < 2 or there are fewer documents than folds.
    """
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {k}")
    if n < k:
        raise ValueError(f"{k} folds need at least {k} documents, got {n}")
    folds = [0] * n
    for j, members in enumerate(deal(n, k, seed)):
        for index in members:
            folds[index] = j
    return folds


def fold_split(documents: Sequence[T], k: int, fold: int, seed: int) -> tuple[list[T], list[T]]:
    """(training documents, test documents) of fold ``fold`` of ``k``; both keep input order.

    Raises:
        ValueError: If ``fold`` is not in ``0..k-1``, or as :func:`assign_folds`.
    """
    if not 0 <= fold < k:
        raise ValueError(f"fold must be in 0..{k - 1}, got {fold}")
    folds = assign_folds(len(documents), k, seed)
    train = [d for d, f in zip(documents, folds, strict=True) if f != fold]
    test = [d for d, f in zip(documents, folds, strict=True) if f == fold]
    return train, test
