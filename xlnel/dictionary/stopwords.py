"""Stop words for a language without a list: the word pairs' renderings of English stop words.

A candidate span may not start or end with a stop word (:mod:`xlnel.candidates.spans`), and
xlnel ships lists for a few languages only; without one, spans such as *une hypertension*
compete with *hypertension* for the same gold mention. The word pairs render the English
function words into the target's (*the* -> *le*, *les*, *la*; *with* -> *avec*).
A rendering becomes a stop word when it is one of the first ``senses`` renderings of an English
stop word, and so does a word of the language file's connector templates (*de*, *du*, *des* of
``'{left} de {right}'``: pairs often lack *of*), unless an English content word (a word of the
knowledge base's names that is no stop word) has it among its renderings: a word that also
renders *dead* or *pain* (or *secondary*, of *secondary to*) may start or end a name. Nor is
a word that starts at least :data:`MIN_NAME_STARTS` of the knowledge base's English names as
they are spelled (:func:`name_starts`): the target may write it the same way (*non* renders
*not*, and a French name may start *non progressif* as an English one starts *Non-progressive*).
``xlnel adapt`` writes the list of :func:`kb_stopwords` next to the dictionary; a pipeline
takes it with ``candidates.stopwords``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from xlnel.dictionary.compose import tokenize
from xlnel.dictionary.langdata import TEMPLATE_FIELD, LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.render import kb_words
from xlnel.normalization import normalize_string
from xlnel.stopwords import load_stopwords
from xlnel.types import Concept

__all__ = ["MIN_NAME_STARTS", "connector_words", "kb_stopwords", "name_starts",
           "translated_stopwords"]

#: Renderings of each English stop word taken, first as the pairs list them.
STOPWORD_SENSES = 3
#: English names a word must start to be no stop word (HPO: *non* starts 54, the next word
#: of a derived list spelled like an English first word, MUSE's English copy *two*, 8).
MIN_NAME_STARTS = 10


def name_starts(names: Iterable[str]) -> Counter[str]:
    """How many of the English names start with each word (lower-cased tokens)."""
    return Counter(tokens[0] for tokens in map(tokenize, names) if tokens)


def connector_words(profile: LanguageProfile) -> set[str]:
    """The words of a language file's connector templates, normalised (none without a file)."""
    return {word for templates in profile.connectors.values() for template in templates
            for word in normalize_string(TEMPLATE_FIELD.sub(" ", template),
                                         profile.lang).split()}


def translated_stopwords(lexicon: Lexicon, lang: str, content_words: Iterable[str],
                         english: Collection[str] | None = None,
                         senses: int = STOPWORD_SENSES,
                         connectors: Iterable[str] = (),
                         starts: Mapping[str, int] | None = None) -> list[str]:
    """The target-language stop words the pairs give, normalised, sorted.

    Args:
        lexicon: Word pairs as a lexicon (English -> target senses).
        lang: Target language (its normalisation rules apply).
        content_words: English words of the knowledge base's names; those that are no stop
            word veto their renderings.
        english: English stop words; ``None`` for the shipped English list.
        senses: Renderings of each English stop word considered.
        connectors: Normalised words of the language's connector templates
            (:func:`connector_words`), stop words too unless vetoed.
        starts: First-word counts of the knowledge base's English names
            (:func:`name_starts`); a word starting at least :data:`MIN_NAME_STARTS` of them
            is vetoed. ``None``: no such veto.

    Returns:
        One-word renderings (a rendering with a space, or that normalises to nothing or to
        several words, is left out).
    """
    english = load_stopwords("en") if english is None else english
    candidates = set(connectors)
    for word in english:
        if word not in lexicon:  # the pairs' own words only: no guessed base forms
            continue
        for sense in lexicon.senses(word)[:senses]:
            text = normalize_string(sense.text, lang)
            if text and " " not in text:
                candidates.add(text)
    vetoed: set[str] = set()
    for word in set(content_words) - set(english):
        vetoed.update(normalize_string(s.text, lang) for s in lexicon.senses(word))
    if starts is not None:
        vetoed.update(w for w in candidates if starts.get(w, 0) >= MIN_NAME_STARTS)
    return sorted(candidates - vetoed)


def kb_stopwords(lexicon: Lexicon, profile: LanguageProfile, concepts: Sequence[Concept],
                 content_words: Iterable[str] | None = None) -> list[str]:
    """The stop words ``xlnel adapt`` writes for ``profile.lang``: :func:`translated_stopwords`
    with the language file's connector words, vetoed by the concepts' English words and by the
    words their names start with.

    Args:
        lexicon: Word pairs as a lexicon (English -> target senses).
        profile: The target language's grammar (its connector templates).
        concepts: The knowledge base's English concepts.
        content_words: Their English words when already tokenised
            (:func:`~xlnel.dictionary.render.kb_words`); ``None`` tokenises them here.
    """
    words = kb_words(concepts) if content_words is None else content_words
    return translated_stopwords(lexicon, profile.lang, words, connectors=connector_words(profile),
                                starts=name_starts(n for c in concepts for n in c.names))
