"""One concept per text within a document: a linked text's other occurrences are linked too.

An abstract names its subject several times in the same words, and its annotators mark every
occurrence with the same concept; the filter, scoring each occurrence in its own context, may
pass one and miss another. :func:`link_repeats` gives every whole-word occurrence of a linked
text (case-insensitive) that no link overlaps the concept of that text's best-scored link.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import replace

from xlnel.types import Link

__all__ = ["link_repeats"]


def _occurrences(text: str, mention: str) -> list[tuple[int, int]]:
    """Offsets of the whole-word, case-insensitive occurrences of ``mention`` in ``text``."""
    pattern = re.compile(r"(?<!\w)" + re.escape(mention) + r"(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def _overlaps(starts: list[int], ends: list[int], s: int, e: int) -> bool:
    """Whether ``[s, e)`` overlaps one of the sorted, non-overlapping spans."""
    i = bisect.bisect_left(starts, s)
    return (i > 0 and ends[i - 1] > s) or (i < len(starts) and starts[i] < e)


def link_repeats(text: str, links: Sequence[Link], min_chars: int = 3) -> tuple[Link, ...]:
    """``links`` plus a link of every unlinked occurrence of a linked text.

    Args:
        text: The document text.
        links: Its links, not overlapping one another.
        min_chars: Texts shorter than this are not spread (a two-letter token is too often
            something else).

    Returns:
        The links and the new ones, sorted by offsets. Each new link copies the
        highest-scored link of its text (case-folded), offsets and text aside; an occurrence
        that overlaps any link (old or new) is left alone, longer texts being spread first.
    """
    best: dict[str, Link] = {}
    for link in links:
        key = link.text.casefold()
        held = best.get(key)
        if len(link.text.strip()) >= min_chars and (
                held is None or (link.score or 0.0) > (held.score or 0.0)):
            best[key] = link
    kept = sorted(links, key=lambda link: (link.start, link.end))
    starts = [link.start for link in kept]
    ends = [link.end for link in kept]
    out = list(kept)
    for source in sorted(best.values(), key=lambda link: (-len(link.text), link.start)):
        for s, e in _occurrences(text, source.text):
            if _overlaps(starts, ends, s, e):
                continue
            i = bisect.bisect_left(starts, s)
            starts.insert(i, s)
            ends.insert(i, e)
            out.append(replace(source, start=s, end=e, text=text[s:e]))
    return tuple(sorted(out, key=lambda link: (link.start, link.end)))
