"""How a compounding language glues nouns, learned from the words of a pair file.

German writes a noun modifying a noun as one word, often with a linking element: *Niere* +
*Insuffizienz* -> *Niereninsuffizienz*, *Bildung* + *Störung* -> *Bildungsstörung*. The target
side of a pair file holds many such compounds. A target word that splits into a left part and a
right part that is itself a listed word, where the left part is a listed word plus at most
``max_link`` letters, shows how that word begins a compound
(*Niere* -> *Nieren*); words never seen so borrow the commonest change of the words with their
ending. Nothing is written per language: a language that does not compound shows few such
words, and its language file does not ask for compounds anyway (``compound: true``).
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

__all__ = ["CompoundConfig", "CompoundForms"]


@dataclass(frozen=True)
class CompoundConfig:
    """Settings of :class:`CompoundForms`.

    Attributes:
        min_part: Shortest left or right part of a compound (letters).
        max_link: Longest linking element (letters added to the left word).
        ending: Letters of a word's ending that pick the change for unseen words.
        min_support: Fewest compounds behind an ending's change.
        min_share: Least share of its ending's compounds a change must have.
    """

    min_part: int = 3
    max_link: int = 2
    ending: int = 2
    min_support: int = 5
    min_share: float = 0.5


class CompoundForms:
    """The form each target word takes at the start of a compound, learned from compounds.

    Args:
        config: Learner settings; defaults when ``None``.
    """

    def __init__(self, config: CompoundConfig | None = None) -> None:
        self.config = config if config is not None else CompoundConfig()
        self.forms: dict[str, str] = {}
        self.by_ending: dict[str, tuple[str, str]] = {}

    def __len__(self) -> int:
        return len(self.forms)

    def fit(self, words: Iterable[str]) -> CompoundForms:
        """Learn from target-language words (single words; others are skipped)."""
        cfg = self.config
        vocab = {w.casefold() for w in words if w.isalpha()}
        seen: dict[str, Counter[str]] = defaultdict(Counter)
        for word in sorted(vocab):
            for i in range(cfg.min_part, len(word) - cfg.min_part + 1):
                if word[i:] in vocab:
                    left = word[:i]
                    for base in _bases(left, vocab, cfg):
                        seen[base][left] += 1
        self.forms = {w: c.most_common(1)[0][0] for w, c in seen.items()}
        self.by_ending = self._endings(self.forms)
        logger.info("learned the compound forms of %d words, changes of %d endings",
                    len(self.forms), len(self.by_ending))
        return self

    def _endings(self, forms: dict[str, str]) -> dict[str, tuple[str, str]]:
        """Per word ending, the commonest change ``(removed, added)`` at a compound's start."""
        changes: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
        for word, form in forms.items():
            changes[word[-self.config.ending:]][_change(word, form)] += 1
        out = {}
        cfg = self.config
        for ending, counts in changes.items():
            change, n = counts.most_common(1)[0]
            if (change != ("", "") and n >= cfg.min_support
                    and n / sum(counts.values()) >= cfg.min_share):
                out[ending] = change
        return out

    def form(self, word: str) -> str:
        """How ``word`` begins a compound (itself when nothing was learned for it)."""
        word = word.casefold()
        found = self.forms.get(word)
        if found is not None:
            return found
        change = self.by_ending.get(word[-self.config.ending:])
        if change is None or not word.endswith(change[0]) or len(word) <= len(change[0]):
            return word
        return word[: len(word) - len(change[0])] + change[1]

    def join(self, words: Iterable[str]) -> str:
        """Words glued into one compound, each but the last in its compound form."""
        parts = list(words)
        return "".join([*(self.form(w) for w in parts[:-1]), *parts[-1:]])


def _bases(left: str, vocab: set[str], cfg: CompoundConfig) -> list[str]:
    """The listed words a compound's left part may come from: itself and itself less a linking
    element of at most ``max_link`` letters (*nieren*: *nieren*, *niere*)."""
    stems = (left[: len(left) - cut] for cut in range(cfg.max_link + 1))
    return [s for s in stems if len(s) >= cfg.min_part and s in vocab]


def _change(word: str, form: str) -> tuple[str, str]:
    """``(removed, added)``: the letters ``form`` drops from ``word``'s end and adds."""
    n = 0
    while n < min(len(word), len(form)) and word[n] == form[n]:
        n += 1
    return word[n:], form[n:]
