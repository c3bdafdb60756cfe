"""Tests of dictionary building from translated names and of translator evaluation."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from xlnel.dictionary.builder import build_dictionary, evaluate_translator, translate_names
from xlnel.dictionary.translator import CharTranslator, CharVocab, TranslatorConfig
from xlnel.errors import ConfigError
from xlnel.types import Concept

Variants = list[tuple[str, float]]

TABLE: dict[str, Variants] = {
    "chronic": [("כרוני", -0.1), ("כרונית", -0.3)],
    "disease": [("מחלה", -0.2), ("מחלת", -0.4)],
    "chronic disease": [("מחלה כרונית", -0.05)],
    "heart": [("לב", -0.1)],
    "insulin": [("אינסולין", -0.1)],
    "type": [("סוג", -0.2)],
}


class StubTranslator:
    """Looks names up in a table; records its calls."""

    def __init__(self, table: dict[str, Variants], kinds: Sequence[str] = (),
                 target_lang: str = "he") -> None:
        self.table, self.kinds, self.target_lang = table, tuple(kinds), target_lang
        self.calls: list[tuple[list[str], str | None]] = []

    def translate(self, names: Sequence[str], beam: int = 5, n_best: int = 5,
                  batch_size: int = 64, kind: str | None = None) -> list[Variants]:
        self.calls.append((list(names), kind))
        suffix = "ה" if kind == "transliteration" else ""
        return [[(t + suffix, s) for t, s in self.table.get(n, [])][:n_best] for n in names]


def test_translate_names_merges_whole_and_word_by_word() -> None:
    variants = translate_names(["Chronic  Disease"], StubTranslator(TABLE), n_best=3)
    # word combinations (mean of word scores): כרוני מחלה -0.15, then ties at -0.25; reversed
    # orders at the same scores; the whole-string translation -0.05 comes first
    assert list(variants) == ["chronic disease"]
    texts, scores = zip(*variants["chronic disease"], strict=True)
    assert texts == ("מחלה כרונית", "כרוני מחלה", "מחלה כרוני")
    assert scores == pytest.approx((-0.05, -0.15, -0.15))


def test_translate_names_without_reversal_keeps_order() -> None:
    variants = translate_names(["chronic disease"], StubTranslator(TABLE), n_best=5,
                               reverse_word_order=False)
    texts = [t for t, _ in variants["chronic disease"]]
    assert texts[:2] == ["מחלה כרונית", "כרוני מחלה"]
    assert "מחלה כרוני" not in texts
    assert variants["chronic disease"][1][1] == pytest.approx(-0.15)


def test_words_are_translated_once() -> None:
    stub = StubTranslator(TABLE)
    translate_names(["chronic disease", "heart disease", "disease", "heart"], stub, n_best=2)
    word_calls = [name for names, _ in stub.calls for name in names if " " not in name]
    assert sorted(word_calls) == ["chronic", "disease", "heart"]


def test_numbers_and_punctuation() -> None:
    variants = translate_names(["insulin, type 2"], StubTranslator(TABLE), n_best=1,
                               reverse_word_order=False)
    assert variants["insulin, type 2"][0][0] == "אינסולין סוג 2"


def test_untranslatable_word_gives_whole_string_only() -> None:
    table = {**TABLE, "heart xyz": [("לב איקס", -0.3)]}
    assert translate_names(["heart xyz"], StubTranslator(table)) == {"heart xyz": [("לב איקס",
                                                                                   -0.3)]}


def test_kinds_are_all_asked_for_and_merged() -> None:
    stub = StubTranslator(TABLE, kinds=("translation", "transliteration"))
    variants = translate_names(["heart"], stub, n_best=3)
    assert {kind for _, kind in stub.calls} == {"translation", "transliteration"}
    assert [t for t, _ in variants["heart"]] == ["לב", "לבה"]


def test_build_dictionary_keeps_concept_ids() -> None:
    concepts = [Concept("C1", ("Chronic disease", "chronic disease")), Concept("C2", ("heart",)),
                Concept("C3", ("zzz",))]
    d = build_dictionary(concepts, StubTranslator(TABLE), "he", n_best=3,
                         max_names_per_concept=2)
    assert d.concepts_of("מחלה כרונית") == ["C1"]
    assert d.concepts_of("לב") == ["C2"]
    assert len([e for e in d if e.concept_id == "C1"]) == 2
    assert d.count_by_source() == {"kb": 0, "translated": 3, "annotation": 0, "composed": 0,
                                   "transliterated": 0, "corpus": 0}


def test_build_dictionary_checks_arguments() -> None:
    with pytest.raises(ConfigError, match="'he'.*'ar'"):
        build_dictionary([], StubTranslator(TABLE), "ar")
    with pytest.raises(ValueError, match="max_names_per_concept"):
        build_dictionary([], StubTranslator(TABLE), "he", max_names_per_concept=0)
    assert len(build_dictionary([], StubTranslator(TABLE), "he", max_names_per_concept=None)) == 0


def test_build_dictionary_with_char_translator() -> None:
    config = TranslatorConfig(embedding_dim=8, hidden_size=8, seed=1)
    model = CharTranslator(config, CharVocab.build(["abcdefghijklmnopqrstuvwxyz"]),
                           CharVocab.build(["אבגד"]))
    concepts = [Concept("C1", ("heart attack",)), Concept("C2", ("insulin",))]
    d = build_dictionary(concepts, model, "he", n_best=2, max_names_per_concept=3)
    assert d.concept_ids() <= {"C1", "C2"}
    assert all(e.source == "translated" for e in d)


def test_evaluate_hand_worked() -> None:
    table = {"insulin": [("אינסולין", -0.1)], "heart": [("לבב", -0.2), ("לב", -0.3)]}
    pairs = [("insulin", "אינסולין"), ("heart", "לב"), ("heart", "לבבי"), ("cat", "חתול")]
    report = evaluate_translator(StubTranslator(table), pairs)
    # insulin: hit at 1, CER 0; heart: miss at 1, hit at 5, CER min(1/2, 1/4); cat: nothing, CER 1
    assert report["n"] == 3
    assert report["exact@1"] == pytest.approx(1 / 3)
    assert report["exact@5"] == pytest.approx(2 / 3)
    assert report["cer"] == pytest.approx((0 + 0.25 + 1) / 3)
    assert set(report["by_kind"]) == {"untagged"}


def test_evaluate_identical_and_empty() -> None:
    table = {"heart": [("לב", -0.1)]}
    assert evaluate_translator(StubTranslator(table), [("heart", "לב")])["cer"] == 0.0
    empty = evaluate_translator(StubTranslator(table), [])
    assert empty == {"n": 0, "exact@1": 0.0, "exact@5": 0.0, "cer": 0.0, "by_kind": {}}


def test_evaluate_by_kind() -> None:
    # the stub appends ה when asked for a transliteration: לבה against לבהט is one edit in four
    stub = StubTranslator({"heart": [("לב", -0.1)]}, kinds=("translation", "transliteration"))
    report = evaluate_translator(stub, [("heart", "לב", "translation"),
                                        ("heart", "לבהט", "transliteration")])
    assert report["by_kind"] == {
        "translation": {"n": 1, "exact@1": 1.0, "exact@5": 1.0, "cer": 0.0},
        "transliteration": {"n": 1, "exact@1": 0.0, "exact@5": 0.0, "cer": 0.25},
    }


def test_punctuation_names_are_skipped_and_copies_are_kb_names() -> None:
    concepts = [Concept("C1", ("-", "heart")), Concept("C2", (".",)), Concept("C3", ("21",))]
    dictionary = build_dictionary(concepts, StubTranslator(TABLE), "he")
    assert dictionary.names == ["לב", "21"] and "-" not in dictionary
    assert dictionary.source_of("לב", "C1") == "translated"
    assert dictionary.source_of("21", "C3") == "kb"  # a number is copied, not translated


def test_an_empty_kb_gives_an_empty_dictionary_and_one_concept_works() -> None:
    assert len(build_dictionary([], StubTranslator(TABLE), "he")) == 0
    one = build_dictionary([Concept("C1", ("Chronic disease",))], StubTranslator(TABLE), "he",
                           max_names_per_concept=1)
    assert [(e.name, e.concept_id) for e in one] == [("מחלה כרונית", "C1")]


def test_words_of_a_script_without_spaces_are_glued() -> None:
    table = {"chronic": [("慢性", -0.1)], "kidney": [("腎臓", -0.1)], "disease": [("病", -0.1)],
             "insulin": [("インスリン", -0.1)], "type": [("型", -0.2)]}
    variants = translate_names(["Chronic kidney disease", "insulin, type 2"],
                               StubTranslator(table, target_lang="ja"), n_best=2,
                               reverse_word_order=False)
    assert variants["chronic kidney disease"][0][0] == "慢性腎臓病"
    assert variants["insulin, type 2"][0][0] == "インスリン型2"
    # a script written with spaces keeps them
    assert translate_names(["heart disease"], StubTranslator(TABLE), n_best=1,
                           reverse_word_order=False)["heart disease"][0][0] == "לב מחלה"
