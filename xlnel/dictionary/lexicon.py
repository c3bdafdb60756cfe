"""A bilingual word lexicon: every target-language sense a pair file gives for an English word.

A MUSE-style file (``english<TAB>foreign``, many lines per English word) becomes a map from the
normalised English word to its senses, in file order, each with a prior that falls with its rank
(the first listed sense is usually the commonest). A target that merely copies the English word
(``heart``/``heart``) is kept but ranked last, since a real translation is preferred when there is
one. English inflections missing from the file are looked up through their base form
(``abnormalities`` -> ``abnormality``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from xlnel.dictionary.pairs import load_pairs, normalize_name

logger = logging.getLogger(__name__)

#: Prior of a sense at rank r (0-based) is ``1 / (1 + RANK_DECAY * r)``.
RANK_DECAY = 0.35
#: Prior factor of a sense that copies the English word while other senses exist.
COPY_FACTOR = 0.8
# English inflectional endings tried, longest first, when a word is missing: (ending, base ending)
_EN_ENDINGS = (("ies", "y"), ("ves", "f"), ("ses", "s"), ("xes", "x"), ("ches", "ch"),
               ("shes", "sh"), ("es", "e"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", ""),
               ("ed", "e"), ("ing", ""), ("ing", "e"), ("ly", ""), ("ally", ""))
#: English ordinals written with digits, looked up as words.
ORDINALS = {"1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth", "5th": "fifth",
            "6th": "sixth", "7th": "seventh", "8th": "eighth", "9th": "ninth", "10th": "tenth",
            "11th": "eleventh", "12th": "twelfth"}


@dataclass(frozen=True)
class Sense:
    """One target-language rendering of an English word and its prior in ``(0, 1]``."""

    text: str
    prior: float
    kind: str = "translation"


class Lexicon:
    """English word -> target-language senses, built from word pairs.

    Args:
        pairs: ``(english, foreign)`` or ``(english, foreign, kind)`` tuples in file order.
    """

    def __init__(self, pairs: Iterable[tuple[str, ...]]) -> None:
        raw: dict[str, dict[str, str]] = {}
        for pair in pairs:
            source, target = normalize_name(pair[0]), " ".join(pair[1].split())
            if source and target:
                kind = pair[2] if len(pair) > 2 else "translation"
                raw.setdefault(source, {}).setdefault(target, kind)
        self._senses = {word: _rank(word, targets) for word, targets in raw.items()}

    @classmethod
    def from_file(cls, path: str | Path) -> Lexicon:
        """Read a pair file (``source<TAB>target[<TAB>kind]``, see :func:`load_pairs`).

        Raises:
            FileNotFoundError: If the file does not exist.
            FormatError: On a malformed line, naming the file and line.
            ValueError: If the file holds no pair.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"pair file not found: {path}")
        lexicon = cls(load_pairs(path, derive_kinds=False))
        if not lexicon._senses:
            raise ValueError(f"{path}: no word pair in the file")
        logger.info("%s: lexicon of %d English words, %d senses", path, len(lexicon),
                    sum(len(s) for s in lexicon._senses.values()))
        return lexicon

    def __len__(self) -> int:
        return len(self._senses)

    def __contains__(self, word: object) -> bool:
        return word in self._senses

    def __iter__(self) -> Iterator[str]:
        return iter(self._senses)

    def items(self) -> Iterator[tuple[str, list[Sense]]]:
        """``(english word, senses)`` pairs."""
        return iter(self._senses.items())

    def senses(self, word: str) -> list[Sense]:
        """Senses of a normalised English word, best first; base forms are tried when missing.

        A sense found through a base form (or, for a word only listed in the plural, through
        its plural) keeps its text and loses a little prior. Returns an empty list when nothing
        is found.
        """
        word = ORDINALS.get(word, word)
        found = self._senses.get(word)
        if found:
            return found
        for ending, base in _EN_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                stem = word[: len(word) - len(ending)] + base
                if stem in self._senses:
                    return [Sense(s.text, 0.9 * s.prior, s.kind) for s in self._senses[stem]]
        for plural in (word + "s", word + "es", word[:-1] + "ies"):
            if plural in self._senses:
                return [Sense(s.text, 0.8 * s.prior, s.kind) for s in self._senses[plural]]
        return []


def _rank(word: str, targets: dict[str, str]) -> list[Sense]:
    copies = [t for t in targets if t.casefold() == word]
    ordered = [t for t in targets if t not in copies] + copies
    senses = []
    for rank, text in enumerate(ordered):
        prior = 1.0 / (1.0 + RANK_DECAY * rank)
        if text in copies and len(ordered) > 1:
            prior *= COPY_FACTOR
        senses.append(Sense(text, prior, targets[text]))
    return senses
