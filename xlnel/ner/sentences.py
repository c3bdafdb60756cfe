"""Sentence splitting that keeps exact character offsets into the original text.

The tagger reads one sentence (or one chunk of a long sentence) at a time. The splitter is
deliberately simple and language-neutral, since patient posts ignore punctuation rules anyway:

* a line break always ends a sentence;
* ``.``, ``!``, ``?`` (and runs of them, ``?!``, ``...``) end a sentence when whitespace or the
  end of the text follows, so ``5.7``, ``M.S`` and ``e.g.,`` stay inside one sentence;
* leading and trailing whitespace is left out of every sentence, and blank sentences are
  dropped.
"""

from __future__ import annotations

import re

__all__ = ["split_sentences"]

# A run of terminators followed by whitespace (or the end), or a line break of any kind.
_BOUNDARY_RE = re.compile(r"[.!?\u061f\u06d4\u3002]+(?=\s|$)|[\n\r\v\f\u2028\u2029\u0085]")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Split text into sentences.

    Args:
        text: Original text.

    Returns:
        ``(start, end)`` character offsets of the non-blank sentences, in order; each
        ``text[start:end]`` has no leading or trailing whitespace and keeps its terminator.
    """
    out: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        _append_trimmed(text, start, match.end(), out)
        start = match.end()
    _append_trimmed(text, start, len(text), out)
    return out


def _append_trimmed(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        out.append((start, end))
