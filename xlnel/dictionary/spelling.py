"""Spelling rewrites learned from cognate word pairs: how a language respells Greek and Latin.

Medical cognates differ from English not only in their endings but inside the word: German writes
*c* as *k* or *z* (*carcinoma* -> *Karzinom*), Italian *ph* as *f* and *y* as *i* (*dystrophy* ->
*distrofia*), French adds accents (*leukodystrophy* -> *leucodystrophie*). Pairs whose two sides
are close by edit distance are taken for cognates; their character alignment gives rewrites
``source -> target`` with up to one letter of context on each side (``^c -> ^k``, ``ce -> ze``,
``ph -> f``; ``^`` and ``$`` mark the word's edges). A rewrite is kept when enough pairs show it
and it is what the language does with that letter sequence most of the time (its *rate*: the
pairs showing it over the cognates holding the sequence). Nothing here is specific to a
language: a script unlike English gives no cognates, so no rule.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

logger = logging.getLogger(__name__)

__all__ = ["SpellingConfig", "SpellingRules"]


@dataclass(frozen=True)
class SpellingConfig:
    """Settings of :class:`SpellingRules`.

    Attributes:
        min_similarity: Least normalised edit similarity of a cognate pair.
        min_length: Shortest English word of a cognate pair.
        max_segment: Longest changed letter sequence of a rule (context excluded).
        min_support: Fewest cognate pairs showing a rule.
        min_rate: Least share of the cognates holding a rule's source that show the rule.
    """

    min_similarity: float = 0.6
    min_length: int = 5
    max_segment: int = 3
    min_support: int = 5
    min_rate: float = 0.5


@dataclass(frozen=True)
class _Rule:
    target: str
    rate: float
    support: int


class SpellingRules:
    """Letter rewrites learned from cognate pairs, applied to spell English words the target's way.

    Args:
        config: Learner settings; defaults when ``None``.
    """

    def __init__(self, config: SpellingConfig | None = None) -> None:
        self.config = config if config is not None else SpellingConfig()
        self.rules: dict[str, _Rule] = {}
        self._longest = 0

    def __len__(self) -> int:
        return len(self.rules)

    def fit(self, pairs: Iterable[tuple[str, str]]) -> SpellingRules:
        """Learn rewrites from ``(english, target)`` single-word pairs (others are skipped)."""
        cfg = self.config
        shown: dict[str, Counter[str]] = defaultdict(Counter)
        words: list[str] = []
        for en, tgt in sorted(set(pairs)):
            en, tgt = en.casefold(), tgt.casefold()
            if (len(en) < cfg.min_length or en == tgt or not en.isalpha() or not tgt.isalpha()
                    or Levenshtein.normalized_similarity(en, tgt) < cfg.min_similarity):
                continue
            source, target = f"^{en}$", f"^{tgt}$"
            words.append(source)
            for src, tgt_part in set(_rewrites(source, target, cfg.max_segment)):
                shown[src][tgt_part] += 1
        held = _substring_counts(words, {s for s, c in shown.items()
                                         if sum(c.values()) >= cfg.min_support})
        rules = {}
        for src, counts in shown.items():
            tgt_part, n = counts.most_common(1)[0]
            if n >= cfg.min_support and held.get(src) and n / held[src] >= cfg.min_rate:
                rules[src] = _Rule(tgt_part, n / held[src], n)
        self.rules = rules
        self._longest = max(map(len, rules), default=0)
        logger.info("learned %d spelling rewrites from %d cognate pairs", len(rules), len(words))
        return self

    def respell(self, word: str, final: bool = True) -> str:
        """``word`` with every learned rewrite applied, left to right, each letter rewritten
        at most once; at a position the rule of the highest rate (then the longest) wins.

        Args:
            word: Lower-case English word.
            final: Whether ``word`` ends the word (rules bound to the word's end apply); false
                for a stem whose ending is rewritten otherwise.
        """
        if not self.rules:
            return word
        text, out, i = "^" + word + ("$" if final else ""), [], 0
        while i < len(text):
            best: tuple[float, int, str] | None = None
            for n in range(min(self._longest, len(text) - i), 0, -1):
                rule = self.rules.get(text[i:i + n])
                if rule is not None and (best is None or (rule.rate, n) > best[:2]):
                    best = (rule.rate, n, rule.target)
            if best is None:
                out.append(text[i])
                i += 1
            else:
                out.append(best[2])
                i += best[1]
        return "".join(out).strip("^$")


def _rewrites(source: str, target: str, max_segment: int) -> list[tuple[str, str]]:
    """Rewrites a pair shows: each changed span, bare and with a letter of context each side."""
    out = []
    for op in Levenshtein.opcodes(source, target):
        if op.tag == "equal":
            continue
        i1, i2, j1, j2 = op.src_start, op.src_end, op.dest_start, op.dest_end
        if i2 - i1 > max_segment or j2 - j1 > max_segment + 1:
            continue
        seg, rep = source[i1:i2], target[j1:j2]
        left, right = source[max(0, i1 - 1):i1], source[i2:i2 + 1]
        if seg:
            out.append((seg, rep))
        if left:
            out.append((left + seg, left + rep))
        if right:
            out.append((seg + right, rep + right))
        if left and right:
            out.append((left + seg + right, left + rep + right))
    return out


def _substring_counts(words: list[str], wanted: set[str]) -> Counter[str]:
    """How many times each wanted string occurs in the words (overlaps counted)."""
    lengths = sorted({len(w) for w in wanted})
    counts: Counter[str] = Counter()
    for word in words:
        for n in lengths:
            for i in range(len(word) - n + 1):
                part = word[i:i + n]
                if part in wanted:
                    counts[part] += 1
    return counts
