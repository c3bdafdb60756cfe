"""Render an English knowledge base into a target language from a lexicon, and build a dictionary.

Each English word of a name gets its senses from, in turn: the language file's function words,
the bilingual lexicon (all senses, base forms of inflected words too), the senses of an English
relative the lexicon holds (*cornea* for *corneal*, see :mod:`xlnel.dictionary.morphology`), and
fallbacks for words the lexicon lacks: cognate ending rules learned from the pairs (Latin-script
targets), affixes and, for scripts without spaces, morphemes aligned in the pairs, a character
transliterator (other scripts, when one is given), optionally the pair word nearest the English
word by a multilingual encoder, and, last, the English word itself at a low prior. An optional
corpus re-ranks senses by how often they occur and marks renderings it attests.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein
from tqdm import tqdm

from xlnel.dictionary.cognates import CognateRules
from xlnel.dictionary.compose import NameComposer, Rendering, head_nouns, tokenize
from xlnel.dictionary.compounds import CompoundForms
from xlnel.dictionary.dictionary import Dictionary, has_word_character
from xlnel.dictionary.langdata import LanguageProfile
from xlnel.dictionary.lexicon import COPY_FACTOR, RANK_DECAY, Lexicon, Sense
from xlnel.dictionary.morphemes import MorphemeTable
from xlnel.dictionary.morphology import AffixModel, related_forms
from xlnel.types import Concept

logger = logging.getLogger(__name__)

#: Prior of the English word itself when nothing else renders it.
COPY_PRIOR = 0.15
#: Most transliterations or cognate rewrites of one word kept.
FALLBACK_SENSES = 2
#: Greek and Latin number endings of English medical words, both ways (*phalanx* /
#: *phalanges*, *epiphysis* / *epiphyses*, *vertebra* / *vertebrae*, *septum* / *septa*).
CLASSICAL_PLURALS = (("anx", "anges"), ("anges", "anx"), ("ynx", "ynges"), ("ynges", "ynx"),
                     ("ix", "ices"), ("ex", "ices"), ("ices", "ix"), ("ices", "ex"),
                     ("is", "es"), ("es", "is"), ("um", "a"), ("us", "i"), ("i", "us"),
                     ("a", "ae"), ("ae", "a"), ("a", "um"))
#: Shortest word whose classical number endings are tried (*axis* is not *axes*' only form).
MIN_CLASSICAL = 6
#: Prior factor of a sense borrowed from an English relative (*corneal* from *cornea*).
RELATED_FACTOR = 0.8


@dataclass(frozen=True)
class BuildSettings:
    """Settings of :func:`render_kb`.

    Attributes:
        n_best: Renderings kept per English name.
        max_names_per_concept: Most entries per concept (best scores first); ``None``: no limit.
        beam: Partial renderings kept per phrase.
        senses_per_word: Most senses of a word tried in a name.
        fallback_prior: Prior factor of a cognate rewrite or transliteration.
        cognate_bonus: How much a sense spelled like its English word is preferred (its prior
            times ``1 + cognate_bonus * similarity``); medical words are often cognates.
        min_score: Renderings scoring below this are left out.
        keep_english: Also keep each concept's English names (source ``kb``, score
            ``english_score``): medical texts often use the English term, and for cognate-rich
            languages the English name is sometimes nearer the local term than any rendering.
        english_score: Score of a kept English name.
        encoder: A multilingual encoder (registered name, Hugging Face id or folder) whose
            nearest native target word renders a word the lexicon lacks; ``None``: none.
        nearest_min_cosine: Least cosine of such a target word.
        nearest_prior: Prior of such a target word.
        transliteration_factor: Prior factor of a lexicon sense in the language's
            transliteration script when the word has a native sense too (see
            :class:`WordSenses`).
        number_factor: Prior factor of a sense pooled from the word's other number (see
            :class:`WordSenses`); 0 pools none.
    """

    n_best: int = 3
    max_names_per_concept: int | None = None
    beam: int = 8
    senses_per_word: int = 3
    fallback_prior: float = 0.6
    cognate_bonus: float = 1.0
    min_score: float = 0.0
    keep_english: bool = True
    english_score: float = COPY_PRIOR
    transliteration_factor: float = 0.5
    encoder: str | None = None
    nearest_min_cosine: float = 0.9
    nearest_prior: float = 0.5
    number_factor: float = 0.9


class WordSenses:
    """Senses of English words for one target language, with fallbacks, cached.

    Args:
        lexicon: Word pairs as a lexicon.
        profile: The target language's grammar (its ``words`` come first).
        cognates: Cognate ending rules; ``None`` or empty for none.
        transliterations: Precomputed ``word -> [(rendering, score)]`` for words the lexicon
            lacks (from a character model); ``None`` for none.
        corpus_counts: Occurrence counts of target-language words, to re-rank senses.
        fallback_prior: Prior factor of cognate rewrites, affix renderings and
            transliterations.
        affixes: English affixes aligned with target affixes; ``None`` for none.
        keep_copies: Take a pair whose target copies the English word (``dist``/``dist``) for
            a translation; ``False`` for a target script the English word is not written in,
            where such a pair is left untranslated noise and the word goes to the fallbacks.
        nearest: ``word -> (target word, cosine)`` from a multilingual encoder
            (:mod:`xlnel.dictionary.encoder_senses`), a sense of a word the lexicon lacks, with
            prior ``nearest_prior``; ``None`` for none.
        nearest_prior: Prior of such a sense.
        morphemes: Sub-word alignments (:mod:`xlnel.dictionary.morphemes`) composing words the
            lexicon lacks; ``None`` for none.
        transliteration_factor: Prior factor of a sense matching the profile's
            ``transliteration_pattern`` when the word also has a sense that does not (medical
            names prefer the native term: 骨 over ボーン).
        number_factor: Prior factor of a sense the pairs give the word's other number
            (singular or plural) pooled with its own; 0 pools none.
    """

    def __init__(self, lexicon: Lexicon, profile: LanguageProfile,
                 cognates: CognateRules | None = None,
                 transliterations: Mapping[str, Sequence[tuple[str, float]]] | None = None,
                 corpus_counts: Mapping[str, int] | None = None,
                 fallback_prior: float = 0.6, cognate_bonus: float = 1.0,
                 affixes: AffixModel | None = None, keep_copies: bool = True,
                 transliteration_factor: float = 1.0,
                 morphemes: MorphemeTable | None = None,
                 nearest: Mapping[str, tuple[str, float]] | None = None,
                 nearest_prior: float = 0.5, number_factor: float = 0.0) -> None:
        self.lexicon = lexicon
        self.nearest = nearest or {}
        self.nearest_prior = nearest_prior
        self.morphemes = morphemes
        self.keep_copies = keep_copies
        self.transliteration_factor = transliteration_factor
        self.profile = profile
        self.cognates = cognates
        self.affixes = affixes
        self.transliterations = transliterations or {}
        self.corpus_counts = corpus_counts
        self.fallback_prior = fallback_prior
        self.cognate_bonus = cognate_bonus
        self.compounds: CompoundForms | None = None
        self.number_factor = number_factor
        self._cache: dict[str, list[Sense]] = {}
        self._best_texts: dict[str, str | None] = {}
        self.missing: set[str] = set()

    def __call__(self, word: str) -> list[Sense]:
        """Senses of a normalised English word (or connector phrase), best first."""
        found = self._cache.get(word)
        if found is None:
            found = self._native_first(self._lookup(word))
            if self.cognate_bonus and len(found) > 1:
                found = _rescale(found, [s.prior * (1.0 + self.cognate_bonus * _similarity(
                    word, s.text)) for s in found])
            if self.corpus_counts is not None:
                found = _rerank(found, self.corpus_counts)
            self._cache[word] = found
        return found

    def _lookup(self, word: str) -> list[Sense]:
        if word in self.profile.words:
            return [Sense(t, 1.0 / (1.0 + RANK_DECAY * i))
                    for i, t in enumerate(self.profile.words[word])]
        senses = self.lexicon_senses(word)
        if senses and _copies_only(word, senses):
            return self._respelled(word, senses)
        if senses:
            return senses
        if word.isdigit() or len(word) == 1:
            return [Sense(word, 1.0, "copy")]
        related = self._related(word)
        if related:
            return related
        self.missing.add(word)
        out = [Sense(text, self.fallback_prior * score, "transliteration")
               for text, score in self._fallback(word)]
        if word in self.nearest:
            out = sorted([*out, Sense(self.nearest[word][0], self.nearest_prior,
                                      "transliteration")], key=lambda s: -s.prior)
        return out + [Sense(word, COPY_PRIOR, "copy")]

    def _respelled(self, word: str, copies: list[Sense]) -> list[Sense]:
        """Senses of a word the pairs only copy (*hypoplasia*/*hypoplasia*, often English text
        in the target's corpus): the cognate rewrites first, at the copy's prior, then the copy
        a little lower."""
        if self.cognates is None:
            return copies
        prior = copies[0].prior
        found = [Sense(text, prior * score, "translation")
                 for text, score in self.cognates.rewrite(word)[:FALLBACK_SENSES] if text != word]
        if not found:
            return copies
        return found + [Sense(s.text, COPY_FACTOR * s.prior, s.kind) for s in copies]

    def lexicon_senses(self, word: str) -> list[Sense]:
        """The lexicon's senses of a word, pooled with those of its other number, without
        copies unless ``keep_copies``."""
        senses = self.lexicon.senses(word)
        if self.number_factor:
            senses = self._pooled(word, senses)
        if self.keep_copies:
            return senses
        return [s for s in senses if s.text.casefold() != word]

    def _pooled(self, word: str, senses: list[Sense]) -> list[Sense]:
        """Senses with those the pairs give the word's singular or plural (*seizures* ->
        *crises* for *seizure*, *phalanges* for *phalanx*), at ``number_factor`` times their
        prior: the pairs list the senses of each form apart, and a form's first sense is often
        the other's last or missing (*bone*: *osseuse*, *osseux*, *os*; *bones*: *os*)."""
        best = {s.text: s for s in senses}
        # classical forms are guessed only for a word the pairs lack: *region* is no *regia*
        for form in number_forms(word, classical=not senses):
            for s in self.lexicon.senses(form):
                if s.text.casefold() == form and (senses or not self.keep_copies):
                    # a copy of the other form is a sense only of a word with none of its
                    # own, in the same script (*phalanx*: *phalanges*)
                    continue
                if senses and s.text.casefold() == word:
                    # nor is the other form's sense spelled as this word (*shorts* -> *short*,
                    # a garment): it would pass for a cognate of a word that has translations
                    continue
                prior = self.number_factor * s.prior
                if s.text not in best or best[s.text].prior < prior:
                    best[s.text] = Sense(s.text, prior, s.kind)
        return sorted(best.values(), key=lambda s: -s.prior)

    def _native_first(self, senses: list[Sense]) -> list[Sense]:
        """Senses with transliterations lowered when a native sense exists."""
        pattern = self.profile.transliteration_pattern
        if pattern is None or self.transliteration_factor == 1.0 or len(senses) < 2:
            return senses
        native = [not pattern.search(s.text) for s in senses]
        if all(native) or not any(native):
            return senses
        return _rescale(senses, [s.prior * (1.0 if n else self.transliteration_factor)
                                 for s, n in zip(senses, native, strict=True)])

    def _related(self, word: str) -> list[Sense]:
        """Senses of the first English relative the lexicon holds (*cornea* for *corneal*)."""
        for form in related_forms(word):
            senses = self.lexicon_senses(form)
            if senses and not _copies_only(form, senses):
                return [Sense(s.text, RELATED_FACTOR * s.prior, s.kind) for s in senses]
        return []

    def _best_text(self, word: str) -> str | None:
        """The best rendering of a whole English word (the affix model's stem lookup)."""
        # the affix model asks for the same stems and completions for many words
        if word not in self._best_texts:
            senses = self.lexicon_senses(word) or self._related(word)
            self._best_texts[word] = senses[0].text if senses else None
        return self._best_texts[word]

    def _fallback(self, word: str) -> list[tuple[str, float]]:
        found = list(self.transliterations.get(word, ()))[:FALLBACK_SENSES]
        if self.cognates is not None:
            found += self.cognates.rewrite(word)[:FALLBACK_SENSES]
        if self.affixes is not None:
            found += self.affixes.render(word, self._best_text)[:FALLBACK_SENSES]
        if self.morphemes is not None:
            found += self.morphemes.render(word, self._best_text)[:FALLBACK_SENSES]
        best: dict[str, float] = {}
        for text, score in found:  # one sense per text, at its best confidence
            best[text] = max(score, best.get(text, 0.0))
        return sorted(best.items(), key=lambda x: -x[1])


def number_forms(word: str, classical: bool = False) -> list[str]:
    """Guesses at the English singular or plural of a word (the lexicon tells which exist);
    with ``classical``, Greek and Latin ones first (*phalanx* -> *phalanges*).

    >>> number_forms("bone"), number_forms("bones"), number_forms("phalanx", classical=True)
    (['bones'], ['bone'], ['phalanges', 'phalanxes'])
    """
    out = [word[: len(word) - len(a)] + b for a, b in CLASSICAL_PLURALS
           if classical and len(word) >= MIN_CLASSICAL and word.endswith(a)]
    if word.endswith("ies") and len(word) > 4:
        return [*out, word[:-3] + "y"]
    if word.endswith("es") and len(word) > 3 and word[-3] in "sxhz":
        return [*out, word[:-1], word[:-2]]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return [*out, word[:-1]]
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return [*out, word[:-1] + "ies"]
    return [*out, word + ("es" if word.endswith(("s", "x", "sh", "ch", "z")) else "s")]


def _copies_only(word: str, senses: Sequence[Sense]) -> bool:
    """Whether every sense merely copies the English word (``lyte``/``lyte``)."""
    return all(s.text.casefold() == word for s in senses)


def _similarity(word: str, text: str) -> float:
    return Levenshtein.normalized_similarity(word, text.casefold())


def _rerank(senses: list[Sense], counts: Mapping[str, int]) -> list[Sense]:
    """Senses re-scored by ``prior * (1 + log(1 + count))``."""
    if len(senses) < 2:
        return senses
    return _rescale(senses, [s.prior * (1.0 + math.log1p(counts.get(s.text.casefold(), 0)))
                             for s in senses])


def _rescale(senses: list[Sense], boosted: list[float]) -> list[Sense]:
    """Senses with new priors, rescaled so the best keeps the best old prior, best first."""
    scale = max(s.prior for s in senses) / max(boosted)
    out = [Sense(s.text, b * scale, s.kind) for s, b in zip(senses, boosted, strict=True)]
    return sorted(out, key=lambda s: -s.prior)


def kb_words(concepts: Iterable[Concept]) -> set[str]:
    """Distinct English word tokens of all names."""
    return {t for c in concepts for name in c.names for t in tokenize(name)}


def render_kb(concepts: Sequence[Concept], senses: WordSenses,
              settings: BuildSettings | None = None, attested: Any = None,
              progress: bool = False) -> Dictionary:
    """Render every name of every concept and collect the best renderings in a dictionary.

    Args:
        concepts: English concepts (all their names are rendered).
        senses: Word senses of the target language.
        settings: Builder settings; defaults when ``None``.
        attested: Optional object with ``contains(text) -> bool`` (a corpus); renderings it
            attests get source ``corpus`` and their score raised halfway to 1.

    A rendering that the fallbacks left as one of the concept's English names (its words
    copied, joined as the target joins words) is that name: it enters as the name, source
    ``kb``, with the rendering's score, as the English names kept by
    ``settings.keep_english`` do. A name without a letter or digit (``-``) is not kept.
        progress: Show a tqdm bar.

    Returns:
        The dictionary; each entry carries its score and source.
    """
    settings = settings if settings is not None else BuildSettings()
    nouns = head_nouns(name for c in concepts for name in c.names)
    composer = NameComposer(senses.profile, senses, settings.beam, settings.senses_per_word,
                            nouns, senses.compounds)
    cache: dict[str, list[Rendering]] = {}
    dictionary = Dictionary()
    for concept in tqdm(concepts, disable=not progress, desc="rendering", unit="concept"):
        best: dict[str, Rendering] = {}
        for name in concept.names:
            key = name.casefold()
            if key not in cache:
                cache[key] = _attest(composer.render(name, settings.n_best), attested)
            for r in cache[key]:
                if r.score >= settings.min_score and (r.text not in best
                                                      or best[r.text].score < r.score):
                    best[r.text] = r
        ranked = sorted(best.values(), key=lambda r: -r.score)[: settings.max_names_per_concept]
        _add_concept(dictionary, concept, ranked, set(best), settings)
    logger.info("rendered %d concepts into %d entries (%d distinct names); %d words had no "
                "lexicon entry", len(concepts), len(dictionary), len(dictionary.names),
                len(senses.missing))
    return dictionary


def _add_concept(dictionary: Dictionary, concept: Concept, ranked: Sequence[Rendering],
                 rendered: set[str], settings: BuildSettings) -> None:
    """Add a concept's best renderings and, with ``settings.keep_english``, its English names
    (those the renderings ``rendered`` do not already spell)."""
    english: dict[str, str] = {}
    for name in concept.names:
        if has_word_character(name):
            english.setdefault(_bare(name), name)
    copied: set[str] = set()
    for r in ranked:
        # a rendering the fallbacks left as an English name (its words copied, joined by the
        # target's joiner: 'insulinresistance') is that name, not a rendering
        copy = english.get(_bare(r.text)) if r.source == "transliterated" else None
        if copy is None:
            dictionary.add(r.text, concept.id, r.source, round(r.score, 4))
        else:
            dictionary.add(copy, concept.id, "kb", round(r.score, 4))
            copied.add(copy)
    if settings.keep_english:
        for name in dict.fromkeys(concept.names):
            if name not in rendered and name not in copied and has_word_character(name):
                dictionary.add(name, concept.id, "kb", settings.english_score)


def _bare(text: str) -> str:
    """A name's words, lower case, with nothing between them: a copy of an English name
    spelled with spaces, hyphens or no joiner at all reads the same."""
    return "".join(tokenize(text))


def _attest(renderings: list[Rendering], attested: Any) -> list[Rendering]:
    if attested is None:
        return renderings
    out = [Rendering(r.text, (1.0 + r.score) / 2, "corpus") if attested.contains(r.text) else r
           for r in renderings]
    return sorted(out, key=lambda r: -r.score)
