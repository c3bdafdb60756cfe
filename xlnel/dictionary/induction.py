"""Corpus-driven dictionary induction: attested target phrases whose back-translation is a KB name.

Rendering English names into a language (:mod:`xlnel.dictionary.render`) produces forms a
grammar predicts; people write other ones (a prefixed preposition, a plural, a construct form, a
word order the grammar did not choose). Induction works the other way round. Every word n-gram of
a target-language corpus (1 to ``max_words`` words, never across punctuation) is read back into
English word by word with the word pairs in reverse (every sense), after the language file's
one-letter ``prefixes`` are stripped and its ``lemma_rules`` applied where that reaches a word
the pairs know. English words are compared as an order-free bag of inflection-insensitive stems,
so the target word order and connectors (construct state, ``X of Y``) need no rules: an n-gram
whose back-translation bag equals the bag of an English knowledge-base name becomes a dictionary
entry of that concept, source ``corpus``, scored by the priors of the senses used.

Words written in the knowledge base's own script (Latin acronyms and drug names inside Hebrew
posts) translate to themselves. A target word that only glues to English function words (``of``,
``the``) may sit inside an n-gram but not at its ends.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from xlnel.dictionary.dictionary import Entry
from xlnel.dictionary.langdata import DEFAULT_CONNECTORS, LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.pairs import phonetic_skeleton_en
from xlnel.dictionary.pairs import phonetic_skeleton_he as phonetic_skeleton_target
from xlnel.normalization import normalize_string
from xlnel.types import Concept

logger = logging.getLogger(__name__)

__all__ = ["InductionSettings", "KbIndex", "ReverseLexicon", "common_words", "drop_common",
           "english_key", "english_stem", "induce_entries", "unprefixed"]

#: English words that carry no content in a name: they are left out of the comparison key.
ENGLISH_FUNCTION_WORDS = frozenset(
    {"the", "a", "an", "of", "and", "or", "in", "on", "at", "to", "for", "by", "with", "from",
     "as", "is", "are", "be", "this", "that", "its", "his", "her", "their", "nos", "unspecified",
     "other", "type"} | {w for c in DEFAULT_CONNECTORS for w in c.split()} - {"without"})
_SPLIT = re.compile(r"[.,;:!?()\[\]{}<>\n\r\t|/\\=+*&%$#@^~`]+")
#: A word of the knowledge base's script (English words, and Latin words inside other scripts).
_LATIN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class InductionSettings:
    """Settings of :func:`induce_entries`.

    Attributes:
        max_words: Longest target n-gram read back.
        senses_per_word: Most back-translations of one target word tried.
        strip_factor: Score factor per stripped prefix letter or applied lemma rule.
        copy_prior: Prior of a word written in the knowledge base's script read as itself.
        transliteration_similarity: Least consonant-skeleton similarity of a corpus word the
            lexicon lacks and the KB word it is read as.
        transliteration_prior: Prior of such a reading (times the similarity); 0 turns it off.
        transliteration_classes: Fewest consonant classes of a word read as a transliteration.
        extra_word_factor: Score factor of a match with a KB name that has one content word
            more than the n-gram reads (taken only when no name matches exactly); 0 turns
            such matches off.
        max_concepts: Most concepts one n-gram may name (an n-gram naming more is too vague).
        min_score: Entries scoring below this are left out.
    """

    max_words: int = 3
    senses_per_word: int = 12
    strip_factor: float = 0.8
    copy_prior: float = 0.9
    transliteration_similarity: float = 0.8
    transliteration_prior: float = 0.6
    transliteration_classes: int = 4
    max_concepts: int = 5
    extra_word_factor: float = 0.7
    min_score: float = 0.0


def english_stem(word: str) -> str:
    """An inflection-insensitive key of an English word (plural ``-s``/``-es``/``-ies`` dropped)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def english_key(text: str) -> tuple[str, ...]:
    """Order-free key of an English name: sorted stems of its content words."""
    words = _LATIN.findall(text.casefold())
    return tuple(sorted(english_stem(w) for w in words if w not in ENGLISH_FUNCTION_WORDS))


