"""Tests of the lexicon builder: lexicon, language files, cognate rules, composition, adapt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlnel.dictionary.adapt import adapt
from xlnel.dictionary.cognates import CognateRules
from xlnel.dictionary.compose import NameComposer, head_nouns, tokenize
from xlnel.dictionary.corpus_evidence import CorpusEvidence
from xlnel.dictionary.dictionary import Dictionary
from xlnel.dictionary.langdata import (
    WORD_ORDER_FILE,
    LanguageProfile,
    default_profile,
    language_dirs,
    load_profile,
    read_word_orders,
)
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.render import BuildSettings, WordSenses, number_forms, render_kb
from xlnel.dictionary.transliterate import is_unspaced_script
from xlnel.errors import ConfigError, FormatError
from xlnel.types import Concept

# A synthetic language "zz": head-first word order, "X of Y" -> "Y-ko X" with Y inflected by a
# suffix, words joined without spaces.
ZZ_FILE = """
segment_order: reverse
joiner: ''
connectors:
  of: ['{right|gen}ko{left}']
forms:
  gen:
    words: last
    rules: [['a$', 'an'], ['$', 'n']]
variants: [definite]
"""
ZZ_DEFINITE = """
  definite:
    words: first
    rules: [['^', 'el']]
"""
PAIRS = ["red\trossa", "red\trubi", "cell\tcela", "kidney\tneru", "disease\tmalo",
         "diseases\tmaloj", "nephritis\tnephrito", "arthritis\tarthrito", "colitis\tcolito",
         "gastritis\tgastrito", "dermatitis\tdermatito"]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def zz(tmp_path: Path) -> LanguageProfile:
    path = write(tmp_path / "zz.yaml", ZZ_FILE.replace("forms:\n", "forms:\n" + ZZ_DEFINITE[1:]))
    return load_profile("zz", path)


@pytest.fixture()
def lexicon(tmp_path: Path) -> Lexicon:
    return Lexicon.from_file(write(tmp_path / "pairs.tsv", "\n".join(PAIRS) + "\n"))


def test_lexicon_keeps_every_sense_in_order(lexicon: Lexicon) -> None:
    assert [s.text for s in lexicon.senses("red")] == ["rossa", "rubi"]
    assert lexicon.senses("red")[0].prior > lexicon.senses("red")[1].prior
    # a plural missing from the pairs is looked up through its singular
    assert [s.text for s in lexicon.senses("cells")] == ["cela"]
    assert lexicon.senses("3rd") == []


def test_lexicon_puts_copies_last() -> None:
    lexicon = Lexicon([("heart", "heart"), ("heart", "coro")])
    assert [s.text for s in lexicon.senses("heart")] == ["coro", "heart"]


def test_malformed_pair_file_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.tsv", "red\trossa\nno tab here\n")
    with pytest.raises(FormatError, match=r"bad\.tsv:2:"):
        Lexicon.from_file(path)
    with pytest.raises(FileNotFoundError, match="absent"):
        Lexicon.from_file(tmp_path / "absent.tsv")


def test_cognate_rules_rewrite_endings() -> None:
    rules = CognateRules().fit([tuple(p.split("\t")) for p in PAIRS])
    best, score = rules.rewrite("pancreatitis")[0]
    assert best == "pancreatito" and score == pytest.approx(1.0)
    assert rules.rewrite("red") == []  # too short to be rewritten
    assert CognateRules().fit([("heart", "心臓")]).rewrite("kidneys") == []


def test_composition_order_inflection_and_joining(lexicon: Lexicon, zz: LanguageProfile) -> None:
    composer = NameComposer(zz, WordSenses(lexicon, zz))
    texts = [r.text for r in composer.render("Red cell", n_best=10)]
    assert texts[0] == "celarossa"  # head first, no space
    assert "elcelarossa" in texts  # the definite variant
    top = composer.render("Disease of the kidney", n_best=1)[0]
    assert top.text == "nerunkomalo" and top.source == "composed"


def test_head_nouns_are_last_words_without_adjective_endings() -> None:
    names = ["Red cell", "Kidney cell", "Horseshoe kidney", "Small kidney", "Renal cell",
             "Cell renal"]
    assert head_nouns(names) == {"cell", "kidney"}  # "renal" ends a name, but as an adjective
    assert head_nouns(names, min_names=3) == {"cell"}


def test_noun_modifier_joined_after_its_head(lexicon: Lexicon, tmp_path: Path) -> None:
    text = ZZ_FILE.replace("joiner: ''", "joiner: ' '\nnoun_modifier: of").replace(
        "{right|gen}ko{left}", "{left} ko {right}").replace("variants: [definite]", "")
    profile = load_profile("zz", write(tmp_path / "zz.yaml", text))
    texts = [r.text for r in NameComposer(profile, WordSenses(lexicon, profile),
                                          nouns={"kidney"}).render("red kidney cell", 20)]
    assert "cela neru rossa" in texts and "cela rossa ko neru" in texts
    top = [r.text for r in NameComposer(profile, WordSenses(lexicon, profile),
                                        nouns={"kidney"}).render("red kidney cell", 1)]
    assert len(top) == 2 and top[1] == "cela rossa ko neru"  # one more, after the n best
    plain = NameComposer(profile, WordSenses(lexicon, profile)).render("red kidney cell", 20)
    assert not any(" ko " in r.text for r in plain)  # "kidney" not known as a noun


def test_unknown_word_goes_through_the_fallbacks(lexicon: Lexicon, zz: LanguageProfile) -> None:
    rules = CognateRules().fit([tuple(p.split("\t")) for p in PAIRS])
    senses = WordSenses(lexicon, zz, rules, transliterations={"insulin": [("insulino", 0.9)]})
    assert senses("pancreatitis")[0].text == "pancreatito"
    assert senses("insulin")[0].text == "insulino"
    assert senses("xylophone")[-1].text == "xylophone"  # the English word, last resort
    rendering = NameComposer(zz, senses).render("Insulin", n_best=1)[0]
    assert (rendering.text, rendering.source) == ("insulino", "transliterated")
    assert senses.missing == {"pancreatitis", "insulin", "xylophone"}


def test_a_fallback_text_found_twice_is_one_sense_at_its_best(lexicon: Lexicon,
                                                               zz: LanguageProfile) -> None:
    senses = WordSenses(lexicon, zz, transliterations={"insulin": [("insulino", 0.5),
                                                                   ("insulino", 0.9)]})
    found = [(s.text, s.prior) for s in senses("insulin") if s.text == "insulino"]
    assert found == [("insulino", pytest.approx(0.9 * senses.fallback_prior))]


def test_senses_pooled_with_the_other_number(zz: LanguageProfile) -> None:
    lexicon = Lexicon([("bone", "ossa"), ("bone", "ossik"), ("bone", "osto"), ("bones", "osto"),
                       ("bones", "bones"), ("ovary", "ovo"), ("ovaries", "ovarj")])
    pooled = WordSenses(lexicon, zz, cognate_bonus=0.0, number_factor=0.9)
    bone = {s.text: s.prior for s in pooled("bone")}
    # the plural's first sense raises the singular's third one; the plural's copy is no sense
    assert bone == pytest.approx({"ossa": 1.0, "osto": 0.9, "ossik": 1 / 1.35})
    assert [s.text for s in pooled("ovary")] == ["ovo", "ovarj"]
    # the other number's sense spelled as this word is no sense of a word with its own
    # (*shorts* -> *short*, a garment)
    garment = Lexicon([("short", "korta"), ("shorts", "short")])
    assert [s.text for s in WordSenses(garment, zz, number_factor=0.9)("short")] == ["korta"]
    assert [s.text for s in WordSenses(lexicon, zz, cognate_bonus=0.0)("bone")] == [
        "ossa", "ossik", "osto"]
    assert number_forms("bones") == ["bone"] and number_forms("boxes") == ["boxe", "box"]
    assert number_forms("ovary") == ["ovaries"] and number_forms("virus") == ["viruses"]
    # two letters ending in "es": no third-last letter to look at
    assert number_forms("es") == ["eses"]


def test_a_missing_word_takes_the_senses_of_its_classical_number(zz: LanguageProfile) -> None:
    lexicon = Lexicon([("phalanges", "falangi"), ("region", "regio"), ("regia", "reale")])
    senses = WordSenses(lexicon, zz, cognate_bonus=0.0, number_factor=0.9)
    assert [(s.text, s.prior) for s in senses("phalanx")] == [("falangi", pytest.approx(0.9))]
    assert [s.text for s in senses("region")] == ["regio"]  # a word the pairs hold
    assert number_forms("phalanx", classical=True) == ["phalanges", "phalanxes"]
    assert number_forms("septum", classical=True) == ["septa", "septums"]


def test_language_without_a_file_gets_generic_defaults(lexicon: Lexicon) -> None:
    profile = load_profile("qq-none")
    assert profile.source == "default" and profile.segment_order == "both"
    texts = {r.text for r in NameComposer(profile, WordSenses(lexicon, profile)).render(
        "red cell", n_best=10)}
    assert {"rossa cela", "cela rossa"} <= texts


def test_a_language_without_a_file_takes_its_listed_word_order(lexicon: Lexicon) -> None:
    # Spanish and Turkish have no file; the shipped table lists their order
    assert load_profile("es").segment_order == "reverse"
    assert load_profile("es").source == "default"
    assert load_profile("tr").segment_order == "keep"
    assert load_profile("pt-BR").segment_order == load_profile("pt_br").segment_order == "reverse"
    assert load_profile("ru").segment_order == "both"  # adjective first, genitive after
    texts = {r.text for r in NameComposer(load_profile("es"), WordSenses(lexicon, load_profile(
        "es"))).render("red cell", n_best=10)}
    assert "cela rossa" in texts and "rossa cela" not in texts


def test_the_word_order_table_agrees_with_the_shipped_files() -> None:
    table = next(d / WORD_ORDER_FILE for d in language_dirs() if (d / WORD_ORDER_FILE).is_file())
    orders = read_word_orders(table)
    for lang in ("fr", "de", "it", "ja", "he"):
        assert load_profile(lang).segment_order == orders[lang] == default_profile(
            lang).segment_order


@pytest.mark.parametrize("text, message, line", [
    ("es\treverse\n", "header", 1),
    ("# note\nlang\tsegment_order\nes\tsideways\n", "sideways", 3),
    ("lang\tsegment_order\nes\n", "expected", 2),
    ("lang\tsegment_order\nes\treverse\nES\tkeep\n", "twice", 3),
    ("# only a comment\n", "no 'lang", None),
])
def test_bad_word_order_table(tmp_path: Path, text: str, message: str, line: int | None) -> None:
    with pytest.raises(FormatError, match=message) as caught:
        read_word_orders(write(tmp_path / "orders.tsv", text))
    assert caught.value.line == line and caught.value.path == str(tmp_path / "orders.tsv")


def test_shipped_language_files_load() -> None:
    for lang in ("fr", "de", "it", "ja", "he"):
        assert load_profile(lang).source.endswith(f"{lang}.yaml")
    assert load_profile("ja").joiner == ""


@pytest.mark.parametrize("text, message", [
    ("segment_order: sideways\n", "segment_order"),
    ("colour: red\n", "unknown keys"),
    ("connectors:\n  of: ['{left|nope} {right}']\n", "nope"),
    ("connectors:\n  of: ['{middle}']\n", "may only hold"),
    ("variants: [nope]\n", "variants"),
    ("forms:\n  compound: {words: last, rules: [['$', 's']]}\n", "built in"),
    ("noun_modifier: of\n", "noun_modifier"),
    ("connectors: [1, 2\n", "invalid YAML"),
])
def test_bad_language_file(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        load_profile("zz", write(tmp_path / "zz.yaml", text))


def test_tokenize() -> None:
    assert tokenize("Abnormality of the X-linked (gene), 3rd") == [
        "abnormality", "of", "the", "x", "linked", "gene", "3rd"]


def test_render_kb_scores_and_corpus(lexicon: Lexicon, zz: LanguageProfile) -> None:
    concepts = [Concept("C1", ("Red cell", "Cell red")), Concept("C2", ("Kidney disease",))]
    corpus = CorpusEvidence(["neru rubi", "la rubi cela rubi"])
    senses = WordSenses(lexicon, zz, corpus_counts=corpus.counts)
    assert senses("red")[0].text == "rubi"  # the corpus' form wins
    dictionary = render_kb(concepts, senses, BuildSettings(n_best=2), corpus)
    assert dictionary.concept_ids() == {"C1", "C2"}
    assert all(0 < (e.score or 0) <= 1 for e in dictionary)
    assert dictionary.source_of("celarubi", "C1") == "composed"
    assert corpus.contains("neru") and not corpus.contains("nerumalo")


def test_dictionary_score_column_round_trip(tmp_path: Path) -> None:
    d = Dictionary()
    d.add("a b", "C1", "composed", 0.5)
    d.add("c", "C2", "kb")
    d.save(tmp_path / "d.tsv")
    assert (tmp_path / "d.tsv").read_text().splitlines()[0] == "name\tconcept_id\tsource\tscore"
    loaded = Dictionary.load(tmp_path / "d.tsv")
    assert loaded.score_of("a b", "C1") == pytest.approx(0.5) and loaded.score_of("c", "C2") is None
    old = write(tmp_path / "old.tsv", "name\tconcept_id\tsource\nx\tC3\ttranslated\n")
    assert Dictionary.load(old).source_of("x", "C3") == "translated"
    bad = write(tmp_path / "bad.tsv", "name\tconcept_id\tsource\tscore\nx\tC3\tkb\thigh\n")
    with pytest.raises(FormatError, match=r"bad\.tsv:2"):
        Dictionary.load(bad)


def test_adapt_writes_dictionary_and_report(tmp_path: Path) -> None:
    pairs = write(tmp_path / "pairs.tsv", "\n".join(PAIRS) + "\n")
    kb = write(tmp_path / "kb.tsv", "concept_id\tname\nC1\tRed cell\nC2\tPancreatitis of kidney\n")
    lang_file = write(tmp_path / "zz.yaml", ZZ_FILE.replace("variants: [definite]\n", ""))
    corpus = write(tmp_path / "corpus.txt", "celarossa\n")
    report = adapt("zz", pairs, [f"tsv:{kb}"], tmp_path / "out", corpus=[corpus],
                   language_file=lang_file)
    dictionary = Dictionary.load(tmp_path / "out" / "dictionary.tsv")
    assert dictionary.source_of("celarossa", "C1") == "corpus"
    assert dictionary.source_of("nerunkopancreatito", "C2") == "transliterated"
    saved = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert saved["dictionary"]["entries"] == report["dictionary"]["entries"] == len(dictionary)
    assert saved["peak_memory_mb"] > 0


def test_adapt_with_the_generic_grammar_ignores_the_shipped_file(tmp_path: Path) -> None:
    pairs = write(tmp_path / "pairs.tsv", "kidney\tniere\ncyst\tzyste\n")
    kb = write(tmp_path / "kb.tsv", "concept_id\tname\nC1\tCyst of kidney\n")
    shipped = adapt("de", pairs, [f"tsv:{kb}"], tmp_path / "shipped", transliteration_seconds=0)
    generic = adapt("de", pairs, [f"tsv:{kb}"], tmp_path / "generic", transliteration_seconds=0,
                    generic_grammar=True)
    assert shipped["language_file"].endswith("de.yaml") and generic["language_file"] == "default"
    def names(folder: str) -> set[str]:
        return {e.name for e in Dictionary.load(tmp_path / folder / "dictionary.tsv")}

    assert "zyste der niere" in names("shipped")  # the German template
    assert "zyste der niere" not in names("generic")
    assert load_profile("de", generic=True) == LanguageProfile("de", segment_order="keep")
    with pytest.raises(ValueError, match="exclude"):
        load_profile("de", tmp_path / "zz.yaml", generic=True)
    with pytest.raises(ConfigError, match="not both"):
        adapt("de", pairs, [f"tsv:{kb}"], tmp_path / "both", language_file=pairs,
              generic_grammar=True)
    assert not (tmp_path / "both").exists()


def test_adapt_takes_a_word_order_over_the_file_and_the_table(tmp_path: Path) -> None:
    pairs = write(tmp_path / "pairs.tsv", "kidney\tneru\ncyst\tcela\n")
    kb = write(tmp_path / "kb.tsv", "concept_id\tname\nC1\tKidney cyst\n")

    def names(folder: str, **kwargs: str) -> set[str]:
        report = adapt("es", pairs, [f"tsv:{kb}"], tmp_path / folder, transliteration_seconds=0,
                       **kwargs)  # type: ignore[arg-type]
        assert report["segment_order"] == kwargs.get("segment_order", "reverse")
        return {e.name for e in Dictionary.load(tmp_path / folder / "dictionary.tsv")}

    table = names("table")
    assert "cela neru" in table and "neru cela" not in table
    assert "neru cela" in names("keep", segment_order="keep")
    assert {"neru cela", "cela neru"} <= names("both", segment_order="both")
    with pytest.raises(ConfigError, match="sideways"):
        names("bad", segment_order="sideways")
    assert not (tmp_path / "bad").exists()


def test_a_language_without_a_file_in_an_unspaced_script_glues_its_words(
        tmp_path: Path) -> None:
    pairs = write(tmp_path / "pairs.tsv", "kidney\t腎臓\ncyst\t嚢胞\nstone\t結石\n")
    kb = write(tmp_path / "kb.tsv", "concept_id\tname\nC1\tKidney cyst\n")
    report = adapt("xx", pairs, [f"tsv:{kb}"], tmp_path / "out", transliteration_seconds=0)
    assert report["language_file"] == "default" and report["joiner"] == ""
    names = {e.name for e in Dictionary.load(tmp_path / "out" / "dictionary.tsv")}
    assert "腎臓嚢胞" in names and "腎臓 嚢胞" not in names
    assert is_unspaced_script(Lexicon([("kidney", "腎臓"), ("cat", "แมว")]))
    assert not is_unspaced_script(Lexicon([("kidney", "rein"), ("cyst", "кист")]))


def test_adapt_names_the_bad_kb_line(tmp_path: Path) -> None:
    pairs = write(tmp_path / "pairs.tsv", "\n".join(PAIRS) + "\n")
    kb = write(tmp_path / "kb.tsv", "concept_id\tname\nC1\tRed cell\nC2\t\n")
    with pytest.raises(FormatError, match=r"kb\.tsv:3"):
        adapt("zz", pairs, [f"tsv:{kb}"], tmp_path / "out")


def test_transliteration_pairs_and_script(tmp_path: Path) -> None:
    from xlnel.dictionary.transliterate import (
        is_latin_script,
        train_transliterator,
        transliteration_pairs,
    )

    lexicon = Lexicon([("insulin", "インスリン"), ("heart", "心臓"), ("dose", "ドーズ")])
    pattern = write(tmp_path / "kk.yaml", "transliteration_pattern: '^[\\u30a0-\\u30ff]+$'\n")
    pairs = transliteration_pairs(lexicon, load_profile("kk", pattern))
    assert pairs == [("insulin", "インスリン"), ("dose", "ドーズ")]
    assert not is_latin_script(lexicon) and is_latin_script(Lexicon([("red", "rouge")]))
    assert train_transliterator(pairs, "kk", tmp_path / "tr", seconds=1.0) is None  # too few
    # without a pattern and with too few Hebrew-like skeleton matches: romanized spellings
    assert transliteration_pairs(lexicon, LanguageProfile("kk")) == [("insulin", "インスリン")]
    cyrillic = Lexicon([("insulin", "инсулин"), ("heart", "сердце")])
    assert transliteration_pairs(cyrillic, LanguageProfile("ru")) == [("insulin", "инсулин")]


def test_adapt_learns_no_cognate_rules_for_another_script(tmp_path: Path) -> None:
    # the Latin pairs are noise among native ones: their endings would garble English words
    latin = [f"{w}itis\t{w}ito" for w in ("nephr", "arthr", "col", "gastr", "dermat", "gingiv")]
    native = [f"{w}\t{'ネフロ' * (i + 1)}" for i, w in enumerate(("kidney", "red", "cell", "blue",
                                                                  "green", "liver", "heart"))]
    pairs = write(tmp_path / "pairs.tsv", "\n".join(native * 2 + latin) + "\n")
    kb = write(tmp_path / "kb.tsv", "concept_id\tname\nC1\tRed cell\nC2\tPancreatitis\n")
    report = adapt("kk", pairs, [f"tsv:{kb}"], tmp_path / "out", transliteration_seconds=0)
    assert report["cognate_rules"] == 0
    dictionary = Dictionary.load(tmp_path / "out" / "dictionary.tsv")
    assert dictionary.source_of("pancreatito", "C2") is None


def test_a_copy_of_the_english_name_is_a_kb_name(lexicon: Lexicon) -> None:
    profile = default_profile("es")
    concepts = [Concept("C1", ("Xylophone",)), Concept("C2", ("Xylophone cell",)),
                Concept("C3", ("-", ".", "Red cell"))]
    dictionary = render_kb(concepts, WordSenses(lexicon, profile), BuildSettings(n_best=2))
    # the fallbacks left the name as it is: the English name, not a transliteration, once
    assert dictionary.source_of("Xylophone", "C1") == "kb" and "xylophone" not in dictionary
    assert dictionary.score_of("Xylophone", "C1") == pytest.approx(0.15)
    # a rendering with a translated word is still a rendering
    assert dictionary.source_of("cela xylophone", "C2") == "transliterated"
    assert dictionary.source_of("Xylophone cell", "C2") == "kb"
    # names of only punctuation are no names
    assert "-" not in dictionary and "." not in dictionary
    assert dictionary.source_of("cela rossa", "C3") == "composed"


def test_a_glued_copy_of_the_english_name_is_the_name(lexicon: Lexicon) -> None:
    profile = load_profile("ja")  # the shipped file joins words without spaces
    concepts = [Concept("C1", ("Xylo phone", "Red cell"))]
    dictionary = render_kb(concepts, WordSenses(lexicon, profile), BuildSettings(n_best=3))
    assert "xylophone" not in dictionary  # the English words glued: no rendering
    assert dictionary.source_of("Xylo phone", "C1") == "kb"
    assert dictionary.source_of("rossacela", "C1") == "composed"
