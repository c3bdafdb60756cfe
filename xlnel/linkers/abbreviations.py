"""Abbreviations defined in a document, linked as their long forms are.

A text that writes "long form (SF)" defines the short form SF for the rest of the document.
:func:`find_abbreviations` finds such definitions with the algorithm of Schwartz and Hearst
(2003): a short form of 2 to 10 characters in parentheses, at most two words, starting with a
letter or digit; its long form is the shortest run of the preceding words in which the short
form's letters and digits occur in order, the first of them at the start of a word.

:func:`link_abbreviations` gives every whole-word occurrence of a short form the concept of
its long form's link: a document names a concept by its abbreviation after defining it once,
and an abbreviation alone rarely matches a dictionary name.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace

from xlnel.types import Link

_PARENS = re.compile(r"\(([^()]{1,12})\)")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Abbreviation:
    """A short form defined by the long form just before it (character offsets)."""

    long_start: int
    long_end: int
    short_start: int
    short_end: int


def _short_form(inner: str) -> tuple[int, int] | None:
    """Offsets in ``inner`` of a plausible short form (the part before ``;`` or ``,``)."""
    part = re.split(r"[;,]", inner, maxsplit=1)[0]
    start = len(part) - len(part.lstrip())
    text = part.strip()
    if not 2 <= len(text) <= 10 or len(text.split()) > 2:
        return None
    if not text[0].isalnum() or not any(ch.isalpha() for ch in text):
        return None
    return start, start + len(text)


def _long_form_start(text: str, word_starts: list[int], end: int, short: str) -> int | None:
    """Start of the long form that ends at ``end`` and defines ``short``, or ``None``.

    ``word_starts`` are the offsets of the text's words (runs of non-space), in order.
    """
    before = bisect.bisect_left(word_starts, end)  # the words that start before ``end``
    reach = min(len(short) + 5, 2 * len(short))
    if not before:
        return None
    begin = word_starts[max(0, before - reach)]
    window = text[begin:end].lower()
    s, i = len(short) - 1, len(window) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        # the first character of the short form must start a word of the long form
        while i >= 0 and (window[i] != c or (s == 0 and i > 0 and window[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    start = window.rfind(" ", 0, i + 1) + 1
    long_form = window[start:]
    if len(long_form) <= len(short) or short.lower() in long_form.split():
        return None
    return begin + start


def find_abbreviations(text: str) -> list[Abbreviation]:
    """Definitions "long form (SF)" in a text, in order of appearance."""
    out = []
    word_starts = [w.start() for w in _WORD.finditer(text)]
    for m in _PARENS.finditer(text):
        found = _short_form(m.group(1))
        if found is None:
            continue
        s0, s1 = m.start(1) + found[0], m.start(1) + found[1]
        end = m.start()
        while end > 0 and text[end - 1].isspace():
            end -= 1
        start = _long_form_start(text, word_starts, end, text[s0:s1])
        if start is not None:
            out.append(Abbreviation(start, end, s0, s1))
    return out


def _occurrences(text: str, short: str) -> list[tuple[int, int]]:
    pattern = re.compile(r"(?<!\w)" + re.escape(short) + r"(?!\w)")
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def link_abbreviations(text: str, links: tuple[Link, ...] | list[Link]) -> tuple[Link, ...]:
    """``links`` plus a link of every occurrence of a defined short form, with the concept of
    the link of its long form (the longest link ending where the long form ends and lying
    inside it). An occurrence already linked takes the long form's concept; one overlapping
    another link is left alone. Links come back sorted by offsets.
    """
    by_span = {(link.start, link.end): link for link in links}
    for abbr in find_abbreviations(text):
        inside = [link for link in links if link.end == abbr.long_end
                  and link.start >= abbr.long_start]
        if not inside:
            continue
        source = min(inside, key=lambda link: link.start)
        short = text[abbr.short_start:abbr.short_end]
        for start, end in _occurrences(text, short):
            held = by_span.get((start, end))
            if held is None and any(s < end and start < e for s, e in by_span):
                continue
            by_span[(start, end)] = replace(source, start=start, end=end, text=short)
    return tuple(sorted(by_span.values(), key=lambda link: (link.start, link.end)))
