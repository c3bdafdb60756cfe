"""The character fallback: transliterate words the lexicon lacks (drug names, eponyms...).

Which pairs of the word list are transliterations is learned from the pairs themselves: a target
matching the language file's ``transliteration_pattern`` (Japanese katakana), or else one whose
consonant skeleton matches the English word's (:func:`~xlnel.dictionary.pairs.is_transliteration`,
Hebrew-script targets), or, when that finds too few, one whose romanized spelling is close to
the English word's (:func:`~xlnel.dictionary.pairs.is_romanized_transliteration`, any script). A
small :class:`~xlnel.dictionary.translator.CharTranslator` is trained on
those pairs within a time budget and asked for the missing words only, in batches. When too few
transliteration pairs are found (Latin-script targets, where cognate rules do this job) no model
is trained.
"""

from __future__ import annotations

import itertools
import logging
import math
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from xlnel.dictionary.langdata import LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.pairs import is_romanized_transliteration, is_transliteration
from xlnel.dictionary.translator import CharTranslator, TranslatorConfig, train_translator

logger = logging.getLogger(__name__)

#: Fewest transliteration pairs worth training a model on.
MIN_PAIRS = 200


#: Unicode scripts (character name prefixes) of languages written without spaces between words.
UNSPACED_SCRIPTS = ("CJK UNIFIED", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR",
                    "TIBETAN")


def _mostly(lexicon: Lexicon, test: Callable[[str], bool], sample: int) -> bool:
    """Whether more than half the letters of the first senses of the lexicon's first
    ``sample`` words pass ``test``."""
    letters = passed = 0
    for _, senses in itertools.islice(lexicon.items(), sample):
        for ch in senses[0].text:
            if ch.isalpha():
                letters += 1
                passed += test(ch)
    return letters > 0 and passed / letters > 0.5


def is_unspaced_script(lexicon: Lexicon, sample: int = 2000) -> bool:
    """Whether most letters of the lexicon's first senses belong to scripts written without
    spaces between words (:data:`UNSPACED_SCRIPTS`: Chinese, Japanese, Thai...)."""
    return _mostly(lexicon, lambda ch: unicodedata.name(ch, "").startswith(UNSPACED_SCRIPTS),
                   sample)


def is_latin_script(lexicon: Lexicon, sample: int = 2000) -> bool:
    """Whether most target words of the lexicon are written in ASCII / Latin-1 / Latin Extended."""
    return _mostly(lexicon, lambda ch: ord(ch) < 0x250, sample)


def transliteration_pairs(lexicon: Lexicon, profile: LanguageProfile) -> list[tuple[str, str]]:
    """Single-word ``(english, target)`` pairs of the lexicon that are transliterations: those
    matching the profile's ``transliteration_pattern``; without one, those whose consonant
    skeleton matches (Hebrew), or, when these are fewer than :data:`MIN_PAIRS`, those whose
    romanized spelling is close to the English word (any other script)."""
    pattern = profile.transliteration_pattern
    if pattern is not None:
        return _pairs(lexicon, lambda _, text: pattern.search(text) is not None)
    found = _pairs(lexicon, is_transliteration)
    if len(found) >= MIN_PAIRS:
        return found
    return _pairs(lexicon, is_romanized_transliteration)


def _pairs(lexicon: Lexicon, test: Callable[[str, str], bool]) -> list[tuple[str, str]]:
    out = []
    for word, senses in lexicon.items():
        if not word.isalpha():
            continue
        for sense in senses:
            text = sense.text
            if " " in text or text.casefold() == word:
                continue
            if test(word, text):
                out.append((word, text))
    return out


def train_transliterator(pairs: Sequence[tuple[str, str]], lang: str, out_dir: str | Path,
                         seconds: float, progress: bool = False) -> CharTranslator | None:
    """Train and save a transliteration model, or return ``None`` when there are too few pairs."""
    if len(pairs) < MIN_PAIRS:
        logger.info("%d transliteration pairs: no character model trained", len(pairs))
        return None
    config = TranslatorConfig(target_lang=lang, max_train_seconds=seconds, epochs=20,
                              max_length=24)
    model = train_translator(list(pairs), config, progress)
    model.save(out_dir)
    return model


def transliterate(model: CharTranslator, words: Iterable[str], n_best: int = 2,
                  beam: int = 4) -> dict[str, list[tuple[str, float]]]:
    """``word -> [(rendering, probability-like score in (0, 1])]`` for each word."""
    words = sorted(set(words))
    out: dict[str, list[tuple[str, float]]] = {}
    for word, hyps in zip(words, model.translate(words, beam=beam, n_best=n_best,
                                                 batch_size=128), strict=True):
        out[word] = [(text, math.exp(score)) for text, score in hyps]
    return out
