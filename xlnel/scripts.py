"""A cheap check that a text is written in the script of a pipeline's language.

A pipeline links text of one language: Hebrew text given to an English pipeline finds no
candidates and yields no links, which looks like a text without mentions. :class:`ScriptCheck`
counts the letters of the texts going through and warns once when most are of another script.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator

from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["LANGUAGE_SCRIPTS", "ScriptCheck", "script_of", "watch_script"]

#: Code-point ranges of each script (letters only are counted).
_SCRIPT_RANGES = {
    "Latin": ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF)),
    "Hebrew": ((0x590, 0x5FF), (0xFB1D, 0xFB4F)),
    "Arabic": ((0x600, 0x6FF), (0x750, 0x77F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
    "Cyrillic": ((0x400, 0x52F),),
    "Greek": ((0x370, 0x3FF),),
}

#: The script each supported language code is written in.
LANGUAGE_SCRIPTS = {
    "he": "Hebrew", "yi": "Hebrew", "ar": "Arabic", "fa": "Arabic", "ru": "Cyrillic",
    "uk": "Cyrillic", "bg": "Cyrillic", "el": "Greek",
    **{code: "Latin" for code in ("en", "de", "fr", "es", "it", "nl", "pt", "pl", "sv", "da",
                                  "no", "fi", "cs", "ro", "hu", "tr")},
}

#: Letters seen before a judgement is made (fewer: judged at the end of the input).
_ENOUGH_LETTERS = 500
#: Fewest letters worth a judgement (a one-word text says little).
_MIN_LETTERS = 5
#: Below this share of letters in the pipeline's script, the input is taken as another script.
_MIN_SHARE = 0.5


def script_of(char: str) -> str | None:
    """The script of one letter among those known, or ``None``."""
    code = ord(char)
    for script, ranges in _SCRIPT_RANGES.items():
        if any(lo <= code <= hi for lo, hi in ranges):
            return script
    return None


class ScriptCheck:
    """Counts the letters of texts by script and warns once when they do not fit ``lang``.

    Args:
        lang: The pipeline's language code; an unknown one disables the check.
    """

    def __init__(self, lang: str | None) -> None:
        self.script = LANGUAGE_SCRIPTS.get((lang or "").lower())
        self.lang = lang
        self.counts: Counter[str | None] = Counter()
        self.done = self.script is None

    def add(self, text: str) -> None:
        """Count the letters of ``text``; judge once enough were seen."""
        if self.done:
            return
        self.counts.update(script_of(c) for c in text if c.isalpha())
        if sum(self.counts.values()) >= _ENOUGH_LETTERS:
            self.finish()

    def finish(self) -> bool:
        """Judge on the letters seen (once); ``True`` when a warning was given."""
        if self.done:
            return False
        self.done = True
        letters = sum(self.counts.values())
        if letters < _MIN_LETTERS:
            return False
        share = self.counts[self.script] / letters
        if share >= _MIN_SHARE:
            return False
        found = max(self.counts, key=lambda s: self.counts[s])
        logger.warning(
            "the input is mostly in %s script (%.0f%% of %d letters), but this pipeline links "
            "%r text written in %s script: expect few or no links; use a pipeline trained for "
            "the input's language", found or "another", 100 * self.counts[found] / letters,
            letters, self.lang, self.script)
        return True


def watch_script(documents: Iterable[Document], lang: str | None) -> Iterator[Document]:
    """Yield ``documents`` unchanged, warning once if their script does not fit ``lang``."""
    check = ScriptCheck(lang)
    for doc in documents:
        check.add(doc.text)
        yield doc
    check.finish()
