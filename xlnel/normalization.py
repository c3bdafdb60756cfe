"""Text normalisation shared by dictionary building, span generation and matching.

The paper normalises both the dictionary names and the document text with case folding and
delimiter removal. This module does that, language-aware, and keeps a character offset map so
that a match found in normalised text can be reported at its exact place in the original.

Steps, applied to every character cluster (a character and the combining and format marks
that follow it):

1. Unicode NFKC (which may expand one character into several, e.g. the ligature ``ﬁ``).
2. Case folding (``str.casefold``), then NFKC again, as in Unicode's NFKC_Casefold.
3. Invisible format characters (category ``Cf``: bidi marks, soft hyphen, zero-width joiners)
   are dropped.
4. Hebrew only (``lang`` ``"he"`` or ``"iw"``), applied to Hebrew characters only so that Latin
   words inside Hebrew text follow the generic rules:

   * niqqud and cantillation marks (combining marks in U+0591..U+05C7) are removed;
   * final letters ``ך ם ן ף ץ`` become ``כ מ נ פ צ``, so a word and its suffixed form share a
     stem (``סם`` / ``סמים``);
   * a geresh, gershayim or quote variant between two Hebrew letters is removed. Hebrew writes
     abbreviations and foreign sounds with them (``ד"ר``, ``צ'יפס``), and writers use the
     proper signs, ASCII quotes and typographic quotes interchangeably, or leave them out;
     removing them (rather than unifying to one sign) also makes the unpunctuated spelling
     (``דר``, ``ציפס``) compare equal. A quote that is not between two Hebrew letters is an
     ordinary delimiter.

5. Punctuation, delimiters and whitespace (Unicode categories ``P*``, ``Z*``, ``Cc``, ``Sk`` and
   ``| ~``) become a space; runs of spaces collapse to one and both ends are stripped.

Symbols that can carry meaning in biomedical names (``+ ° < > =``) are kept; ``%`` is
punctuation (``Po``) and goes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["NormalizedText", "fold_latin_marks", "hebrew_rules", "normalize", "normalize_string"]

_HEBREW_LANGS = frozenset({"he", "iw"})
_FINAL_LETTERS = {"ך": "כ", "ם": "מ", "ן": "נ", "ף": "פ", "ץ": "צ"}
_HEBREW_QUOTES = frozenset("׳״'\"`’‘”“")
_EXTRA_DELIMITERS = frozenset("|~")

# Characters for which the fast path of normalize_string is exact: ASCII, Latin-1 letters, the
# Hebrew block and a few common typographic signs, none of which NFKC changes except into
# delimiters.
# Outside Hebrew rules the niqqud marks are kept, and NFKC may reorder them, so they leave the
# fast path there.
_SIMPLE_COMMON = r"\x00-\x7f\u00c0-\u00ff\u05c8-\u05f4\u00a0\u200e\u200f\u2010-\u2027\u2032\u2033"
_SIMPLE_HEBREW_RE = re.compile(rf"[{_SIMPLE_COMMON}\u0591-\u05c7]*")
_SIMPLE_OTHER_RE = re.compile(rf"[{_SIMPLE_COMMON}]*")
_HEBREW_QUOTE_RE = re.compile(r"(?<=[\u05d0-\u05ea])[׳״'\"`’‘”“](?=[\u05d0-\u05ea])")
_HEBREW_QUOTE_TO_SPACE = {ord(q): " " for q in _HEBREW_QUOTES}


@dataclass(frozen=True)
class NormalizedText:
    """Normalised text with a map back to the original string.

    Attributes:
        text: The normalised text.
        offsets: ``offsets[i]`` is the index in the original string of the character that
            produced normalised character ``i``; ``offsets[len(text)]`` is the length of the
            original, so ``len(offsets) == len(text) + 1``.
    """

    text: str
    offsets: tuple[int, ...]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map a slice of the normalised text to a slice of the original text.

        Args:
            start: Start of the slice in the normalised text.
            end: End (exclusive) of the slice in the normalised text.

        Returns:
            ``(original_start, original_end)`` covering the characters that produced
            ``text[start:end]``.

        Raises:
            ValueError: If the slice is not within ``0 <= start <= end <= len(text)``.
        """
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(
                f"slice [{start}:{end}] is outside the normalised text of length "
                f"{len(self.text)}; need 0 <= start <= end <= {len(self.text)}"
            )
        return self.offsets[start], self.offsets[end]


def hebrew_rules(lang: str) -> bool:
    """Whether the Hebrew normalisation rules apply to a language code.

    Args:
        lang: Language code such as ``"he"``, ``"iw"`` or ``"en"`` (case-insensitive).

    Returns:
        ``True`` for Hebrew.
    """
    return lang.lower() in _HEBREW_LANGS


def _is_hebrew_letter(ch: str) -> bool:
    return "\u05d0" <= ch <= "\u05ea"


def _is_hebrew_mark(ch: str) -> bool:
    return "\u0591" <= ch <= "\u05c7" and unicodedata.category(ch) == "Mn"


@lru_cache(maxsize=65536)
def _is_delimiter(ch: str) -> bool:
    category = unicodedata.category(ch)
    return (
        category[0] in "PZ" or category in ("Cc", "Sk") or ch.isspace() or ch in _EXTRA_DELIMITERS
    )


