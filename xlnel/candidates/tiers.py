"""Name sources in tiers: candidates of generated names (translated, composed, corpus ...) as a
fallback behind the names taken as given (knowledge base, annotations).

A generated dictionary reaches many more spans than a curated one, most of them everyday words;
where a given name already matches a span well, its generated names add competitors rather than
recall. :func:`tier_hits` keeps a generated name's hit only when the span's best given-name hit
scores below ``fallback``, only when its own score reaches ``generated_min_score``, and only when
the name has ``generated_min_chars`` letters or digits: short generated names are mostly function
and everyday words that a loose rendering tied to a concept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xlnel.dictionary.dictionary import GENERATED_SOURCES

__all__ = ["tier_hits"]

#: A hit: ``(concept id, name, matcher score, source, entry score)`` or any tuple whose second,
#: third and fourth items are the name, the score and the source.
Hit = TypeVar("Hit", bound=tuple)


def tier_hits(hits: Sequence[Hit], fallback: float | None = None,
              generated_min_score: float | None = None,
              generated_min_chars: int | None = None) -> list[Hit]:
    """The hits of one span text with the generated names' hits kept only as a fallback.

    Args:
        hits: The span's hits; item 1 is the name, item 2 the matcher score, item 3 the
            entry's source.
        fallback: Generated names' hits are dropped when a hit of a given name (any source not
            in :data:`~xlnel.dictionary.dictionary.GENERATED_SOURCES`, unknown included) scores
            at least this; ``None``: never.
        generated_min_score: Generated names' hits scoring below this are dropped; ``None``:
            none is.
        generated_min_chars: Generated names with fewer letters and digits than this are
            dropped; ``None``: none is.

    Returns:
        The kept hits, in their order.
    """
    if fallback is None and generated_min_score is None and generated_min_chars is None:
        return list(hits)
    best_given = max((h[2] for h in hits if h[3] not in GENERATED_SOURCES), default=None)
    if fallback is not None and best_given is not None and best_given >= fallback:
        return [h for h in hits if h[3] not in GENERATED_SOURCES]
    min_score = -1.0 if generated_min_score is None else generated_min_score
    min_chars = generated_min_chars or 0
    return [h for h in hits if h[3] not in GENERATED_SOURCES
            or (h[2] >= min_score and _chars(h[1]) >= min_chars)]


def _chars(name: str) -> int:
    return sum(ch.isalnum() for ch in name)
