"""Target-language corpus evidence for the builder: word counts and attested phrases.

A corpus is plain text, or documents in a format xlnel reads (JSONL, PubTator, BRAT), whose
annotations are ignored: only the text counts. Words are counted to re-rank the senses of an
English word (the form people write wins), and phrases of up to ``max_words`` words are kept so
that a rendering the corpus attests is marked ``corpus`` and ranked up.

The counts also show which one-letter words a language writes glued to the next word (Hebrew
ו ה ב ל מ ש כ): :func:`attached_letters` finds the letters that, put before the
pairs' target words, often make another word of the corpus. A language without a file gets
them as its ``prefixes`` (stripped in corpus induction, :mod:`xlnel.dictionary.induction`),
and the word endings it swaps (:func:`lemma_rules`: Hebrew plural -ים and construct -ת, English
plural -s) as its ``lemma_rules``.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from xlnel.io._atomic import iter_lines
from xlnel.io.documents import guess_format, iter_documents

logger = logging.getLogger(__name__)

K = TypeVar("K")

_WORD = re.compile(r"[^\W_]+(?:['’\"״׳][^\W_]+)*")
#: Least share of the target words found in the corpus that a letter must also make words of
#: when put before them to count as attached (the shares of a Hebrew build on the Camoni posts:
#: ``letter_shares`` in benchmarks/results/dictionary_coverage_generic.json).
MIN_ATTACHED_SHARE = 0.015
#: Fewest target words behind an attached letter.
MIN_ATTACHED_WORDS = 10
#: Longest word ending that an ending alternation (:meth:`CorpusEvidence.ending_shares`) swaps.
MAX_ENDING = 2
#: Least share of the target words found in the corpus that an ending alternation must explain
#: (in as many corpus words) to become a lemma rule (:func:`lemma_rules`): the glued letters'
#: share. On the Camoni posts it keeps 26 Hebrew alternations, six of the seven of the Hebrew
#: file among them; on English abstracts only the plural -s (``ending_shares`` and
#: ``lemma_rules`` in benchmarks/results/dictionary_coverage_generic.json, and the slow tests).
MIN_RULE_SHARE = MIN_ATTACHED_SHARE


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

    def letter_shares(self, targets: Iterable[str], min_length: int = 3
                      ) -> dict[str, tuple[float, int]]:
        """Per letter, the share and number of the distinct words of ``targets`` (the word
        pairs' one-word translations, at least ``min_length`` letters) found in the corpus
        that the corpus also has with that letter put before them; highest share first."""
        found = {w.casefold() for w in targets
                 if len(w) >= min_length and w.isalpha() and w.casefold() in self.counts}
        # each corpus word that is a letter and a found word counts once for that letter
        hits = Counter(v[0] for v in self.counts if v[0].isalpha() and v[1:] in found)
        shares = {c: (n / len(found), n) for c, n in hits.items()}
        return dict(sorted(shares.items(), key=lambda x: (-x[1][0], x[0])))

    def ending_shares(self, targets: Iterable[str], normalize: Callable[[str], str],
                      min_length: int = 3, max_ending: int = MAX_ENDING
                      ) -> dict[tuple[str, str], tuple[float, int]]:
        """Per ending alternation ``(written, listed)``, the share and number of corpus words
        that are no target word but become one when their ending ``written`` is replaced by
        ``listed`` (each at most ``max_ending`` letters, one of them possibly empty); shares
        are of the distinct target words found in the corpus, as in :meth:`letter_shares`.
        Words are compared after ``normalize`` (the induction's normalisation); highest share
        first."""
        listed = {normalize(w) for w in targets}
        listed = {w for w in listed if w.isalpha()}
        words = {normalize(v) for v in self.counts}
        found = {w for w in listed if len(w) >= min_length and w in words}
        if not found:
            return {}
        # stem -> the endings that complete it to a target word
        completions: dict[str, set[str]] = {}
        for w in listed:
            for k in range(0, max_ending + 1):
                if len(w) - k >= 2:
                    completions.setdefault(w[:len(w) - k], set()).add(w[len(w) - k:])
        hits: Counter[tuple[str, str]] = Counter()
        for v in words:
            if len(v) < min_length or not v.isalpha() or v in listed:
                continue
            alternations = {(v[len(v) - k:], end)
                            for k in range(0, max_ending + 1) if len(v) - k >= 2
                            for end in completions.get(v[:len(v) - k], ())}
            hits.update(a for a in alternations if a[0] != a[1])
        shares = {a: (n / len(found), n) for a, n in hits.items()}
        return dict(sorted(shares.items(), key=lambda x: (-x[1][0], x[0])))

    def contains(self, text: str) -> bool:
        """Whether the corpus has ``text`` as a word or a phrase (case-folded)."""
        words = [w.casefold() for w in _WORD.findall(text)]
        if not words:
            return False
        if len(words) == 1:
            return words[0] in self.counts
        return " ".join(words) in self.phrases


def attached_letters(shares: dict[str, tuple[float, int]],
                     min_share: float = MIN_ATTACHED_SHARE,
                     min_words: int = MIN_ATTACHED_WORDS) -> dict[str, float]:
    """Letters written glued to the next word, with their shares: among
    :meth:`CorpusEvidence.letter_shares`, those of share at least ``min_share`` and behind at
    least ``min_words`` words, highest share first. A language that glues no words gets none: a
    letter before a word makes another word only by chance."""
    return _frequent(shares, min_share, min_words)


def lemma_rules(shares: dict[tuple[str, str], tuple[float, int]],
                min_share: float = MIN_RULE_SHARE, min_words: int = MIN_ATTACHED_WORDS
                ) -> dict[tuple[str, str], float]:
    """Ending alternations common enough to read written forms back to listed ones, with their
    shares: among :meth:`CorpusEvidence.ending_shares`, those of share at least ``min_share``
    and behind at least ``min_words`` words, highest share first. Each becomes a lemma rule
    ``written$ -> listed`` of corpus induction, tried on an n-gram's last word; a rule that
    reads a word wrongly costs little there, since the whole n-gram must then read as a
    knowledge-base name."""
    return _frequent(shares, min_share, min_words)


def _frequent(shares: Mapping[K, tuple[float, int]], min_share: float, min_words: int
              ) -> dict[K, float]:
    """The keys of ``shares`` with a share of at least ``min_share`` and at least ``min_words``
    words, with their shares, in the order of ``shares``."""
    return {key: share for key, (share, n) in shares.items()
            if n >= min_words and share >= min_share}


def corpus_texts(paths: Iterable[str | Path]) -> Iterator[str]:
    """The texts of plain-text files, document files or BRAT folders (annotations ignored).

    A plain-text file gives one text per line; it may be gzip-compressed (``.gz``), as the
    document formats may. A folder is read as BRAT (each ``.txt`` file a document).

    Raises:
        FileNotFoundError: If a file or folder does not exist.
        FormatError: On a malformed document file, or a line that is not UTF-8 or a damaged
            ``.gz`` file, naming the file and line.
    """
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"corpus file or BRAT folder not found: {path}")
        try:
            fmt = guess_format(path)
        except ValueError:
            fmt = "text"
        if fmt == "text":
            for _, line in iter_lines(path):
                yield line
        else:
            for doc in iter_documents(path, fmt):
                yield doc.text
