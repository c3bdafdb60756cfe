"""Candidate span generation: every short run of words that could be a mention.

The high-recall matcher compares every span of one to ``max_words`` words with the dictionary,
so the spans produced here bound the recall of the whole linker. The rules:

* A word is a run of word characters (niqqud and accents included). An apostrophe or geresh
  between letters stays inside it (``צ'יפס``, ``Crohn's``), and so does a double quote or
  gershayim before the last letter (``ד"ר``); a geresh after ``ג ז צ ת`` ends a word
  (``גלוקופאג'``). Other punctuation, hyphens and slashes separate words.
* A span covers the original text from its first word to its last, separators included
  (``alpha-methyldopa``). It never crosses a line break or ``! ? ;``; it crosses ``. , : ( )``
  only inside a token without whitespace (``5,7-DHT``, ``M.S``), and a bracket opened inside a
  span is closed when the closing bracket follows (``PGE(2)``).
* No span starts or ends with a stop word, unless the word is glued to its neighbour by a
  hyphen (``A-86929``, ``follow-up``) or written in capitals (``NO``: nitric oxide). No span is
  made only of numbers. A word ending in a possessive ``'s`` or a geresh also ends a span
  without it.
* Hebrew attaches prepositions, conjunctions and the article to the next word (``ולחולי``,
  "and to the patients of"). For a span whose first word may start with such a prefix, the
  variants without it are generated as well (``לחולי``, ``חולי``); ``Span.stripped_prefix``
  holds the removed letters. A word that is one of these letters alone, or one of them glued
  to a stop word (``והוא``), counts as a stop word.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from xlnel.normalization import hebrew_rules, normalize_string
from xlnel.stopwords import load_stopwords
from xlnel.types import Span

__all__ = ["HEBREW_PREFIXES", "HEBREW_PREFIX_LETTERS", "generate_spans", "tokenize"]

# Word characters plus the combining marks that str.isalnum() rejects (Latin accents, niqqud).
_W = r"[\w\u0300-\u036f\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]"
# Inside a word: an apostrophe or geresh before more letters (צ'יפס, Crohn's), or a double quote
# or gershayim before the last letter only (ד"ר, ארה"ב): a double quote followed by several
# letters opens a quotation (ו"שושנה", ה"סוכר"עלה) and separates words. A geresh after ג ז צ ת
# (foreign sounds: גלוקופאג') belongs to the word.
_WORD_RE = re.compile(rf"{_W}+(?:['’׳]{_W}+|[\"״”“]{_W}(?!{_W}))*(?:(?<=[גזצתץ])['’׳](?!{_W}))?")
# Punctuation that separates spans. Inside a token (no whitespace around it) the weak ones are
# part of names (5,7-DHT, PGE(2), M.S) and do not.
_STRONG_BREAK_RE = re.compile(r"[\n\r\v\f\u2028\u2029!?;]")
_WEAK_BREAK_RE = re.compile(r"[.,:()\[\]{}]")
_SENTENCE_END_RE = re.compile(r"[\n\r\v\f\u2028\u2029.!?]")
_HYPHENS = "-‐‑‒–—־/"
_BRACKETS = {"(": ")", "[": "]"}

#: With ``compound_words``, the most word parts of a span, per word of ``max_words``.
COMPOUND_PARTS = 3

HEBREW_PREFIX_LETTERS = "והבלמשכ"
"""Hebrew letters that attach to the next word as a one-letter prefix (and, the, in, to, from,
that, as)."""


def _hebrew_prefixes() -> frozenset[str]:
    """Prefix sequences of Hebrew grammar: [ו] [ש|כש|מש] [ב|כ|ל|מ] [ה]."""
    slots = (("", "ו"), ("", "ש", "כש", "מש"), ("", "ב", "כ", "ל", "מ"), ("", "ה"))
    return frozenset("".join(parts) for parts in itertools.product(*slots) if any(parts))


HEBREW_PREFIXES: frozenset[str] = _hebrew_prefixes()
"""Letter sequences stripped from the front of a Hebrew word to form prefix variants."""

_MIN_STEM_LETTERS = 2

# How two neighbouring words are joined.
_BREAK, _LOOSE, _TIGHT = 0, 1, 2


@dataclass(frozen=True)
class _WordFacts:
    """What span generation needs to know about a word, independent of where it occurs.

    ``starts`` holds ``(offset, stripped prefix, is stop word)`` for every way a span may begin
    with the word, ``ends`` the offsets it may end at (``Crohn's`` also ends before ``'s``);
    offsets are relative to the word.
    """

    stop: bool
    numeric: bool
    upper: bool
    starts: tuple[tuple[int, str, bool], ...]
    ends: tuple[int, ...]


@dataclass(frozen=True)
class _Word:
    """A token: its offset, its facts, and whether it is an acronym exempt from stop words."""

    start: int
    facts: _WordFacts
    exempt: bool


def tokenize(text: str) -> list[tuple[int, int]]:
    """Split text into words.

    Args:
        text: Original text.

    Returns:
        ``(start, end)`` character offsets of the words, in order.
    """
    return [match.span() for match in _WORD_RE.finditer(text)]


def _is_stop(norm: str, stopwords: frozenset[str], hebrew: bool) -> bool:
    if not norm or norm in stopwords:
        return True
    # Hebrew glues one-letter prefixes onto function words too (והוא, ושל, מהם), and a prefix
    # cut off by a quote or hyphen (ה-A1C, ו"שושנה") is no word of its own.
    return (
        hebrew and norm[0] in HEBREW_PREFIX_LETTERS and (len(norm) == 1 or norm[1:] in stopwords)
    )


def _prefix_variants(word: str) -> list[tuple[int, str]]:
    """Offsets after every Hebrew prefix of the word that leaves a stem of 2+ letters."""
    # letters with their offsets, skipping niqqud and inner quotes
    letters = [
        (ch, i) for i, ch in enumerate(word) if ch.isalnum() and unicodedata.category(ch)[0] != "M"
    ]
    head = "".join(letter for letter, _ in letters[:5])
    variants = []
    for size in range(1, min(len(head), len(letters) - _MIN_STEM_LETTERS) + 1):
        prefix = head[:size]
        if prefix in HEBREW_PREFIXES and letters[size][0].isalpha():
            variants.append((letters[size][1], prefix))
    return variants


def _word_ends(word: str) -> tuple[int, ...]:
    """The word's end, and its end without a possessive ``'s`` or a trailing geresh."""
    size = len(word)
    if size > 3 and word[-2] in "'’" and word[-1] in "sS":
        return (size - 2, size)
    if size > 2 and word[-1] in "'’׳":
        return (size - 1, size)
    return (size,)


@lru_cache(maxsize=1 << 16)
def _word_facts(
    word: str, lang: str, stopwords: frozenset[str], strip_prefixes: bool
) -> _WordFacts:
    """Facts of a word; cached, as documents repeat their words."""
    hebrew = hebrew_rules(lang)
    norm = normalize_string(word, lang)
    stop = _is_stop(norm, stopwords, hebrew)
    starts: list[tuple[int, str, bool]] = [(0, "", stop)]
    # A function word is a word of its own (שלום, כמו); its prefix variants would be noise.
    if strip_prefixes and norm not in stopwords and word[0] in HEBREW_PREFIX_LETTERS:
        for offset, prefix in _prefix_variants(word):
            stem = normalize_string(word[offset:], lang)
            starts.append((offset, prefix, _is_stop(stem, stopwords, hebrew)))
    numeric = norm.replace(" ", "").isnumeric()
    upper = not hebrew and word.isupper()
    return _WordFacts(stop, numeric, upper, tuple(starts), _word_ends(word))


def _junction(gap: str) -> int:
    """How two words separated by ``gap`` are joined: ``_BREAK``, ``_LOOSE`` or ``_TIGHT``."""
    if _STRONG_BREAK_RE.search(gap):
        return _BREAK
    if not gap or not any(ch.isspace() for ch in gap):
        return _TIGHT
    if _WEAK_BREAK_RE.search(gap):
        return _BREAK
    return _TIGHT if gap[0] in _HYPHENS else _LOOSE


def _close_brackets(text: str, start: int, end: int) -> int:
    """Extend a span that opens a bracket to the closing bracket right after it (PGE(2))."""
    if end < len(text) and text[end] in ")]":
        for opening, closing in _BRACKETS.items():
            if text[end] == closing and text.count(opening, start, end) > text.count(
                closing, start, end
            ):
                return end + 1
    return end


def _analyse(
    text: str, lang: str, stopwords: frozenset[str], strip_prefixes: bool
) -> tuple[list[_Word], list[int]]:
    """Tokenise and describe the words and the junctions between neighbours."""
    bounds = tokenize(text)
    junctions = [
        _junction(text[left[1] : right[0]]) for left, right in zip(bounds, bounds[1:], strict=False)
    ]
    words = []
    previous_end = 0
    for index, (start, end) in enumerate(bounds):
        word = text[start:end]
        facts = _word_facts(word, lang, stopwords, strip_prefixes)
        # Words in capitals are acronyms (NO = nitric oxide, IF = ifosfamide), except a lone
        # capital at the start of a sentence (the article A) and the pronoun I.
        exempt = facts.upper and (
            len(word) > 1
            or not (
                index == 0
                or word == "I"
                or _SENTENCE_END_RE.search(text, previous_end, start) is not None
            )
        )
        words.append(_Word(start, facts, exempt))
        previous_end = end
    return words, junctions


def _spans_from(
    text: str, words: list[_Word], junctions: list[int], first: int, last: int
) -> list[Span]:
    """The spans over ``words[first:last + 1]`` that the stop-word and number rules allow."""
    head, tail = words[first], words[last]
    if first == last:
        head_ok = head.exempt
    else:
        head_ok = head.exempt or junctions[first] == _TIGHT
        tail_ok = not tail.facts.stop or tail.exempt or junctions[last - 1] == _TIGHT
        if not tail_ok:
            return []
    if all(word.facts.numeric for word in words[first : last + 1]):
        return []
    spans = []
    for offset, prefix, stop in head.facts.starts:
        if stop and not head_ok:
            continue
        start = head.start + offset
        for relative_end in tail.facts.ends:
            end = _close_brackets(text, start, tail.start + relative_end)
            spans.append(Span(start, end, text[start:end], prefix))
    return spans


def generate_spans(
    text: str,
    lang: str = "en",
    max_words: int = 3,
    stopwords: frozenset[str] | None = None,
    strip_prefixes: bool | None = None,
    compound_words: bool = False,
) -> list[Span]:
    """Generate the candidate spans of a text.

    Args:
        text: Original document text.
        lang: Language code; ``"he"`` (or ``"iw"``) enables the Hebrew rules.
        max_words: Most words in a span.
        stopwords: Normalised stop words; ``None`` loads the list of ``lang``.
        strip_prefixes: Whether to add Hebrew prefix-stripped variants; ``None`` means yes for
            Hebrew and no for other languages.
        compound_words: Count a run of words joined without whitespace (``low-molecular-weight``,
            ``A2A/A1``) as one word toward ``max_words``, so *low-molecular-weight heparin* is
            a span of two words; a span still holds at most ``COMPOUND_PARTS * max_words``
            word parts.

    Returns:
        Spans sorted by ``(start, end)``, without duplicates; ``span.text`` is always
        ``text[span.start:span.end]``.

    Raises:
        ValueError: If ``max_words`` is below 1.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    if stopwords is None:
        stopwords = load_stopwords(lang)
    if strip_prefixes is None:
        strip_prefixes = hebrew_rules(lang)
    words, junctions = _analyse(text, lang, stopwords, strip_prefixes)
    spans: dict[tuple[int, int], Span] = {}
    max_parts = COMPOUND_PARTS * max_words if compound_words else max_words
    for first in range(len(words)):
        last, size = first, 1
        while True:
            for span in _spans_from(text, words, junctions, first, last):
                spans.setdefault((span.start, span.end), span)
            if last - first + 1 >= max_parts or last >= len(junctions):
                break
            if junctions[last] == _BREAK:
                break
            # a word after whitespace starts a new word; one glued on extends the current one
            loose = not compound_words or junctions[last] == _LOOSE
            if loose and size >= max_words:
                break
            size += loose
            last += 1
    return [spans[key] for key in sorted(spans)]
