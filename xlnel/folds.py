"""Documents dealt into folds: the one shuffle behind cross-validation and cross-fitted DFT.

A leaf module (it imports nothing of xlnel), so both the evaluation package and the dictionary
package can use it without depending on each other.
"""

from __future__ import annotations

import random


def deal(n: int, k: int, seed: int) -> list[list[int]]:
    """The positions ``0..n-1`` shuffled with ``random.Random(seed)`` and dealt round-robin into
    ``k`` folds, each in ascending order; fold sizes differ by at most one, and folds left empty
    (``n`` < ``k``) are dropped. The same ``(n, k, seed)`` always gives the same folds."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [f for f in (sorted(order[j::k]) for j in range(k)) if f]