class KbIndex:
    """English knowledge-base names by :func:`english_key`.

    Args:
        concepts: The concepts; every name is indexed.
        max_key_words: Names with more content words are not indexed (no n-gram reaches them).
    """

    def __init__(self, concepts: Iterable[Concept], max_key_words: int = 6) -> None:
        self.by_key: dict[tuple[str, ...], list[str]] = {}
        for concept in concepts:
            for name in concept.names:
                key = english_key(name)
                if key and len(key) <= max_key_words:
                    ids = self.by_key.setdefault(key, [])
                    if concept.id not in ids:
                        ids.append(concept.id)
        self.vocabulary = frozenset(w for key in self.by_key for w in key)
        self.by_subkey: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for key in self.by_key:
            if len(key) > 1:
                for i in range(len(key)):
                    self.by_subkey.setdefault(key[:i] + key[i + 1:], []).append(key)

    def __len__(self) -> int:
        return len(self.by_key)

    def supersets(self, key: tuple[str, ...]) -> list[str]:
        """Concept ids of names with one content word more than ``key`` (empty when none)."""
        out: list[str] = []
        for longer in self.by_subkey.get(key, ()):
            out += [cid for cid in self.by_key[longer] if cid not in out]
        return out

    def concepts(self, key: tuple[str, ...]) -> list[str]:
        """Concept ids whose name has ``key`` (empty when none)."""
        return self.by_key.get(key, [])


class ReverseLexicon:
    """Target-language word (or phrase) -> English stems with a prior, from a :class:`Lexicon`.

    Only senses useful to a knowledge-base name are kept: stems in ``vocabulary``, or English
    function words (marked by an empty stem tuple).

    Args:
        lexicon: English -> target word pairs.
        profile: The target language (its normalisation, prefixes and lemma rules).
        vocabulary: English stems of the knowledge-base names.
        strip_factor: Score factor per stripped prefix letter or applied lemma rule.
    """

    def __init__(self, lexicon: Lexicon, profile: LanguageProfile,
                 vocabulary: frozenset[str], strip_factor: float = 0.8) -> None:
        self.profile = profile
        self.vocabulary = vocabulary
        self.strip_factor = strip_factor
        self.prefixes = frozenset(_letters(p, profile.lang) for p in profile.prefixes)
        self.lemma_rules = [(re.compile(_letters(p.pattern, profile.lang)),
                             _letters(r, profile.lang)) for p, r in profile.lemma_rules]
        senses: dict[tuple[str, ...], dict[tuple[str, ...], float]] = {}
        self.known = {w for _, ss in lexicon.items() for s in ss
                      for w in normalize_string(s.text, profile.lang).split()}
        translated = {english_stem(w) for w in lexicon}
        self.untranslated = frozenset(w for w in vocabulary if w not in translated)
        for english, ss in lexicon.items():
            stems = english_key(english)
            if english in ENGLISH_FUNCTION_WORDS:
                stems = ()
            elif not stems or not set(stems) <= vocabulary:
                continue
            for sense in ss:
                words = tuple(normalize_string(sense.text, profile.lang).split())
                if words:
                    table = senses.setdefault(words, {})
                    table[stems] = max(table.get(stems, 0.0), sense.prior)
        self.senses = {w: sorted(t.items(), key=lambda kv: -kv[1]) for w, t in senses.items()}
        self.phrase_lengths = sorted({len(w) for w in self.senses if len(w) > 1}, reverse=True)
        logger.info("reverse lexicon: %d target words and phrases", len(self.senses))

    def add_transliterations(self, words: Iterable[str], min_similarity: float,
                             prior: float, min_classes: int = 4) -> int:
        """Give corpus words the lexicon lacks the KB words they sound like; returns how many.

        Only words the lexicon does not know in any form are read so (an ordinary word is no
        transliteration), and only as knowledge-base words of five letters or more that the
        lexicon cannot translate (drug names, eponyms). The word (or its form without prefix
        letters) and the English word are compared by consonant skeleton
        (:mod:`xlnel.dictionary.pairs`): equal skeletons, or one edit apart, with a normalised
        similarity of at least ``min_similarity``. The sense's prior is ``prior`` times it.
        """
        matcher = SkeletonIndex((w for w in self.untranslated if len(w) >= 5 and w.isalpha()),
                                min_classes)
        added = 0
        for word in sorted(set(words)):
            forms = [f for f, _ in self._unprefixed(word) if len(f) >= 3]
            if any(lemma in self.known for f in forms for lemma, _ in self._lemmas(f)):
                continue
            for form in forms:
                found = matcher.lookup(form, min_similarity)
                if found:
                    self.senses[(form,)] = [((w,), prior * sim) for w, sim in found]
                    added += 1
                    break
        logger.info("induction: %d corpus words read as transliterations", added)
        return added

    def analyses(self, words: tuple[str, ...]) -> list[tuple[tuple[str, ...], float]]:
        """English stems of a target word or phrase with priors, in :meth:`lookups` order.

        The form as written comes first; then forms with leading prefix letters stripped from
        the first word and lemma rules applied to the last, each prior times the form's
        ``strip_factor`` cost from :meth:`lookups`.
        """
        return [(stems, prior * factor) for form, factor in self.lookups(words)
                for stems, prior in self.senses[form]]

    def lookups(self, words: tuple[str, ...]) -> list[tuple[tuple[str, ...], float]]:
        """Forms of ``words`` the reverse lexicon holds, each with its score factor."""
        out: dict[tuple[str, ...], float] = {}
        for first, f1 in self._unprefixed(words[0]):
            for last, f2 in self._lemmas(words[-1] if len(words) > 1 else first):
                form = ((first, *words[1:-1], last) if len(words) > 1 else (last,))
                if form in self.senses and f1 * f2 > out.get(form, 0.0):
                    out[form] = f1 * f2
        return sorted(out.items(), key=lambda kv: -kv[1])

    def _unprefixed(self, word: str) -> Iterator[tuple[str, float]]:
        yield word, 1.0
        for rest, k in unprefixed(word, self.prefixes):
            yield rest, self.strip_factor ** k

    def _lemmas(self, word: str) -> Iterator[tuple[str, float]]:
        yield word, 1.0
        for pattern, repl in self.lemma_rules:
            if pattern.search(word):
                lemma = pattern.sub(repl, word, count=1)
                if len(lemma) >= 2:
                    yield lemma, self.strip_factor


