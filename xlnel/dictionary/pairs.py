"""Training pairs for the name translator: word translations and derived transliterations.

A bilingual word list (MUSE ``en-he.txt``: ``english<TAB>hebrew`` a line) gives translation
pairs. Some of them are really transliterations (``insulin`` / ``אינסולין``): the two sides sound
alike. They are found by comparing consonant skeletons: each side is mapped to coarse consonant
classes (b/p/f/v, g/k/q/ch, d/t/th, s/z/sh/ts, l, m, n, r), vowels and weak letters dropped,
repeats collapsed, and the two skeletons compared by normalised edit distance. Each pair is tagged
``translation`` or ``transliteration`` so the translator can be asked for either kind.
"""

from __future__ import annotations

import logging
import random
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from anyascii import anyascii
from rapidfuzz.distance import Levenshtein

from xlnel.errors import FormatError
from xlnel.io._atomic import iter_lines

logger = logging.getLogger(__name__)

#: Kinds a training pair may be tagged with.
KINDS = ("translation", "transliteration")

# Consonant classes: B labial, G velar/guttural, D dental stop, Z sibilant, L, M, N, R.
_HE_CLASSES = {
    "ב": "B", "פ": "B", "ף": "B",
    "ג": "G", "כ": "G", "ך": "G", "ק": "G", "ח": "G",
    "ד": "D", "ט": "D", "ת": "D",
    "ז": "Z", "ס": "Z", "ש": "Z", "צ": "Z", "ץ": "Z",
    "ל": "L", "מ": "M", "ם": "M", "נ": "N", "ן": "N", "ר": "R",
}
# Letters that are vowels or silent in transliterations (alef, he, yod, ayin; vav handled apart).
_HE_WEAK = set("אהיעו")
_EN_DIGRAPHS = {"ph": "B", "th": "D", "sh": "Z", "ch": "G", "ck": "G", "qu": "G", "gh": ""}
_EN_CLASSES = {
    "b": "B", "p": "B", "f": "B", "v": "B",
    "g": "G", "k": "G", "q": "G", "j": "G", "x": "GZ",
    "d": "D", "t": "D",
    "s": "Z", "z": "Z",
    "l": "L", "m": "M", "n": "N", "r": "R",
}

T = TypeVar("T", bound=tuple[str, ...])


class WordPair(NamedTuple):
    """A source word (or name) with one target-language rendering and the kind of rendering."""

    source: str
    target: str
    kind: str = "translation"