@lru_cache(maxsize=65536)
def _cluster_chars(cluster: str, hebrew: bool) -> str:
    """Steps 1-4 (without the quote rule) for one character cluster."""
    # format characters go first so that they do not block composition (e + RLM + accent)
    cluster = "".join(ch for ch in cluster if unicodedata.category(ch) != "Cf")
    out = []
    # NFKC again after case folding, which can produce unnormalised sequences (İ -> i + dot)
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", cluster).casefold())
    for ch in folded:
        if unicodedata.category(ch) == "Cf" or (hebrew and _is_hebrew_mark(ch)):
            continue
        out.append(_FINAL_LETTERS.get(ch, ch) if hebrew else ch)
    return "".join(out)


def _clusters(text: str) -> list[tuple[int, int]]:
    """Split text into (start, end) clusters: a character, its combining and format marks."""
    bounds: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(text)):
        category = unicodedata.category(text[i])
        if category[0] != "M" and category != "Cf":
            bounds.append((start, i))
            start = i
    if text:
        bounds.append((start, len(text)))
    return bounds


def _expand(text: str, hebrew: bool) -> tuple[list[str], list[int]]:
    """Apply the per-cluster steps, keeping the source index of every output character."""
    chars: list[str] = []
    sources: list[int] = []
    for start, end in _clusters(text):
        out = _cluster_chars(text[start:end], hebrew)
        chars.extend(out)
        sources.extend([start] * len(out))
    return chars, sources


def _drops_quote(chars: list[str], k: int) -> bool:
    """Whether chars[k] is a quote between two Hebrew letters (removed under Hebrew rules)."""
    return (
        chars[k] in _HEBREW_QUOTES
        and 0 < k < len(chars) - 1
        and _is_hebrew_letter(chars[k - 1])
        and _is_hebrew_letter(chars[k + 1])
    )


def normalize(text: str, lang: str = "en") -> NormalizedText:
    """Normalise text and keep the map from normalised to original offsets.

    See the module docstring for the steps.

    Args:
        text: Original text.
        lang: Language code; ``"he"`` (or ``"iw"``) adds the Hebrew rules, any other code gets
            the generic ones.

    Returns:
        The normalised text and its offsets into ``text``.
    """
    hebrew = hebrew_rules(lang)
    chars, sources = _expand(text, hebrew)
    out: list[str] = []
    offsets: list[int] = []
    pending_space: int | None = None
    for k, ch in enumerate(chars):
        if hebrew and _drops_quote(chars, k):
            continue
        if _is_delimiter(ch):
            if out and pending_space is None:
                pending_space = sources[k]
            continue
        if pending_space is not None:
            out.append(" ")
            offsets.append(pending_space)
            pending_space = None
        out.append(ch)
        offsets.append(sources[k])
    offsets.append(len(text))
    return NormalizedText("".join(out), tuple(offsets))


@lru_cache(maxsize=8)
def _simple_table(hebrew: bool) -> dict[int, str | None]:
    """``str.translate`` table for the fast path: steps 3-5 on ASCII and Hebrew-block text."""
    table: dict[int, str | None] = {}
    chars = [chr(c) for c in range(0x80)] + [chr(c) for c in range(0x0591, 0x05F5)]
    chars += ["\u00a0", "\u200e", "\u200f", "\u2032", "\u2033"]
    chars += [chr(c) for c in range(0x2010, 0x2028)]
    for ch in chars:
        if unicodedata.category(ch) == "Cf" or (hebrew and _is_hebrew_mark(ch)):
            table[ord(ch)] = None
        elif hebrew and ch in _FINAL_LETTERS:
            table[ord(ch)] = _FINAL_LETTERS[ch]
        elif _is_delimiter(ch) and not (hebrew and ch in _HEBREW_QUOTES):
            table[ord(ch)] = " "
    return table


def normalize_string(text: str, lang: str = "en") -> str:
    """Normalise text without computing offsets; equal to ``normalize(text, lang).text``.

    This is the function to use on dictionary names: text made of ASCII, Latin-1 letters, Hebrew
    letters, niqqud and common typographic signs takes a fast path of a few C-level string
    operations.

    Args:
        text: Original text.
        lang: Language code, as for :func:`normalize`.

    Returns:
        The normalised text.
    """
    hebrew = hebrew_rules(lang)
    simple = _SIMPLE_HEBREW_RE if hebrew else _SIMPLE_OTHER_RE
    if not simple.fullmatch(text):
        return normalize(text, lang).text
    folded = text.casefold().translate(_simple_table(hebrew))
    if hebrew:
        folded = _HEBREW_QUOTE_RE.sub("", folded)
        # quotes not between two Hebrew letters are delimiters
        folded = folded.translate(_HEBREW_QUOTE_TO_SPACE)
    return " ".join(folded.split())


@lru_cache(maxsize=4096)
def _is_latin(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("LATIN ")


def fold_latin_marks(text: str) -> str:
    """Drop the combining marks of Latin letters (``é`` -> ``e``, ``ü`` -> ``u``), keeping
    those of other scripts (Japanese voicing marks, Devanagari vowel signs, Hebrew niqqud).

    Not part of :func:`normalize`: accents tell words apart in many languages, and offsets
    would move. A lookup may fold both sides when the accents of its names are unreliable
    (see :class:`xlnel.analysis.lookup.LookupForm`).
    """
    if text.isascii():
        return text
    kept: list[str] = []
    latin = False
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            if latin:
                continue
        else:
            latin = _is_latin(ch)
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))