class SkeletonIndex:
    """English words by consonant skeleton, with one-deletion neighbours for near matches.

    Words sharing a skeleton are kept in alphabetical order, and lookups break ties of
    similarity alphabetically, so what a caller keeps of a long list does not depend on the
    iteration order of the set the words came from (which varies with ``PYTHONHASHSEED``).
    """

    def __init__(self, words: Iterable[str], min_classes: int = 4) -> None:
        self.min_classes = min_classes
        self.exact: dict[str, list[str]] = {}
        self.deleted: dict[str, list[str]] = {}
        for word in sorted(set(words)):
            skeleton = phonetic_skeleton_en(word)
            if len(skeleton) < min_classes:
                continue
            self.exact.setdefault(skeleton, []).append(word)
            if len(skeleton) >= 4:
                for d in _deletions(skeleton):
                    self.deleted.setdefault(d, []).append(word)

    def lookup(self, target: str, min_similarity: float) -> list[tuple[str, float]]:
        """English words whose skeleton is equal or one edit away from the target word's."""
        skeleton = phonetic_skeleton_target(target)
        if len(skeleton) < self.min_classes:
            return []
        if skeleton in self.exact:
            return [(w, 1.0) for w in self.exact[skeleton]]
        if len(skeleton) < 4:
            return []
        near = {w for d in {skeleton, *_deletions(skeleton)} for w in
                self.deleted.get(d, []) + self.exact.get(d, [])}
        scored = [(w, Levenshtein.normalized_similarity(skeleton, phonetic_skeleton_en(w)))
                  for w in near]
        return sorted([ws for ws in scored if ws[1] >= min_similarity],
                      key=lambda ws: (-ws[1], ws[0]))


def unprefixed(word: str, letters: Collection[str]) -> Iterator[tuple[str, int]]:
    """``word`` without its first one, then two, letters while they are all in ``letters`` and
    at least two letters remain; each form with how many letters were stripped."""
    for k in (1, 2):
        rest = word[k:]
        if len(rest) < 2 or not all(c in letters for c in word[:k]):
            return
        yield rest, k


def _deletions(skeleton: str) -> set[str]:
    return {skeleton[:i] + skeleton[i + 1:] for i in range(len(skeleton))}


