"""Tests of the sub-word fallbacks: English relatives and affixes learned from word pairs."""

from __future__ import annotations

import pytest

from xlnel.dictionary.langdata import LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.morphology import (
    COMPLETED_FACTOR,
    SPLIT_FACTOR,
    AffixModel,
    related_forms,
)
from xlnel.dictionary.render import RELATED_FACTOR, WordSenses

# A made-up language: "-itis" is "-zu" glued to the organ's word, "hyper-" is "gro-".
PAIRS = [("bronchus", "ribo"), ("bronchitis", "ribozu"), ("trachea", "kelo"),
         ("tracheitis", "kelozu"), ("arthritis", "fasuzu"), ("gastrum", "nobi"),
         ("tension", "tami"), ("hypertension", "grotami"), ("activity", "duna"),
         ("hyperactivity", "groduna"), ("football", "futobalo")]


def lookup(words: dict[str, str]):  # type: ignore[no-untyped-def]
    return words.get


@pytest.mark.parametrize(("word", "expected"), [
    ("corneal", "cornea"), ("mandibular", "mandible"), ("hypoplastic", "hypoplasia"),
    ("necrotic", "necrosis"), ("pharyngeal", "pharynx"), ("vertebral", "vertebra"),
    ("hypoplasia", "hypoplastic"), ("spinal", "spine")])
def test_related_forms_find_the_other_part_of_speech(word: str, expected: str) -> None:
    assert expected in related_forms(word)


def test_related_forms_leave_short_words_alone() -> None:
    assert related_forms("ear") == []
    assert "corneal" not in related_forms("corneal")


def test_affixes_are_aligned_only_through_translated_stems() -> None:
    model = AffixModel().fit(PAIRS)
    assert model.suffixes["itis"].target == "zu"
    assert model.prefixes["hyper"].target == "gro"
    # football/futobalo: "foot" has no translation here, so nothing is learned from it
    assert "ball" not in model.suffixes and "foot" not in model.prefixes
    # a stem seen only with a learned affix is learned too
    assert model.stems["arthr"] == "fasu"


def test_affix_rendering_of_missing_words() -> None:
    model = AffixModel().fit(PAIRS)
    words = dict(PAIRS)
    assert model.render("gastritis", lookup(words))[0][0] == "nobizu"
    assert model.render("hypertrachea", lookup(words))[0][0] == "grokelo"
    # two parts: a learned stem and a lexicon word, then the suffix
    assert model.render("arthrotracheitis", lookup(words), joiner="")[0][0] == "fasukelozu"
    assert model.render("unknownword", lookup(words)) == []


def test_affix_confidence_falls_with_how_the_stem_was_found() -> None:
    model = AffixModel().fit(PAIRS)
    share = model.suffixes["itis"].share
    words = dict(PAIRS)
    # "gastr" is a lexicon word only when completed ("gastrum"); "arthrotrache" is two learned
    # stems; "bronch" is one
    assert model.render("gastritis", lookup(words)) == [("nobizu", share * COMPLETED_FACTOR)]
    assert model.render("arthrotracheitis", lookup(words)) == [
        ("fasukelozu", share * SPLIT_FACTOR)]
    assert model.stems["bronch"] == "ribo"
    assert model.render("bronchitis", lookup({})) == [("ribozu", share)]


def test_affix_rendering_glues_every_part_with_the_joiner() -> None:
    model = AffixModel().fit(PAIRS)
    found = model.render("arthrotracheitis", lookup(dict(PAIRS)), joiner=" ")
    assert found[0][0] == "fasu kelo zu"


def test_word_senses_fall_back_to_relatives_then_affixes() -> None:
    lexicon = Lexicon(PAIRS + [("cornea", "kora")])
    senses = WordSenses(lexicon, LanguageProfile("zz"), affixes=AffixModel().fit(PAIRS))
    corneal = senses("corneal")
    assert corneal[0].text == "kora"
    assert corneal[0].prior == pytest.approx(RELATED_FACTOR)
    assert senses("gastritis")[0].text == "nobizu"
    assert "corneal" not in senses.missing and "gastritis" in senses.missing


def test_a_relative_the_pairs_only_copy_is_no_sense_of_the_word() -> None:
    from xlnel.dictionary.cognates import CognateRules

    # "lytic" has a relative ("lyte") whose one pair copies it: that says nothing of how the
    # language writes "lytic", so the word's own cognate rewrite comes first
    cognates = [("analytic", "analytique"), ("catalytic", "catalytique"),
                ("paralytic", "paralytique")]
    lexicon = Lexicon([*cognates, ("lyte", "lyte")])
    senses = WordSenses(lexicon, LanguageProfile("zz"), CognateRules().fit(cognates))
    assert senses("lytic")[0].text == "lytique"
    assert "lytic" in senses.missing
    # a relative with a real translation is still taken
    senses = WordSenses(Lexicon([*cognates, ("lyte", "lito")]), LanguageProfile("zz"),
                        CognateRules().fit(cognates))
    assert senses("lytic")[0].text == "lito"


def test_render_kb_keeps_the_english_names_unless_asked_not_to() -> None:
    from xlnel.dictionary.render import BuildSettings, render_kb
    from xlnel.types import Concept

    lexicon = Lexicon([("kidney", "neru"), ("disease", "malo")])
    senses = WordSenses(lexicon, LanguageProfile("zz", segment_order="keep"))
    concepts = [Concept("C1", ("Kidney disease",))]
    kept = render_kb(concepts, senses)
    assert {(e.name, e.source) for e in kept} >= {("neru malo", "composed"),
                                                  ("Kidney disease", "kb")}
    plain = render_kb(concepts, senses, BuildSettings(keep_english=False))
    assert all(e.source != "kb" for e in plain)
