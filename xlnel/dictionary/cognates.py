"""Cognate rewriting learned from word pairs: English endings to target-language endings.

Medical vocabulary is full of Greek and Latin words that the target language writes with its own
endings (*nephritis* -> *néphrite*, *dystrophy* -> *distrofia*). Pairs of a word list whose two
sides share a long prefix are cognates; each gives rules ``english ending -> target ending`` with
up to ``context`` letters of the shared part included (``-phy`` -> ``-phie``). An English word the
lexicon lacks is rewritten with the longest ending that enough cognate pairs support, into the
target endings those pairs show most often. Nothing is learned for a target script that never
shares letters with English, so the rules are simply empty there.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from xlnel.dictionary.spelling import SpellingRules

logger = logging.getLogger(__name__)

#: Confidence factor of a rendering left in the English spelling when a respelled one exists
#: (and of a respelled word that no ending rule covers).
RESPELL_FACTOR = 0.9


@dataclass(frozen=True)
class CognateConfig:
    """Settings of the rule learner.

    Attributes:
        min_prefix: Least shared prefix (letters) of a cognate pair.
        min_share: Least share of the English word the shared prefix must cover.
        context: Most shared letters included in a rule's English ending.
        max_ending: Longest English ending of a rule.
        min_support: Least cognate pairs behind a rule.
        min_word: Shortest English word rewritten (short words are rarely cognates).
        n_best: Rewritings returned per word.
    """

    min_prefix: int = 4
    min_share: float = 0.5
    context: int = 3
    max_ending: int = 8
    min_support: int = 3
    min_word: int = 5
    n_best: int = 2


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class CognateRules:
    """Ending rewrites learned from cognate pairs.

    Args:
        config: Learner settings; defaults when ``None``.
    """

    def __init__(self, config: CognateConfig | None = None) -> None:
        self.config = config if config is not None else CognateConfig()
        self._rules: dict[str, Counter[str]] = {}
        self._support: Counter[str] = Counter()
        self.spelling = SpellingRules()

    def fit(self, pairs: Iterable[tuple[str, str]]) -> CognateRules:
        """Learn rules from ``(english, target)`` single-word pairs (other pairs are skipped)."""
        cfg = self.config
        pairs = list(pairs)
        self.spelling.fit(pairs)
        rules: dict[str, Counter[str]] = defaultdict(Counter)
        seen: set[tuple[str, str]] = set()
        for en, tgt in pairs:
            en, tgt = en.casefold(), tgt.casefold()
            if (en, tgt) in seen or not en.isalpha() or not tgt.isalpha() or en == tgt:
                continue
            seen.add((en, tgt))
            p = _common_prefix(en, tgt)
            if p < cfg.min_prefix or p < cfg.min_share * len(en):
                continue
            for start in range(max(1, p - cfg.context), p + 1):
                if len(en) - start <= cfg.max_ending:
                    rules[en[start:]][tgt[start:]] += 1
        self._rules = {e: c for e, c in rules.items() if sum(c.values()) >= cfg.min_support}
        self._support = Counter({e: sum(c.values()) for e, c in self._rules.items()})
        logger.info("learned %d cognate ending rules from %d cognate pairs", len(self._rules),
                    len(seen))
        return self

    def __len__(self) -> int:
        return len(self._rules)

    def rewrite(self, word: str) -> list[tuple[str, float]]:
        """Target-language renderings of an English word with their confidence, best first.

        The longest English ending with a rule wins; the confidence of a rendering is the share
        of that ending's cognate pairs showing its target ending. Each rendering whose stem the
        learned spelling rewrites change (:class:`~xlnel.dictionary.spelling.SpellingRules`:
        *carcin-* -> *karzin-*) comes first in that spelling, then as is; with no ending rule,
        the respelled word alone. Empty when nothing applies or the word is not alphabetic.
        """
        word = word.casefold()
        if not word.isalpha() or len(word) < self.config.min_word or not self._rules:
            return []
        for length in range(min(self.config.max_ending, len(word) - 1), -1, -1):
            ending = word[len(word) - length:] if length else ""
            counts = self._rules.get(ending)
            if counts is None:
                continue
            total = self._support[ending]
            stem = word[: len(word) - length]
            respelled = self.spelling.respell(stem, final=False)
            out: dict[str, float] = {}
            for target, n in counts.most_common(self.config.n_best):
                out.setdefault(respelled + target, n / total)
                out.setdefault(stem + target, RESPELL_FACTOR * n / total)
            return sorted(out.items(), key=lambda x: -x[1])
        respelled = self.spelling.respell(word)
        return [(respelled, RESPELL_FACTOR)] if respelled != word else []
