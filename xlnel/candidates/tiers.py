"""Name sources in tiers: candidates of generated names (translated, composed, corpus ...) as a
fallback behind the names taken as given (knowledge base, annotations).

A generated dictionary reaches many more spans than a curated one, most of them everyday words;
where a given name already matches a span well, its generated names add competitors rather than
recall. :func:`tier_hits` keeps a generated name's hit only when the span's best given-name hit
scores below ``fallback``, and only when its own score reaches ``generated_min_score``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xlnel.dictionary.dictionary import GENERATED_SOURCES

__all__ = ["tier_hits"]

#: A hit: ``(concept id, name, matcher score, source, entry score)`` or any tuple whose third
#: and fourth items are the score and the source.
Hit = TypeVar("Hit", bound=tuple)


def tier_hits(hits: Sequence[Hit], fallback: float | None = None,
              generated_min_score: float | None = None) -> list[Hit]:
    """The hits of one span text with the generated names' hits kept only as a fallback.

    Args:
        hits: The span's hits; item 2 is the matcher score, item 3 the entry's source.
        fallback: Generated names' hits are dropped when a hit of a given name (any source not
            in :data:`~xlnel.dictionary.dictionary.GENERATED_SOURCES`, unknown included) scores
            at least this; ``None``: never.
        generated_min_score: Generated names' hits scoring below this are dropped; ``None``:
            none is.

    Returns:
        The kept hits, in their order.
    """
    if fallback is None and generated_min_score is None:
        return list(hits)
    best_given = max((h[2] for h in hits if h[3] not in GENERATED_SOURCES), default=None)
    if fallback is not None and best_given is not None and best_given >= fallback:
        return [h for h in hits if h[3] not in GENERATED_SOURCES]
    if generated_min_score is None:
        return list(hits)
    return [h for h in hits if h[3] not in GENERATED_SOURCES or h[2] >= generated_min_score]
