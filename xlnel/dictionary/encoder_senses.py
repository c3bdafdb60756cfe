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
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from xlnel.dictionary.lexicon import Lexicon

logger = logging.getLogger(__name__)

__all__ = ["Embed", "native_characters", "native_targets", "nearest_targets"]

#: Code points below this are Latin letters (ASCII, Latin-1, Latin Extended).
LATIN_END = 0x250
#: Embeds texts into unit-length rows (such as ``xlnel.linkers.encoder.cached_encode`` of an
#: ``EntityEncoder``; the caller builds it, since the encoders live in a later stage).
Embed = Callable[[Sequence[str]], np.ndarray]


def native_targets(lexicon: Lexicon, transliteration: re.Pattern[str] | None,
                   max_length: int = 8) -> list[str]:
    """Distinct one-word targets of the lexicon written in the target's own script.

    Left out: targets with a space, targets with a Latin letter (copied English words, names
    in other Latin-script languages: *régional*),
    targets matching the language's transliteration pattern and targets longer than
    ``max_length`` characters.
    """
    out: set[str] = set()
    for _, senses in lexicon.items():
        for sense in senses:
            text = sense.text
            if not (" " in text or _has_latin(text) or len(text) > max_length
                    or (transliteration is not None and transliteration.search(text))):
                out.add(text)
    return sorted(out)


def _has_latin(text: str) -> bool:
    return any(ch.isalpha() and ord(ch) < LATIN_END for ch in text)


def native_characters(targets: Iterable[str], transliteration: re.Pattern[str] | None,
                      min_targets: int = 3) -> list[str]:
    """The characters written in at least ``min_targets`` native targets, as words of their own.

    For a script written without spaces, the pairs list compounds (骨格 *skeleton*, 骨折
    *fracture*) more often than the one-character words they are built from (骨 *bone*);
    those characters are targets too. Latin letters and characters matching the
    transliteration pattern are left out.
    """
    counts: Counter[str] = Counter()
    for text in targets:
        counts.update({ch for ch in text if ch.isalpha() and ord(ch) >= LATIN_END
                       and not (transliteration is not None and transliteration.search(ch))})
    return sorted(ch for ch, n in counts.items() if n >= min_targets)


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

