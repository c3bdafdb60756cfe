"""Tests of the mechanisms learned from word pairs: spelling rewrites, compound forms, agreement.

Each uses a tiny synthetic language, so nothing depends on a real one.
"""

from __future__ import annotations

from xlnel.dictionary.cognates import CognateRules
from xlnel.dictionary.compose import NameComposer, inflections
from xlnel.dictionary.compounds import CompoundConfig, CompoundForms
from xlnel.dictionary.langdata import LanguageProfile
from xlnel.dictionary.lexicon import Lexicon, Sense
from xlnel.dictionary.render import WordSenses
from xlnel.dictionary.spelling import SpellingRules

# "yy" writes an English initial c as k, and -ia as -io (and is otherwise English-like)
COGNATES = [("cabala", "kabala"), ("cadaver", "kadaver"), ("camera", "kamera"),
            ("canary", "kanary"), ("capital", "kapital"), ("cantor", "kantor"),
            ("anemia", "anemio"), ("mania", "manio"), ("phobia", "phobio"), ("hernia", "hernio"),
            ("amnesia", "amnesio"), ("heart", "qor")]


def test_spelling_rules_learn_a_regular_rewrite() -> None:
    rules = SpellingRules().fit(COGNATES)
    assert rules.respell("carbon") == "karbon"
    assert rules.respell("dorsal") == "dorsal"  # no rule: unchanged
    assert rules.respell("cardia") == "kardio"
    assert rules.respell("carb", final=False) == "karb"


def test_spelling_rules_need_support_and_cognates() -> None:
    assert len(SpellingRules().fit(COGNATES[:3])) == 0  # too few pairs show a rewrite
    assert len(SpellingRules().fit([("camera", "照相机")] * 6)) == 0  # not cognates


def test_cognate_rewrite_puts_the_respelled_form_first() -> None:
    rules = CognateRules().fit(COGNATES)
    found = [text for text, _ in rules.rewrite("calvaria")]
    assert found[0] == "kalvario"
    assert "calvario" in found


def test_word_the_pairs_only_copy_gets_its_cognate_rendering() -> None:
    lexicon = Lexicon([("calvaria", "calvaria")])
    senses = WordSenses(lexicon, LanguageProfile("yy"), CognateRules().fit(COGNATES))
    texts = [s.text for s in senses("calvaria")]
    assert "kalvario" in texts
    assert texts.index("kalvario") < texts.index("calvaria")


# "zz" compounds: a word ending in -a takes -s- before the next noun
ZZ_WORDS = ["kala", "mora", "tena", "sura", "pela", "dobo", "fimu", "kalasdobo", "morasfimu",
            "tenasdobo", "surasfimu", "pelasdobo", "tek", "tekfimu"]


def test_compound_forms_learned_per_word_and_per_ending() -> None:
    forms = CompoundForms(CompoundConfig(ending=1)).fit(ZZ_WORDS)
    assert forms.form("kala") == "kalas"
    assert forms.form("tek") == "tek"  # seen without a link
    assert forms.form("bina") == "binas"  # unseen: the change of words ending in -a
    assert forms.form("bino") == "bino"
    assert forms.join(["sura", "tek", "dobo"]) == "surastekdobo"


def _composer(profile: LanguageProfile, table: dict[str, list[str]], **kwargs: object
              ) -> NameComposer:
    def senses(word: str) -> list[Sense]:
        return [Sense(t, 1.0 / (1 + 0.35 * i)) for i, t in enumerate(table.get(word, []))]

    return NameComposer(profile, senses, **kwargs)  # type: ignore[arg-type]


def test_compound_glues_the_head_and_the_nouns_before_it() -> None:
    profile = LanguageProfile("zz", segment_order="keep", compound=True)
    table = {"severe": ["grava"], "kidney": ["kala"], "cyst": ["dobo"]}
    forms = CompoundForms(CompoundConfig(ending=1)).fit(ZZ_WORDS)
    composer = _composer(profile, table, nouns={"kidney", "cyst"}, compounds=forms)
    texts = [r.text for r in composer.render("severe kidney cyst", n_best=5)]
    assert "grava kalasdobo" in texts
    assert "gravakaladobo" not in texts  # the adjective stays a word of its own
    # without learned forms every word of the chain is glued as it is
    plain = _composer(profile, table, nouns={"kidney", "cyst"})
    assert "gravakaladobo" in [r.text for r in plain.render("severe kidney cyst", n_best=5)]


def test_compound_template_form_links_the_right_phrase() -> None:
    # "X of Y" as the compound "YX": the built-in form puts Y's last word in its compound form
    profile = LanguageProfile("zz", segment_order="keep", compound=True,
                              connectors={"of": ("{right|compound}{left}",)})
    table = {"kidney": ["kala"], "cyst": ["dobo"], "small": ["mini"]}
    forms = CompoundForms(CompoundConfig(ending=1)).fit(ZZ_WORDS)
    composer = _composer(profile, table, compounds=forms)
    assert composer.render("cyst of the kidney")[0].text == "kalasdobo"
    assert composer.render("cyst of the small kidney")[0].text == "mini kalasdobo"
    # without learned forms the word stays as it is
    assert _composer(profile, table).render("cyst of the kidney")[0].text == "kaladobo"


def test_inflections_are_the_senses_sharing_a_stem() -> None:
    assert inflections("fino", ["fino", "fina", "delgado", "finos"]) == ["fino", "fina", "finos"]
    assert inflections("fino", ["fi", "finalmente"]) == ["fino"]


def test_agreement_picks_the_form_ending_like_the_head() -> None:
    table = {"thin": ["fino", "finos", "fina"], "rib": ["kosta"], "ribs": ["kostos"]}
    agreeing = _composer(LanguageProfile("ww", segment_order="reverse", agreement=True), table)
    assert agreeing.render("thin rib")[0].text == "kosta fina"
    assert agreeing.render("thin ribs")[0].text == "kostos finos"
    plain = _composer(LanguageProfile("ww", segment_order="reverse"), table)
    assert plain.render("thin rib")[0].text == "kosta fino"
