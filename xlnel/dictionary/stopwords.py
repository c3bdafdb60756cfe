"""Stop words for a language without a list: the word pairs' renderings of English stop words.

A candidate span may not start or end with a stop word (:mod:`xlnel.candidates.spans`), and
xlnel ships lists for a few languages only; without one, spans such as *une hypertension*
compete with *hypertension* for the same gold mention. The word pairs render the English
function words into the target's (*the* -> *le*, *les*, *la*; *with* -> *avec*).
A rendering becomes a stop word when it is one of the first ``senses`` renderings of an English
stop word, and so does a word of the language file's connector templates (*de*, *du*, *des* of
``'{left} de {right}'``: pairs often lack *of*), unless an English content word (a word of the
knowledge base's names that is no stop word) has it among its renderings: a word that also
renders *dead* or *pain* (or *secondary*, of *secondary to*) may start or end a name.
``xlnel adapt`` writes the list next to the dictionary; a pipeline takes it with
``candidates.stopwords``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from xlnel.dictionary.langdata import TEMPLATE_FIELD, LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.normalization import normalize_string
from xlnel.stopwords import load_stopwords

__all__ = ["connector_words", "translated_stopwords"]

#: Renderings of each English stop word taken, first as the pairs list them.
STOPWORD_SENSES = 3


def connector_words(profile: LanguageProfile) -> set[str]:
    """The words of a language file's connector templates, normalised (none without a file)."""
    return {word for templates in profile.connectors.values() for template in templates
            for word in normalize_string(TEMPLATE_FIELD.sub(" ", template),
                                         profile.lang).split()}


def translated_stopwords(lexicon: Lexicon, lang: str, content_words: Iterable[str],
                         english: Collection[str] | None = None,
                         senses: int = STOPWORD_SENSES,
                         connectors: Iterable[str] = ()) -> list[str]:
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
    return sorted(candidates - vetoed)
