"""Sub-word fallbacks for English words a lexicon lacks: related forms and learned affixes.

Two mechanisms, both independent of the target language:

* :func:`related_forms`: English derivational relatives of a word, by ending rewrites of English
  itself (*corneal* -> *cornea*, *mandibular* -> *mandible*, *hypoplastic* -> *hypoplasia*).
  When the pairs lack the adjective but hold the noun (or the reverse), the noun's rendering
  stands for the adjective: a noun modifying a noun is how many languages say it (Japanese
  角膜ジストロフィー), and a character matcher still finds the shared stem elsewhere.
* :class:`AffixModel`: English word endings (*-itis*, *-plasia*) and beginnings (*hyper-*,
  *nephro-*) aligned with recurrent target-language endings and beginnings of their translations
  in the pairs (*-itis* -> 炎 / *-ite*); an English word the pairs lack is split into a stem and
  such affixes, the stem rendered by the lexicon (or, recursively, by stems learned the same
  way) and the parts glued in the target's order. Only alignments that enough distinct word
  pairs support, and that most words with the English affix share, are kept.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

__all__ = ["AffixConfig", "AffixModel", "related_forms"]

# English ending -> endings of related words (adjective <-> noun of one root), longest first
_DERIVATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("astic", ("asia",)), ("otic", ("osis",)), ("etic", ("esis",)), ("ngeal", ("nx",)),
    ("asia", ("astic",)), ("osis", ("otic",)), ("esis", ("etic",)), ("ular", ("le", "la")),
    ("ical", ("y", "ic", "e")), ("eal", ("ea", "eum", "eus")), ("ous", ("", "e", "y", "a", "um")),
    ("nx", ("ngeal",)), ("al", ("a", "e", "is", "us", "um", "")),
    ("ar", ("a", "e", "")), ("ic", ("ia", "y", "e", "is", "")), ("ia", ("ic", "ial")),
    ("ea", ("eal",)), ("um", ("al",)), ("us", ("al",)), ("is", ("al",)), ("y", ("ic", "ical")),
    ("a", ("al", "ar")), ("e", ("al", "ar")),
)
#: Shortest stem left by a derivation rewrite.
MIN_STEM = 3


def related_forms(word: str) -> list[str]:
    """English words derived from the same root as ``word``, most specific rewrite first.

    >>> related_forms("corneal")[:2]
    ['cornea', 'corneum']
    """
    out: dict[str, None] = {}
    for ending, replacements in _DERIVATIONS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM:
            stem = word[: len(word) - len(ending)]
            for repl in replacements:
                if stem + repl != word:
                    out.setdefault(stem + repl, None)
    return list(out)


#: Confidence factor of an affix rendering whose stem was read as a longer word (*pla* as
#: *play*): short stems complete to unrelated words.
COMPLETED_FACTOR = 0.8
#: Confidence factor of an affix rendering whose stem was pieced together from two parts
#: (*hypopla* as *hypo* + *play*), below a cognate rewrite's usual confidence.
SPLIT_FACTOR = 0.4


@dataclass(frozen=True)
class AffixConfig:
    """Settings of :class:`AffixModel`.

    Attributes:
        min_support: Fewest distinct English words behind an affix alignment.
        min_share: Least share of the English affix's words whose translation shows the
            target affix.
        english_lengths: Lengths of English affixes tried.
        max_target: Longest target affix (characters).
        min_stem: Shortest English stem left when an affix is cut off.
    """

    min_support: int = 2
    min_share: float = 0.3
    english_lengths: tuple[int, ...] = (3, 4, 5, 6)
    max_target: int = 6
    min_stem: int = 3


@dataclass(frozen=True)
class _Affix:
    target: str
    share: float


class AffixModel:
    """English affixes aligned with target-language affixes, and stems learned through them.

    Args:
        config: Learner settings; defaults when ``None``.
    """

    def __init__(self, config: AffixConfig | None = None) -> None:
        self.config = config if config is not None else AffixConfig()
        self.suffixes: dict[str, _Affix] = {}
        self.prefixes: dict[str, _Affix] = {}
        self.stems: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.suffixes) + len(self.prefixes)

    def fit(self, pairs: Iterable[tuple[str, str]]) -> AffixModel:
        """Learn from ``(english, target)`` single-word pairs (other pairs are skipped)."""
        words: dict[str, list[str]] = defaultdict(list)
        for en, tgt in pairs:
            en, tgt = en.casefold(), tgt.casefold()
            if en.isalpha() and " " not in tgt and tgt != en and tgt not in words[en]:
                words[en].append(tgt)
        self.suffixes = self._align(words, suffix=True)
        self.prefixes = self._align(words, suffix=False)
        self.stems = self._learn_stems(words)
        logger.info("learned %d suffix and %d prefix alignments, %d stems", len(self.suffixes),
                    len(self.prefixes), len(self.stems))
        return self

    def _align(self, words: dict[str, list[str]], suffix: bool) -> dict[str, _Affix]:
        """English affixes whose words' translations are a stem's translation plus one affix.

        A word counts for ``(english affix, target affix)`` only when the rest of the English
        word (completed as a word: *trache* -> *trachea*) has a translation that the word's
        translation starts (for a suffix) or ends (for a prefix) with; loanwords and names,
        whose parts have no translation of their own, teach nothing.
        """
        cfg = self.config
        pairs: dict[str, Counter[str]] = defaultdict(Counter)
        verified: Counter[str] = Counter()
        for en, targets in words.items():
            for n in cfg.english_lengths:
                if len(en) - n < cfg.min_stem:
                    continue
                affix, rest = (en[-n:], en[:-n]) if suffix else (en[:n], en[n:])
                parts = {t for form in _completions(rest) if form != en
                         for t in words.get(form, ())}
                found = {r for t in targets for part in parts
                         if (r := _rest(t, part, suffix, cfg.max_target)) is not None}
                if found:
                    verified[affix] += 1
                    # sorted: most_common breaks ties by first insertion, and a set's order
                    # changes with PYTHONHASHSEED
                    pairs[affix].update(sorted(found))
        out: dict[str, _Affix] = {}
        for affix, counts in pairs.items():
            target, n = counts.most_common(1)[0]
            if n >= cfg.min_support and n / verified[affix] >= cfg.min_share:
                out[affix] = _Affix(target, n / verified[affix])
        return out

    def _learn_stems(self, words: dict[str, list[str]]) -> dict[str, str]:
        """English stems and their renderings, from pairs showing an aligned affix."""
        stems: dict[str, Counter[str]] = defaultdict(Counter)
        for en, targets in words.items():
            for n in self.config.english_lengths:
                for suffix, table in ((True, self.suffixes), (False, self.prefixes)):
                    al = table.get(en[-n:] if suffix else en[:n])
                    if al is None or len(en) - n < self.config.min_stem:
                        continue
                    rest = en[:-n] if suffix else en[n:]
                    for t in targets:
                        part = _rest(t, al.target, not suffix, len(t))
                        if part:
                            stems[rest][part] += 1
        return {s: c.most_common(1)[0][0] for s, c in stems.items()}

    def render(self, word: str, lookup: Callable[[str], str | None], joiner: str = ""
               ) -> list[tuple[str, float]]:
        """Renderings of ``word`` as a stem plus a learned suffix and/or prefix.

        Args:
            word: Normalised English word.
            lookup: Rendering of a whole English word (the lexicon's best sense), or ``None``.
            joiner: Glue between the parts, the halves of a two-part stem too (``''`` for a word).

        Returns:
            ``(rendering, confidence)`` best first: the share of the affix alignment, times
            :data:`COMPLETED_FACTOR` for a stem read as a longer word (*pla* as *play*) and
            :data:`SPLIT_FACTOR` for a stem pieced together from two parts.
        """
        out: dict[str, float] = {}
        for n in sorted(self.config.english_lengths, reverse=True):
            if len(word) - n < self.config.min_stem:
                continue
            for suffix in (True, False):
                affix = (self.suffixes if suffix else self.prefixes).get(
                    word[-n:] if suffix else word[:n])
                if affix is None:
                    continue
                rest = word[:-n] if suffix else word[n:]
                found = self._stem(rest, lookup, joiner)
                if found:
                    stem, factor = found
                    text = joiner.join((stem, affix.target) if suffix else (affix.target, stem))
                    out[text] = max(out.get(text, 0.0), affix.share * factor)
        return sorted(out.items(), key=lambda x: -x[1])

    def _stem(self, rest: str, lookup: Callable[[str], str | None], joiner: str = "",
              split: bool = True) -> tuple[str, float] | None:
        """A rendering of an English stem and the confidence in how it was found: learned or a
        lexicon word (1), a lexicon word the stem completes (*trache* -> *trachea*), or two
        such parts."""
        for form in (rest, rest[:-1] if rest.endswith(("o", "i")) else rest):
            if form in self.stems:  # combining vowels: nephro-, ossi-
                return self.stems[form], 1.0
        for form in _completions(rest):
            found = lookup(form)
            if found:
                return found, 1.0 if form == rest else COMPLETED_FACTOR
        if split:
            for i in range(self.config.min_stem, len(rest) - self.config.min_stem + 1):
                left = self._stem(rest[:i], lookup, joiner, split=False)
                right = left and self._stem(rest[i:], lookup, joiner, split=False)
                if left and right:
                    return joiner.join((left[0], right[0])), SPLIT_FACTOR * left[1] * right[1]
        return None


def _completions(stem: str) -> tuple[str, ...]:
    """English words a stem may stand for (*trache* -> *trachea*)."""
    return (stem, *(stem + e for e in ("a", "e", "o", "y", "us", "um", "is", "ia")))


def _rest(text: str, part: str, suffix: bool, max_len: int) -> str | None:
    """``text`` minus ``part`` at its start (``suffix``) or end, when 1..max_len chars remain."""
    if suffix and text.startswith(part):
        rest = text[len(part):]
    elif not suffix and text.endswith(part):
        rest = text[: len(text) - len(part)]
    else:
        return None
    return rest if 0 < len(rest) <= max_len else None
