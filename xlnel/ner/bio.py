"""BIO tags over words: from gold entities to word tags and back to character spans.

Words are those of :func:`xlnel.candidates.spans.tokenize` (so a tagger and the all-spans
enumeration agree on word boundaries). Gold entities are aligned to whole words:

* an entity covers every word it overlaps, even in part: ``B-<type>`` on the first word,
  ``I-<type>`` on the others; an entity that touches no word (punctuation only) is dropped;
* an entity that starts inside its first word (Hebrew one-letter prefixes: gold ``סוכרת``
  inside ``בסוכרת``) is tagged on the whole word, and the number of characters it skips is
  kept as the word's *prefix length* (up to ``max_prefix``; a longer skip counts as 0, the
  whole word), which the tagger learns to predict for ``B`` words;
* an entity that ends inside its last word is extended to the word's end;
* of gold entities that share a word, the longest is kept (then the earlier one); the others
  are dropped and counted.

Decoding is lenient: ``I-<type>`` after ``O`` or after another type starts a new mention.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from xlnel.types import Document, Link, Span

__all__ = ["OUTSIDE", "UNTYPED", "Alignment", "bio_labels", "decode_bio", "encode_bio",
           "entity_types"]

OUTSIDE = "O"
UNTYPED = "Mention"
"""The type given to gold entities that have none."""


@dataclass(frozen=True)
class Alignment:
    """Word tags of one document.

    Attributes:
        tags: One BIO tag per word.
        prefixes: Characters to skip at the start of each ``B`` word (0 for other words).
        dropped_overlaps: Gold entities left out because a longer one shares a word.
        dropped_empty: Gold entities left out because they cover no word.
    """

    tags: list[str]
    prefixes: list[int]
    dropped_overlaps: int = 0
    dropped_empty: int = 0


def entity_types(documents: Sequence[Document]) -> list[str]:
    """The sorted entity types of the documents' gold entities (``Mention`` for untyped)."""
    return sorted({e.type or UNTYPED for d in documents for e in d.entities})


def bio_labels(types: Sequence[str]) -> list[str]:
    """``O`` then ``B-t``, ``I-t`` for each type, in the given order."""
    labels = [OUTSIDE]
    for t in types:
        labels += [f"B-{t}", f"I-{t}"]
    return labels


def _word_range(words: Sequence[tuple[int, int]], ends: Sequence[int],
                start: int, end: int) -> tuple[int, int] | None:
    """Indices of the first and last words overlapping ``[start, end)``, or None."""
    first = bisect.bisect_right(ends, start)  # first word ending after start
    last = first
    while last < len(words) and words[last][0] < end:
        last += 1
    return (first, last - 1) if last > first else None


def encode_bio(words: Sequence[tuple[int, int]], entities: Sequence[Link],
               max_prefix: int = 4) -> Alignment:
    """Tag words with the gold entities (see the module docstring for the alignment rules).

    Args:
        words: ``(start, end)`` offsets of the words, in order.
        entities: Gold entities of the document.
        max_prefix: Longest prefix (in characters) an entity may skip in its first word.

    Returns:
        The word tags, the prefix lengths and the counts of dropped entities.
    """
    ends = [e for _, e in words]
    ranges: list[tuple[int, int, Link]] = []
    empty = 0
    for ent in entities:
        found = _word_range(words, ends, ent.start, ent.end)
        if found is None:
            empty += 1
        else:
            ranges.append((found[0], found[1], ent))
    ranges.sort(key=lambda r: (-(r[2].end - r[2].start), r[2].start))
    taken = [False] * len(words)
    tags = [OUTSIDE] * len(words)
    prefixes = [0] * len(words)
    overlaps = 0
    for first, last, ent in ranges:
        if any(taken[first:last + 1]):
            overlaps += 1
            continue
        label = ent.type or UNTYPED
        for i in range(first, last + 1):
            taken[i] = True
            tags[i] = f"I-{label}"
        tags[first] = f"B-{label}"
        skip = ent.start - words[first][0]
        prefixes[first] = skip if 0 < skip <= max_prefix else 0
    return Alignment(tags, prefixes, overlaps, empty)


def decode_bio(text: str, words: Sequence[tuple[int, int]], tags: Sequence[str],
               prefixes: Sequence[int] | None = None) -> list[Span]:
    """Mention spans from word tags.

    Args:
        text: The document text.
        words: ``(start, end)`` offsets of the words.
        tags: One BIO tag per word.
        prefixes: Characters to skip in each mention's first word (at least one character of
            the word is always kept); ``None`` = none.

    Returns:
        Spans sorted by start, ``span.text == text[span.start:span.end]``; the skipped
        characters are in ``span.stripped_prefix``.

    Raises:
        ValueError: If ``words``, ``tags`` and ``prefixes`` differ in length.
    """
    if len(tags) != len(words) or (prefixes is not None and len(prefixes) != len(words)):
        raise ValueError(f"decode_bio needs one tag (and prefix) per word: {len(words)} words, "
                         f"{len(tags)} tags, {None if prefixes is None else len(prefixes)} "
                         "prefixes")
    runs: list[tuple[int, int]] = []
    current: str | None = None
    for i, tag in enumerate(tags):
        kind, _, label = tag.partition("-")
        if kind == "I" and current == label:
            runs[-1] = (runs[-1][0], i)
        elif kind in ("B", "I"):
            runs.append((i, i))
            current = label
        else:
            current = None
    spans = []
    for first, last in runs:
        word_start, word_end = words[first]
        skip = 0 if prefixes is None else max(0, min(prefixes[first],
                                                      word_end - word_start - 1))
        start, end = word_start + skip, words[last][1]
        spans.append(Span(start, end, text[start:end], text[word_start:start]))
    return spans