def normalize_name(text: str) -> str:
    """Normalise a name for the translator: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _collapse(classes: Iterable[str]) -> str:
    out: list[str] = []
    for c in classes:
        if c and (not out or out[-1] != c):
            out.append(c)
    return "".join(out)


def phonetic_skeleton_he(word: str) -> str:
    """Consonant-class skeleton of a Hebrew word (``אינסולין`` -> ``NZLN``).

    Alef, he, yod and ayin are dropped; vav counts as ``B`` only when doubled (``וו``) or at the
    start of the word, where it is a consonant, and is a vowel letter elsewhere. Other characters
    (niqqud, geresh, Latin letters) are ignored.
    """
    word = unicodedata.normalize("NFC", word.strip())
    classes: list[str] = []
    i = 0
    while i < len(word):
        ch = word[i]
        if ch == "ו":
            doubled = i + 1 < len(word) and word[i + 1] == "ו"
            classes.append("B" if doubled or i == 0 else "")
            i += 2 if doubled else 1
            continue
        if ch not in _HE_WEAK:
            classes.append(_HE_CLASSES.get(ch, ""))
        i += 1
    return _collapse(classes)


def phonetic_skeleton_en(word: str) -> str:
    """Consonant-class skeleton of an English (Latin-script) word (``insulin`` -> ``NZLN``).

    Vowels, ``h``, ``w`` and ``y`` are dropped; ``c`` is soft (``Z``) before e, i, y and hard
    (``G``) elsewhere; common digraphs (``ph``, ``th``, ``sh``, ``ch``, ``ck``, ``qu``) map to one
    class. Non-letters are ignored.
    """
    word = normalize_name(word)
    classes: list[str] = []
    i = 0
    while i < len(word):
        pair = word[i:i + 2]
        if pair in _EN_DIGRAPHS:
            classes.append(_EN_DIGRAPHS[pair])
            i += 2
            continue
        ch = word[i]
        if ch == "c":
            soft = i + 1 < len(word) and word[i + 1] in "eiy"
            classes.append("Z" if soft else "G")
        else:
            classes.append(_EN_CLASSES.get(ch, ""))
        i += 1
    return _collapse("".join(classes))


def is_transliteration(en: str, he: str, threshold: float = 0.7) -> bool:
    """Whether a Hebrew word sounds like the English one (a transliteration, not a translation).

    Args:
        en: English word.
        he: Hebrew word.
        threshold: Least normalised similarity (1 - edit distance / longer length) of the two
            consonant skeletons; skeletons of two classes or fewer must be equal.

    Returns:
        ``True`` when the skeletons are close enough.
    """
    a, b = phonetic_skeleton_en(en), phonetic_skeleton_he(he)
    if not a or not b:
        return False
    if max(len(a), len(b)) <= 2:
        return a == b
    return Levenshtein.normalized_similarity(a, b) >= threshold


def is_romanized_transliteration(en: str, target: str, threshold: float = 0.6) -> bool:
    """Whether a word in another script, romanized (``anyascii``: *インスリン* -> *insurin*,
    *инсулин* -> *insulin*), is spelled close to the English word: a transliteration in any
    script, where :func:`is_transliteration` knows Hebrew's consonant skeletons only.

    Args:
        en: English word.
        target: Target word; one already in ASCII letters is no transliteration (a copy).
        threshold: Least normalised similarity (1 - edit distance / longer length).
    """
    if target.isascii():
        return False
    romanized = anyascii(target).casefold()
    return bool(romanized) and Levenshtein.normalized_similarity(en.casefold(),
                                                                 romanized) >= threshold


def _control_character(line: str) -> str | None:
    """The first control character of a line other than the tab (NUL, a lone carriage
    return...), or ``None``."""
    return next((ch for ch in line if ch != "\t" and unicodedata.category(ch) == "Cc"), None)


class _PairLines:
    """Splits the lines of one pair file into fields, in the layout its first pair sets.

    A pair file is either tab-separated (``source<TAB>target[<TAB>kind]``) or in the MUSE
    space format (two words a line separated by white space, no tab, as in some MUSE
    dictionaries); the first pair line tells which, and every other line must follow it.
    """

    def __init__(self, path: str | Path, fields: str) -> None:
        self.path, self.fields = path, fields
        self.first: int | None = None  # line of the first pair
        self.spaced = False

    def split(self, lineno: int, line: str) -> list[str] | None:
        """The stripped fields of a line, ``None`` for a blank line.

        Raises:
            FormatError: On a control character or a line that breaks the file's layout.
        """
        bad = _control_character(line)
        if bad is not None:
            raise FormatError(f"control character U+{ord(bad):04X} in {line[:120]!r}; a pair "
                              "line holds text and tabs only", self.path, lineno)
        if not line.strip():
            return None
        if self.first is None:
            self.first, self.spaced = lineno, "\t" not in line
        if not self.spaced:
            if "\t" not in line:
                raise FormatError(
                    f"expected '{self.fields}', found no tab but {len(line.split())} "
                    f"space-separated word(s): {line[:120]!r} (the file's first pair, line "
                    f"{self.first}, is tab-separated)", self.path, lineno)
            return [p.strip() for p in line.split("\t")]
        words = line.split()
        if "\t" in line or len(words) != 2:
            found = "a tab" if "\t" in line else f"{len(words)} space-separated word(s)"
            raise FormatError(
                f"expected '{self.fields}' (tab-separated) or two words separated by a "
                f"space (the MUSE space format{self._since(lineno)}), found {found}: "
                f"{line[:120]!r}", self.path, lineno)
        return words

    def _since(self, lineno: int) -> str:
        return "" if lineno == self.first else f" of the file's first pair, line {self.first}"


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """Read a bilingual word list, ``source<TAB>target`` a line (MUSE format).

    Lines of two words separated by spaces (the MUSE space format) are read too, when the
    file's first pair is such a line (see :func:`load_pairs`). Blank lines are skipped;
    surrounding spaces are stripped; a ``#`` starts no comment (MUSE lists hashtags).

    Raises:
        FileNotFoundError: If the file does not exist.
        FormatError: On a line that has not exactly two non-empty fields, or that holds a
            control character.
    """
    pairs: list[tuple[str, str]] = []
    lines = _PairLines(path, "source<TAB>target")
    for lineno, line in iter_lines(path):
        parts = lines.split(lineno, line)
        if parts is None:
            continue
        if len(parts) != 2 or not all(parts):
            raise FormatError(f"expected 'source<TAB>target' with two non-empty fields, got "
                              f"{line!r}", path, lineno)
        pairs.append((parts[0], parts[1]))
    return pairs


def load_pairs(path: str | Path, derive_kinds: bool = True) -> list[WordPair]:
    """Read a user's pair file: ``source<TAB>target[<TAB>kind]`` a line, optional header.

    A missing kind is derived with :func:`is_transliteration` (``translation`` when
    ``derive_kinds`` is false). A first line ``source<TAB>target[<TAB>kind]`` is taken as a header.
    A file whose first pair line has no tab is read in the MUSE space format: two words a line
    separated by white space. Blank lines are skipped. A ``#`` starts no comment: MUSE lists
    hashtags as pairs (``#the<TAB>#der``).

    Raises:
        FileNotFoundError: If the file does not exist.
        FormatError: On a line with a wrong field count, an empty field, an unknown kind, a
            control character (NUL...), or a line without a tab in a tab-separated file (or
            with one in a space-separated file), naming the file, line and what was found.
    """
    pairs: list[WordPair] = []
    lines = _PairLines(path, "source<TAB>target[<TAB>kind]")
    for lineno, line in iter_lines(path):
        if lineno == 1 and [p.strip() for p in line.split("\t")[:2]] == ["source", "target"]:
            continue
        parts = lines.split(lineno, line)
        if parts is None:
            continue
        if len(parts) not in (2, 3) or not all(parts):
            raise FormatError(f"expected 'source<TAB>target[<TAB>kind]' with non-empty "
                              f"fields, got {line!r}", path, lineno)
        if len(parts) == 3 and parts[2] not in KINDS:
            raise FormatError(f"unknown pair kind {parts[2]!r}; allowed: {', '.join(KINDS)}",
                              path, lineno)
        if len(parts) == 2 and not derive_kinds:
            parts.append("translation")
        pairs.append(tag_pair(*parts))
    return pairs


def tag_pair(source: str, target: str, kind: str | None = None) -> WordPair:
    """Build a :class:`WordPair`, deriving the kind when it is not given."""
    if kind is None:
        kind = "transliteration" if is_transliteration(source, target) else "translation"
    elif kind not in KINDS:
        raise ValueError(f"unknown pair kind {kind!r}; allowed: {', '.join(KINDS)}")
    return WordPair(source, target, kind)


def derive_training_pairs(pairs: Iterable[tuple[str, str]]) -> list[WordPair]:
    """Turn raw word pairs into tagged training pairs.

    Sources are normalised (:func:`normalize_name`), duplicates removed and pairs whose target
    merely copies the source (untranslated Latin words in MUSE such as ``rbd``/``rbd``) dropped.
    Each remaining pair is tagged ``translation`` or ``transliteration``.
    """
    seen: set[tuple[str, str]] = set()
    out: list[WordPair] = []
    for source, target in pairs:
        source, target = normalize_name(source), " ".join(target.split())
        if not source or not target or target.lower() == source or (source, target) in seen:
            continue
        seen.add((source, target))
        out.append(tag_pair(source, target))
    n_tl = sum(p.kind == "transliteration" for p in out)
    logger.info("derived %d training pairs: %d translations, %d transliterations",
                len(out), len(out) - n_tl, n_tl)
    return out


def split_pairs(pairs: Sequence[T], dev_fraction: float, seed: int = 0) -> tuple[list[T], list[T]]:
    """Split pairs into train and held-out parts by source word, so no source is in both.

    Args:
        pairs: Tuples whose first field is the source (``(en, he)`` or :class:`WordPair`).
        dev_fraction: Fraction of distinct sources held out, in ``[0, 1)``.
        seed: Seed of the shuffle; the same seed gives the same split.

    Returns:
        ``(train, dev)``, each keeping the input order.

    Raises:
        ValueError: If ``dev_fraction`` is outside ``[0, 1)``.
    """
    if not 0.0 <= dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in [0, 1), got {dev_fraction!r}")
    sources = sorted({p[0] for p in pairs})
    random.Random(seed).shuffle(sources)
    held = set(sources[:round(len(sources) * dev_fraction)])
    train = [p for p in pairs if p[0] not in held]
    dev = [p for p in pairs if p[0] in held]
    return train, dev


def training_triples(pairs: Iterable[tuple[str, ...]],
                     max_length: int | None = None) -> list[tuple[str, str, str]]:
    """Normalised ``(source, target, kind)`` triples for training; kind ``""`` when untagged.

    Sources go through :func:`normalize_name`, targets get single spaces; empty pairs and pairs
    with a side longer than ``max_length`` are left out.

    Raises:
        ValueError: On a pair that is not ``(source, target)`` or ``(source, target, kind)``.
    """
    triples, dropped = [], 0
    for pair in pairs:
        if len(pair) not in (2, 3):
            raise ValueError(f"a training pair is (source, target[, kind]), got {pair!r}")
        source, target = normalize_name(pair[0]), " ".join(pair[1].split())
        too_long = max_length is not None and max(len(source), len(target)) > max_length
        if not source or not target or too_long:
            dropped += 1
            continue
        triples.append((source, target, pair[2] if len(pair) == 3 else ""))
    if dropped:
        logger.info("left out %d empty or longer-than-%s pairs", dropped, max_length)
    return triples