def _letters(text: str, lang: str) -> str:
    """``text`` with each letter normalised as corpus words are (final letter forms...)."""
    return "".join((normalize_string(c, lang) or c) if c.isalpha() else c for c in text)


def corpus_ngrams(texts: Iterable[str], lang: str, max_words: int) -> dict[tuple[str, ...], int]:
    """Distinct normalised word n-grams of the texts (never across punctuation) and their counts."""
    counts: dict[tuple[str, ...], int] = {}
    for text in texts:
        for chunk in _SPLIT.split(text):
            words = normalize_string(chunk, lang).split()
            for size in range(1, max_words + 1):
                for i in range(len(words) - size + 1):
                    gram = tuple(words[i:i + size])
                    counts[gram] = counts.get(gram, 0) + 1
    return counts


def induce_entries(texts: Iterable[str], lexicon: Lexicon, profile: LanguageProfile,
                   concepts: Sequence[Concept], settings: InductionSettings | None = None
                   ) -> list[Entry]:
    """Dictionary entries for the corpus n-grams whose back-translation is a KB name.

    Args:
        texts: Target-language texts (only their words are used).
        lexicon: English -> target word pairs.
        profile: The target language (``prefixes``, ``lemma_rules``).
        concepts: English knowledge-base concepts.
        settings: Induction settings (defaults when ``None``).

    Returns:
        Entries with source ``corpus``, the n-gram as written (normalised) as the name and the
        best back-translation's score; best first within an n-gram.
    """
    settings = settings if settings is not None else InductionSettings()
    index = KbIndex(concepts)
    reverse = ReverseLexicon(lexicon, profile, index.vocabulary, settings.strip_factor)
    grams = corpus_ngrams(texts, profile.lang, settings.max_words)
    words = {g[0] for g in grams if len(g) == 1}
    if settings.transliteration_prior > 0:
        reverse.add_transliterations(words, settings.transliteration_similarity,
                                     settings.transliteration_prior,
                                     settings.transliteration_classes)
    entries: list[Entry] = []
    pieces: dict[tuple[str, ...], _Piece | None] = {}  # a word is in many n-grams: read it once
    for gram in grams:
        found = match_ngram(gram, reverse, index, settings, pieces)
        if 0 < len(found) <= settings.max_concepts:
            for name, factor in _names(gram, reverse, words):
                entries += [Entry(name, cid, "corpus", round(score * factor, 4))
                            for cid, score in found if score * factor >= settings.min_score]
    logger.info("induction: %d n-grams, %d KB keys, %d entries for %d names", len(grams),
                len(index), len(entries), len({e.name for e in entries}))
    return entries


def _names(gram: tuple[str, ...], reverse: ReverseLexicon,
           words: set[str]) -> Iterator[tuple[str, float]]:
    """The n-gram as written, and without the first word's prefix letters where that form is
    a corpus word or a lexicon word (a mention may leave a glued preposition out)."""
    yield " ".join(gram), 1.0
    for form, k in unprefixed(gram[0], reverse.prefixes):
        if form in words or form in reverse.known:
            yield " ".join((form, *gram[1:])), reverse.strip_factor ** k


def match_ngram(gram: tuple[str, ...], reverse: ReverseLexicon, index: KbIndex,
                settings: InductionSettings,
                cache: dict[tuple[str, ...], _Piece | None] | None = None
                ) -> list[tuple[str, float]]:
    """Concepts whose English name the n-gram back-translates to, with the best score each.

    When no name matches, names with one content word more are taken (``extra_word_factor``
    times the score) if they name at most ``max_concepts`` concepts. ``cache`` keeps the
    back-translations of words and phrases between calls with the same reverse lexicon and
    settings.
    """
    readings: dict[tuple[str, ...], float] = {}
    for pieces in _segmentations(gram, reverse, settings, {} if cache is None else cache):
        if not pieces[0][0] or not pieces[-1][0]:
            continue  # a function word at an end
        content = [p for p in pieces if p[0]]
        for choice in itertools.product(*(p[0] for p in content)):
            stems = tuple(sorted(s for stems, _ in choice for s in stems))
            factors = [prior for _, prior in choice] + [p[1] for p in pieces if not p[0]]
            score = math.prod(factors) ** (1.0 / len(factors))
            readings[stems] = max(readings.get(stems, 0.0), score)
    best = _best(readings, index.concepts, 1.0)
    if not best and settings.extra_word_factor > 0:
        best = _best(readings, index.supersets, settings.extra_word_factor)
        if len(best) > settings.max_concepts:
            return []
    return sorted(best.items(), key=lambda kv: -kv[1])


