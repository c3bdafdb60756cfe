"""Target-language corpus evidence for the builder: word counts and attested phrases.

A corpus is plain text, or documents in a format xlnel reads (JSONL, PubTator, BRAT), whose
annotations are ignored: only the text counts. Words are counted to re-rank the senses of an
English word (the form people write wins), and phrases of up to ``max_words`` words are kept so
that a rendering the corpus attests is marked ``corpus`` and ranked up.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from xlnel.io.documents import guess_format, iter_documents

logger = logging.getLogger(__name__)

_WORD = re.compile(r"[^\W_]+(?:['’\"״׳][^\W_]+)*")


class CorpusEvidence:
    """Word counts and attested word n-grams of target-language texts.

    Args:
        texts: The texts.
        max_words: Longest phrase kept.
    """

    def __init__(self, texts: Iterable[str], max_words: int = 4) -> None:
        self.counts: Counter[str] = Counter()
        self.phrases: set[str] = set()
        self.max_words = max_words
        n = 0
        for text in texts:
            n += 1
            words = [w.casefold() for w in _WORD.findall(text)]
            self.counts.update(words)
            for size in range(2, max_words + 1):
                self.phrases.update(" ".join(words[i:i + size])
                                    for i in range(len(words) - size + 1))
        logger.info("corpus: %d texts, %d distinct words, %d phrases", n, len(self.counts),
                    len(self.phrases))

    @classmethod
    def from_files(cls, paths: Iterable[str | Path], max_words: int = 4) -> CorpusEvidence:
        """Read plain-text or document files (see the module docstring).

        Raises:
            FileNotFoundError: If a file does not exist.
            FormatError: On a malformed document file, naming the file and line.
        """
        return cls(corpus_texts(paths), max_words)

    def contains(self, text: str) -> bool:
        """Whether the corpus has ``text`` as a word or a phrase (case-folded)."""
        words = [w.casefold() for w in _WORD.findall(text)]
        if not words:
            return False
        if len(words) == 1:
            return words[0] in self.counts
        return " ".join(words) in self.phrases


def corpus_texts(paths: Iterable[str | Path]) -> Iterator[str]:
    """The texts of plain-text or document files (annotations ignored).

    Raises:
        FileNotFoundError: If a file does not exist.
        FormatError: On a malformed document file, naming the file and line.
    """
    for path in map(Path, paths):
        if not path.is_file():
            raise FileNotFoundError(f"corpus file not found: {path}")
        try:
            fmt = guess_format(path)
        except ValueError:
            fmt = "text"
        if fmt == "text":
            with open(path, encoding="utf-8") as f:
                yield from f
        else:
            for doc in iter_documents(path, fmt):
                yield doc.text
