"""An optional fallback for words the lexicon lacks: the nearest target word by an encoder.

The targets of the word pairs are the target-language words we know; a multilingual encoder
(multilingual-e5-small, offline) places an English word the pairs lack near target words of the
same meaning (*renal* near 腎臓, *neoplasm* near 腫瘍). The nearest target, when its cosine
reaches a floor, becomes a sense of the word. Only targets in the language's own script are
searched: a transliteration is what the character model already gives, and a copied English
word is no rendering.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from xlnel.dictionary.lexicon import Lexicon

logger = logging.getLogger(__name__)

__all__ = ["Embed", "native_targets", "nearest_targets"]

#: Embeds texts into unit-length rows (such as ``xlnel.linkers.encoder.cached_encode`` of an
#: ``EntityEncoder``; the caller builds it, since the encoders live in a later stage).
Embed = Callable[[Sequence[str]], np.ndarray]


def native_targets(lexicon: Lexicon, transliteration: re.Pattern[str] | None,
                   max_length: int = 8) -> list[str]:
    """Distinct one-word targets of the lexicon written in the target's own script.

    Left out: targets with a space, targets of ASCII characters only (copied English words),
    targets matching the language's transliteration pattern and targets longer than
    ``max_length`` characters.
    """
    out: set[str] = set()
    for _, senses in lexicon.items():
        for sense in senses:
            text = sense.text
            if not (" " in text or text.isascii() or len(text) > max_length
                    or (transliteration is not None and transliteration.search(text))):
                out.add(text)
    return sorted(out)


def nearest_targets(words: Iterable[str], targets: Sequence[str], embed: Embed,
                    min_cosine: float, chunk: int = 1024) -> dict[str, tuple[str, float]]:
    """The target nearest each English word by cosine, for words where it reaches
    ``min_cosine``.

    Args:
        words: English words.
        targets: Target-language words to search.
        embed: Text embedder returning unit-length rows.
        min_cosine: Least cosine of a kept target.
        chunk: Words compared at once (bounds the memory of the similarity matrix).

    Returns:
        ``word -> (target, cosine)``.
    """
    words = sorted(set(words))
    if not words or not targets:
        return {}
    target_vectors = embed(list(targets))
    word_vectors = embed(words)
    out: dict[str, tuple[str, float]] = {}
    for lo in range(0, len(words), chunk):
        sims = word_vectors[lo:lo + chunk] @ target_vectors.T
        best = sims.argmax(axis=1)
        for row, word in enumerate(words[lo:lo + chunk]):
            cosine = float(sims[row, best[row]])
            if cosine >= min_cosine:
                out[word] = (targets[int(best[row])], cosine)
    logger.info("%d of %d English words have a target word at cosine >= %.2f among %d",
                len(out), len(words), min_cosine, len(targets))
    return out
