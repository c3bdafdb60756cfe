"""Tests of the morpheme alignments learned for scripts written without spaces."""

from __future__ import annotations

import re

from xlnel.dictionary.compose import NameComposer
from xlnel.dictionary.langdata import LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.morphemes import LEFTOVER_FACTOR, MorphemeTable
from xlnel.dictionary.render import WordSenses

# A made-up language written without spaces: hepat- is ж, nephr- is ф, -itis is ю,
# -oma is э, -cyte is ц; gastr- (щ) and card- (к) are seen in two pairs only.
PAIRS = [("hepatitis", "жю"), ("nephritis", "фю"), ("gastritis", "щю"),
         ("hepatoma", "жэ"), ("gastroma", "щэ"), ("cardioma", "кэ"),
         ("hepatocyte", "жц"), ("nephrocyte", "фц"), ("cardiocyte", "кц"),
         ("nephroma", "фэ"), ("duct", "д"), ("kidney", "фи"), ("radio", "ラジオ")]
KATAKANA = re.compile("^[\u30a0-\u30ff]+$")


def table() -> MorphemeTable:
    return MorphemeTable().fit(PAIRS, transliteration=KATAKANA)


def test_beginnings_and_endings_are_aligned_by_co_occurrence() -> None:
    learned = table()
    assert learned.prefixes["hepat"] == ("ж", 1.0)
    assert learned.prefixes["nephr"] == ("ф", 1.0)
    assert learned.suffixes["itis"] == ("ю", 1.0)
    assert learned.suffixes["cyte"] == ("ц", 1.0)
    # two pairs are too few
    assert "gastr" not in learned.prefixes and "card" not in learned.prefixes


def test_transliterations_and_copies_teach_nothing() -> None:
    learned = MorphemeTable().fit([*PAIRS, ("radar", "ラダー"), ("radius", "ラジウス"),
                                   ("ratio", "ratio")], transliteration=KATAKANA)
    assert "rad" not in learned.prefixes
    assert all(not piece.isascii() for piece, _ in learned.prefixes.values())


def test_vocabulary_keeps_only_the_parts_of_words_to_render() -> None:
    learned = MorphemeTable().fit(PAIRS, vocabulary={"hepatic", "hepatoid"})
    assert "hepat" in learned.prefixes
    assert not learned.suffixes


def test_missing_words_are_composed_from_parts_and_lexicon_words() -> None:
    learned = table()
    words = {"duct": "д"}
    # beginning + a lexicon word + ending
    assert learned.render("hepatductitis", words.get)[0] == ("ждю", 1.0)
    # a short leftover between the parts, or after them (an adjective ending), is dropped
    assert learned.render("nephritoma", words.get)[0] == ("фэ", LEFTOVER_FACTOR)
    assert learned.render("hepatic", words.get)[0] == ("ж", LEFTOVER_FACTOR)
    assert learned.render("unrelated", words.get) == []


def test_word_senses_and_composer_use_the_morphemes() -> None:
    profile = LanguageProfile("zz", segment_order="keep", joiner="",
                              transliteration_pattern=KATAKANA)
    senses = WordSenses(Lexicon(PAIRS), profile, morphemes=table())
    assert senses("hepatic")[0].text == "ж"
    # modifier before head, no space: "hepatic duct" -> жд
    assert NameComposer(profile, senses).render("hepatic duct")[0].text == "жд"


def test_copies_are_no_translation_for_another_script() -> None:
    profile = LanguageProfile("zz", joiner="")
    pairs = [("dist", "dist"), ("distal", "ди")]
    assert WordSenses(Lexicon(pairs), profile)("dist")[0].text == "dist"
    senses = WordSenses(Lexicon([("dist", "dist")]), profile, keep_copies=False)
    assert senses("dist")[0].kind == "copy"
    # a relative known only as a copy is no sense either: "distal" is not rendered "dist"
    assert senses("distal") == [s for s in senses("distal") if s.kind == "copy"]


def test_native_senses_come_before_transliterations() -> None:
    profile = LanguageProfile("zz", joiner="", transliteration_pattern=KATAKANA)
    lexicon = Lexicon([("bone", "ボーン"), ("bone", "骨")])
    assert WordSenses(lexicon, profile)("bone")[0].text == "ボーン"
    lowered = WordSenses(lexicon, profile, transliteration_factor=0.5)("bone")
    assert [s.text for s in lowered] == ["骨", "ボーン"]