def _best(readings: dict[tuple[str, ...], float], lookup: Callable[[tuple[str, ...]], list[str]],
          factor: float) -> dict[str, float]:
    best: dict[str, float] = {}
    for stems, score in readings.items():
        for cid in lookup(stems):
            best[cid] = max(best.get(cid, 0.0), score * factor)
    return best


# A piece: (content options [(stems, prior)] -- empty for a function word --, function prior)
_Piece = tuple[list[tuple[tuple[str, ...], float]], float]


def _segmentations(gram: tuple[str, ...], reverse: ReverseLexicon, settings: InductionSettings,
                   cache: dict[tuple[str, ...], _Piece | None]) -> Iterator[list[_Piece]]:
    """Ways to cut the n-gram into words and known phrases, each with its back-translations."""
    options: dict[tuple[int, int], _Piece | None] = {}
    n = len(gram)
    for i in range(n):
        for j in range(i + 1, n + 1):
            words = gram[i:j]
            if words not in cache:
                cache[words] = _piece(words, reverse, settings)
            options[(i, j)] = cache[words]

    def walk(i: int) -> Iterator[list[_Piece]]:
        if i == n:
            yield []
            return
        for j in range(i + 1, n + 1):
            piece = options[(i, j)]
            if piece is not None:
                for rest in walk(j):
                    yield [piece, *rest]

    yield from walk(0)


def _piece(words: tuple[str, ...], reverse: ReverseLexicon,
           settings: InductionSettings) -> _Piece | None:
    found = reverse.analyses(words)
    if len(words) == 1 and _LATIN.fullmatch(words[0]):
        stem = english_stem(words[0])
        if stem in reverse.vocabulary:
            found = [((stem,), settings.copy_prior), *found]
    if not found:
        return None
    content: dict[tuple[str, ...], float] = {}
    function = 0.0
    for stems, prior in found:
        if stems:
            content[stems] = max(content.get(stems, 0.0), prior)
        else:
            function = max(function, prior)
    ranked = sorted(content.items(), key=lambda kv: -kv[1])[: settings.senses_per_word]
    if function >= (ranked[0][1] if ranked else 0.0) and len(words) == 1 and function > 0:
        return [], function
    return (ranked, 0.0) if ranked else None


def common_words(pairs: Iterable[tuple[str, str]], top: int, lang: str) -> frozenset[str]:
    """Target words of the ``top`` most frequent English words of a word-pair list.

    MUSE lists are ordered by English frequency, so the first ``top`` distinct English words
    are the everyday ones; their target words are everyday words too.
    """
    seen: set[str] = set()
    out: set[str] = set()
    for english, target in pairs:
        if english not in seen:
            if len(seen) >= top:
                break
            seen.add(english)
        out.update(normalize_string(target, lang).split())
    return frozenset(out)


def drop_common(entries: Iterable[Entry], common: frozenset[str], prefixes: Iterable[str],
                min_single_score: float = 0.0, lang: str | None = None) -> list[Entry]:
    """Entries without the one-word names that read as everyday words.

    A one-word name is dropped when it, or it without up to two leading ``prefixes`` letters,
    is in ``common`` (see :func:`common_words`, whose words are normalised), or when its score
    is below ``min_single_score``. Longer names are kept: a phrase of everyday words can be a
    term. With ``lang``, names are normalised by that language's rules before the comparison
    (Hebrew final letters, case); without it they are compared as written.
    """
    letters = frozenset(prefixes)
    out = []
    for entry in entries:
        words = (normalize_string(entry.name, lang) if lang else entry.name).split()
        if len(words) == 1:
            word = words[0]
            forms = [word, *(form for form, _ in unprefixed(word, letters))]
            if any(f in common for f in forms) or (entry.score or 0.0) < min_single_score:
                continue
        out.append(entry)
    return out
