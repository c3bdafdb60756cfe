"""Sub-word alignments learned from the pairs, for target scripts written without spaces.

Languages written without spaces build technical words from short morphemes (Japanese 肝炎
*hepatitis* = 肝 *liver* + 炎 *inflammation*); the pairs' one-word translations show them.
:class:`MorphemeTable` counts, over distinct one-word pairs, how often an English beginning
(*hepat*) goes with a target beginning (肝), and an English ending (*itis*) with a target ending
(炎), and keeps the alignments that most pairs with the English part share (its precision) and
that enough pairs support. Beginnings go with beginnings and endings with endings: compounds of
such languages put the modifier first, as English words do.

An English word the lexicon lacks is then rendered as beginning + middle + ending, the middle a
lexicon word (or empty), the outer parts from the tables; a leftover of at most
``max_leftover`` letters (an adjective ending: *-ic*, *-al*) may be dropped. The score is the
product of the parts' precisions.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

__all__ = ["MorphemeConfig", "MorphemeTable"]

#: Score factor of a rendering that drops a leftover of the English word.
LEFTOVER_FACTOR = 0.5


@dataclass(frozen=True)
class MorphemeConfig:
    """Settings of :class:`MorphemeTable`.

    Attributes:
        english_lengths: Lengths of English beginnings and endings counted.
        target_lengths: Lengths of target beginnings and endings counted.
        min_count: Fewest distinct pairs behind an alignment.
        min_precision: Least share of the pairs with the English part that show the target part.
        min_uses: Fewest words of the vocabulary (when one is given) that an English part must
            begin or end, so that only parts of the words to render are learned.
        max_leftover: Most letters of the English word a rendering may leave out.
    """

    english_lengths: tuple[int, ...] = (3, 4, 5, 6, 7, 8)
    target_lengths: tuple[int, ...] = (1, 2, 3)
    min_count: int = 3
    min_precision: float = 0.5
    min_uses: int = 2
    max_leftover: int = 3


class MorphemeTable:
    """English word beginnings and endings aligned with target-language ones.

    Args:
        config: Learner settings; defaults when ``None``.
    """

    def __init__(self, config: MorphemeConfig | None = None) -> None:
        self.config = config if config is not None else MorphemeConfig()
        self.prefixes: dict[str, tuple[str, float]] = {}
        self.suffixes: dict[str, tuple[str, float]] = {}

    def __len__(self) -> int:
        return len(self.prefixes) + len(self.suffixes)

    def fit(self, pairs: Iterable[tuple[str, str]], vocabulary: Collection[str] = (),
            transliteration: re.Pattern[str] | None = None) -> MorphemeTable:
        """Learn from ``(english, target)`` pairs.

        Args:
            pairs: Word pairs; pairs with a space, an ASCII target (a copy) or a target matching
                ``transliteration`` (sound, not meaning) are skipped.
            vocabulary: English words to be rendered; only parts that begin or end at least
                ``min_uses`` of them are kept. Empty: no such filter.
            transliteration: Pattern of targets that transliterate.
        """
        distinct = {(en.casefold(), tgt) for en, tgt in pairs
                    if en.isalpha() and " " not in tgt and not tgt.isascii() and len(tgt) > 1
                    and (transliteration is None or not transliteration.search(tgt))}
        self.prefixes = self._align(distinct, vocabulary, suffix=False)
        self.suffixes = self._align(distinct, vocabulary, suffix=True)
        logger.info("learned %d beginning and %d ending morphemes from %d pairs",
                    len(self.prefixes), len(self.suffixes), len(distinct))
        return self

    def _align(self, pairs: set[tuple[str, str]], vocabulary: Collection[str],
               suffix: bool) -> dict[str, tuple[str, float]]:
        cfg = self.config
        english: Counter[str] = Counter()
        joint: Counter[tuple[str, str]] = Counter()
        for en, tgt in sorted(pairs):
            parts = {_part(en, n, suffix) for n in cfg.english_lengths if n < len(en)}
            pieces = {_part(tgt, m, suffix) for m in cfg.target_lengths if m < len(tgt)}
            english.update(parts)
            joint.update((p, q) for p in parts for q in pieces)
        best: dict[str, tuple[str, float]] = {}
        for (part, piece), n in sorted(joint.items()):
            precision = n / english[part]
            if n < cfg.min_count or precision < cfg.min_precision:
                continue
            if part not in best or best[part][1] < precision or (
                    best[part][1] == precision and len(piece) > len(best[part][0])):
                best[part] = (piece, precision)
        if vocabulary:
            uses = Counter(_part(w, n, suffix) for w in vocabulary for n in cfg.english_lengths
                           if n < len(w))
            best = {p: v for p, v in best.items() if uses[p] >= cfg.min_uses}
        return best

    def render(self, word: str, lookup: Callable[[str], str | None]
               ) -> list[tuple[str, float]]:
        """Renderings of ``word`` as beginning + middle + ending, best first.

        Args:
            word: Normalised English word.
            lookup: Rendering of a whole English word (the lexicon's best native sense) or
                ``None``; renders the middle.

        Returns:
            ``(rendering, score)`` pairs; empty when no split uses a learned part.
        """
        out: dict[str, float] = {}
        for head, head_score, rest in self._splits(word, self.prefixes, suffix=False):
            for tail, tail_score, middle in self._splits(rest, self.suffixes, suffix=True):
                if not head and not tail:
                    continue
                found = self._middle(middle, lookup)
                if found is None:
                    continue
                text, factor = found
                score = head_score * tail_score * factor
                rendering = head + text + tail
                if rendering and score > out.get(rendering, 0.0):
                    out[rendering] = score
        return sorted(out.items(), key=lambda x: (-x[1], x[0]))

    def _splits(self, word: str, table: dict[str, tuple[str, float]], suffix: bool
                ) -> list[tuple[str, float, str]]:
        """``(target part, precision, rest of the word)``, the empty part included."""
        out = [("", 1.0, word)]
        for n in self.config.english_lengths:
            if n > len(word):
                continue
            found = table.get(_part(word, n, suffix))
            if found is not None:
                out.append((found[0], found[1], word[:-n] if suffix else word[n:]))
        return out

    def _middle(self, middle: str, lookup: Callable[[str], str | None]
                ) -> tuple[str, float] | None:
        if not middle:
            return "", 1.0
        if len(middle) >= 3:
            found = lookup(middle)
            if found:
                return found, 1.0
        if len(middle) <= self.config.max_leftover:
            return "", LEFTOVER_FACTOR
        return None


def _part(word: str, n: int, suffix: bool) -> str:
    return word[-n:] if suffix else word[:n]
