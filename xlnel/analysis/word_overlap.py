"""How well the words of a looked-up text and of a name answer each other (the ``words``
ranking of :class:`~xlnel.analysis.lookup.DictionaryLookup`).

The TF-IDF cosine of character n-grams compares two strings as wholes: a name that shares long
stretches of letters with the text (*volume diminution de lip* for *diminution du volume
testiculaire*) can beat the name that renders each of its words, loosely or in another order
(*taille testiculaire diminution*). :class:`WordOverlap` scores a (text, name) pair by word:
each word of one side is matched to its most similar word of the other (the Dice coefficient
of their character bigrams and trigrams, with word boundaries), and the two sides' shares,
weighted by the words' inverse document frequency among the dictionary's names so that
function words count little, are combined into an F1. Nothing in it is specific to a language.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["WordOverlap", "word_similarity"]


@lru_cache(maxsize=200_000)
def _grams(word: str) -> frozenset[str]:
    padded = f"#{word}#"
    return frozenset(padded[i:i + n] for n in (2, 3) for i in range(len(padded) - n + 1))


def word_similarity(a: str, b: str) -> float:
    """Dice coefficient of the character bigrams and trigrams of two words (with a boundary
    mark at each end), 1 for equal words.

    >>> word_similarity("urach", "urach"), round(word_similarity("tumour", "tumor"), 3)
    (1.0, 0.667)
    >>> word_similarity("a", "b")
    0.0
    """
    if a == b:
        return 1.0
    x, y = _grams(a), _grams(b)
    return 2 * len(x & y) / (len(x) + len(y))


class WordOverlap:
    """IDF-weighted F1 of the word matches between a text and a name.

    Args:
        names: The names whose words set the inverse document frequencies (words split on
            white space); a word no name holds gets the highest.
    """

    def __init__(self, names: Iterable[str]) -> None:
        df: Counter[str] = Counter()
        n = 0
        for name in names:
            n += 1
            df.update(set(name.split()))
        # looked up for every word of every (text, name) pair: computed once per word
        self._idf = {word: math.log((n + 1) / (count + 1)) + 1.0 for word, count in df.items()}
        self._unseen = math.log(n + 1) + 1.0

    def idf(self, word: str) -> float:
        """Smoothed inverse document frequency of a word among the names (at least 1)."""
        return self._idf.get(word, self._unseen)

    def __call__(self, text: str, name: str) -> float:
        """The overlap of ``text`` and ``name`` in ``[0, 1]``; 0 when either has no word.

        >>> overlap = WordOverlap(["cyst of kidney", "kidney cyst", "cyst of bone", "fever"])
        >>> overlap("kidney cyst", "cyst kidney")  # word order does not count
        1.0
        >>> round(overlap("kidney cysts", "cyst of kidney"), 3)
        0.661
        >>> round(overlap("kidney cysts", "cyst of bone"), 3)
        0.303
        >>> overlap("", "fever")
        0.0
        """
        left, right = text.split(), name.split()
        if not left or not right:
            return 0.0
        recall = self._side(left, right)
        precision = self._side(right, left)
        total = precision + recall
        return 2 * precision * recall / total if total else 0.0

    def _side(self, words: list[str], other: list[str]) -> float:
        """IDF-weighted mean, over ``words``, of each one's best similarity in ``other``."""
        weights = [self.idf(w) for w in words]
        found = [max(word_similarity(w, o) for o in other) for w in words]
        return sum(w * f for w, f in zip(weights, found, strict=True)) / sum(weights)
