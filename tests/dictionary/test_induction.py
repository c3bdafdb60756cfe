"""Corpus-driven induction on a made-up language (``qq``): tiny pairs, KB and corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xlnel.dictionary.adapt import ATTESTED_FILE, adapt
from xlnel.dictionary.corpus_evidence import CorpusEvidence, attached_letters, lemma_rules
from xlnel.dictionary.dictionary import Dictionary, Entry
from xlnel.dictionary.induction import (
    InductionSettings,
    KbIndex,
    SkeletonIndex,
    common_words,
    corpus_ngrams,
    drop_common,
    english_key,
    english_stem,
    induce_entries,
    unprefixed,
)
from xlnel.dictionary.langdata import LanguageProfile, load_profile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.errors import FormatError
from xlnel.types import Concept

# "qq" glues the preposition "b" to the next word and makes plurals with "-an".
QQ_FILE = "segment_order: reverse\nprefixes: [b]\nlemma_rules: [['an$', '']]\n"
PAIRS = [("heart", "kor"), ("disease", "malu"), ("disease", "sik"), ("of", "da"),
         ("pain", "dor"), ("high", "tal"), ("blood", "sem"), ("pressure", "pres"),
         ("attack", "zat"), ("in", "ni"), ("cat", "miu")]
CONCEPTS = [Concept("C1", ("Heart disease", "Diseases of the heart")),
            Concept("C2", ("Heart attack",)), Concept("C3", ("High blood pressure",)),
            Concept("C4", ("Pain",)), Concept("C5", ("Ramipril",))]
CORPUS = ["Malu kor, terrible. Bdor here; doran again, dor.",
          "malu da kor and sem tal pres. btal pres", "da kor", "The pain, miu. רמיפריל"]


@pytest.fixture
def profile(tmp_path: Path) -> LanguageProfile:
    path = tmp_path / "qq.yaml"
    path.write_text(QQ_FILE, encoding="utf-8")
    return load_profile("qq", path)


def induced(profile: LanguageProfile, **settings: Any) -> dict[str, set[str]]:
    entries = induce_entries(CORPUS, Lexicon(PAIRS), profile, CONCEPTS,
                             InductionSettings(**settings))
    out: dict[str, set[str]] = {}
    for e in entries:
        assert e.source == "corpus" and e.score is not None and 0 < e.score <= 1
        out.setdefault(e.name, set()).add(e.concept_id)
    return out


def test_english_keys_ignore_order_inflection_and_function_words() -> None:
    assert english_stem("diseases") == "disease" and english_stem("allergies") == "allergy"
    assert english_stem("sclerosis") == "sclerosis" and english_stem("virus") == "virus"
    assert english_key("Diseases of the heart") == english_key("heart disease")
    assert english_key("Diabetes Mellitus, Type 2") == ("2", "diabete", "mellitus")
    index = KbIndex(CONCEPTS)
    assert index.concepts(("disease", "heart")) == ["C1"] and index.concepts(("x",)) == []


def test_corpus_ngrams_stay_inside_punctuation() -> None:
    grams = corpus_ngrams(["a b, c d e."], "qq", 3)
    assert grams[("a", "b")] == 1 and ("b", "c") not in grams
    assert ("c", "d", "e") in grams and len(max(grams, key=len)) == 3


def test_induction_reads_ngrams_back_into_kb_names(profile: LanguageProfile) -> None:
    found = induced(profile)
    assert found["malu kor"] == {"C1"}          # head-first order, read back order-free
    assert found["malu da kor"] == {"C1"}       # a function word inside the n-gram
    assert found["sem tal pres"] == {"C3"}      # three words in any order
    assert found["dor"] == found["bdor"] == found["doran"] == {"C4"}  # prefix, lemma rule
    assert found["pain"] == {"C4"}              # a word in the KB's own script
    assert "da kor" not in found                # a function word at an end
    assert found["kor"] == {"C1", "C2"}         # KB names with one content word more
    assert "miu" not in found                   # translated, but no KB name says "cat"
    assert found["רמיפריל"] == {"C5"}           # sounds like a KB word the pairs lack


def test_induction_settings(profile: LanguageProfile) -> None:
    assert "רמיפריל" not in induced(profile, transliteration_prior=0.0)
    assert "sem tal pres" not in induced(profile, max_words=2)
    assert "kor" not in induced(profile, extra_word_factor=0.0)
    assert "kor" not in induced(profile, max_concepts=1)
    assert induced(profile, min_score=1.01) == {}
    scores = {e.name: e.score for e in induce_entries(CORPUS, Lexicon(PAIRS), profile,
                                                      CONCEPTS)}
    assert scores["dor"] == 1.0 and scores["bdor"] is not None and scores["bdor"] < 1.0
    assert scores["kor"] == pytest.approx(0.7)


def test_strip_factor_scores_a_stripped_prefix(profile: LanguageProfile) -> None:
    def score(factor: float) -> float | None:
        entries = induce_entries(CORPUS, Lexicon(PAIRS), profile, CONCEPTS,
                                 InductionSettings(strip_factor=factor))
        return {e.name: e.score for e in entries}["bdor"]

    assert score(1.0) == 1.0
    assert score(0.5) < score(0.8) < 1.0  # type: ignore[operator]


def test_skeleton_matches_come_in_an_order_independent_of_the_input() -> None:
    words = ["rimiprol", "ramipril", "remipral", "ramiprilat"]
    for order in (words, words[::-1]):
        index = SkeletonIndex(order)
        assert [w for w, _ in index.lookup("רמיפריל", 0.5)] == ["ramipril", "remipral",
                                                                 "rimiprol"]


def test_unprefixed_strips_up_to_two_letters_leaving_two() -> None:
    assert list(unprefixed("bvdor", {"b", "v"})) == [("vdor", 1), ("dor", 2)]
    assert list(unprefixed("bdor", {"v"})) == []
    assert list(unprefixed("bvd", {"b", "v"})) == [("vd", 1)]


def test_names_without_a_glued_prefix_are_added(profile: LanguageProfile) -> None:
    found = induced(profile)
    assert found["tal pres"] == {"C3"} and "btal pres" in found  # "btal" read as "b" + "tal"


def test_language_file_prefixes_must_be_letters(tmp_path: Path) -> None:
    path = tmp_path / "qq.yaml"
    path.write_text("prefixes: [ab]\n", encoding="utf-8")
    with pytest.raises(FormatError, match="single letters"):
        load_profile("qq", path)
    path.write_text("lemma_rules: [['(', '']]\n", encoding="utf-8")
    with pytest.raises(FormatError, match="regular expression"):
        load_profile("qq", path)


def test_adapt_adds_induced_entries_and_writes_attested(tmp_path: Path,
                                                         profile: LanguageProfile) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{en}\t{qq}\n" for en, qq in PAIRS), encoding="utf-8")
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\n" + "".join(f"{c.id}\t{n}\n" for c in CONCEPTS
                                                 for n in c.names), encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    report = adapt("qq", pairs, [f"tsv:{kb}"], tmp_path / "out", corpus=[corpus],
                   language_file=tmp_path / "qq.yaml", transliteration_seconds=0)
    dictionary = Dictionary.load(tmp_path / "out" / "dictionary.tsv")
    assert "C1" in dictionary.concepts_of("malu da kor")
    attested = Dictionary.load(tmp_path / "out" / ATTESTED_FILE)
    assert {e.source for e in attested} == {"corpus"} and "bdor" in attested
    assert report["induced_entries"] > 0
    plain = adapt("qq", pairs, [f"tsv:{kb}"], tmp_path / "plain", corpus=[corpus],
                  language_file=tmp_path / "qq.yaml", transliteration_seconds=0, induce=False)
    assert "induced_entries" not in plain


def test_common_words_are_the_targets_of_the_first_english_words() -> None:
    pairs = [("the", "da"), ("the", "de"), ("cat", "miu"), ("heart", "kor"), ("cat", "kat")]
    assert common_words(pairs, 2, "qq") == {"da", "de", "miu"}
    assert common_words(pairs, 0, "qq") == frozenset()


def test_drop_common_drops_everyday_one_word_names_with_or_without_a_prefix() -> None:
    entries = [Entry("miu", "C1", "corpus", 0.9), Entry("bmiu", "C1", "corpus", 0.9),
               Entry("kor", "C2", "corpus", 0.3), Entry("miu kor", "C3", "corpus", 0.1)]
    kept = drop_common(entries, frozenset({"miu"}), ["b"])
    assert [e.name for e in kept] == ["kor", "miu kor"]
    kept = drop_common(entries, frozenset(), ["b"], min_single_score=0.5)
    assert [e.name for e in kept] == ["miu", "bmiu", "miu kor"]
    # common_words normalises; with lang the names are normalised too before the comparison
    upper = [Entry("MIU", "C1", "corpus", 0.9)]
    assert drop_common(upper, frozenset({"miu"}), [], lang="qq") == []
    assert drop_common(upper, frozenset({"miu"}), []) == upper


# Twelve more "qq" words, each in the corpus alone and with the glued "b" before it.
GLUED = ["kaso", "pelu", "rimo", "tusa", "venu", "lopi", "gema", "hoti", "nura", "siko",
         "fane", "dupo"]


def test_attached_letters_are_the_letters_glued_to_many_target_words() -> None:
    text = " ".join(f"{w} b{w}" for w in GLUED) + " rkaso"  # "r" before one word: chance
    evidence = CorpusEvidence([text])
    # a word the corpus lacks ("abcd") or shorter than min_length ("x") does not count
    shares = evidence.letter_shares(GLUED + ["abcd", "x"])
    assert shares == {"b": (1.0, 12), "r": (pytest.approx(1 / 12), 1)}
    assert attached_letters(shares) == {"b": 1.0}
    assert attached_letters(shares, min_words=13) == {}
    assert attached_letters(shares, min_share=1.01) == {}
    assert CorpusEvidence([" ".join(GLUED)]).letter_shares(GLUED) == {}
    assert CorpusEvidence(["nothing here"]).letter_shares(GLUED) == {}


def test_lemma_rules_are_the_endings_many_corpus_words_swap_for_a_target_word() -> None:
    text = " ".join(f"{w} {w}an" for w in GLUED) + " kasu"  # "kasu" for "kaso": chance
    evidence = CorpusEvidence([text])
    # a word the corpus lacks ("abcd") is not in the denominator; "kasu" swaps two endings
    shares = evidence.ending_shares(GLUED + ["abcd"], str)
    assert shares == {("an", ""): (1.0, 12), ("su", "so"): (pytest.approx(1 / 12), 1),
                      ("u", "o"): (pytest.approx(1 / 12), 1)}
    assert lemma_rules(shares) == {("an", ""): 1.0}
    assert lemma_rules(shares, min_words=13) == {} and lemma_rules(shares, min_share=1.01) == {}
    assert lemma_rules(shares, min_share=0.05, min_words=1) == {
        ("an", ""): 1.0, ("su", "so"): pytest.approx(1 / 12), ("u", "o"): pytest.approx(1 / 12)}
    # words are compared after the normalisation given (here: every "a" read as "o")
    assert CorpusEvidence(["kasa kosoon"]).ending_shares(
        ["kaso"], lambda w: w.replace("a", "o")) == {("on", ""): (1.0, 1)}
    assert CorpusEvidence([" ".join(GLUED)]).ending_shares(GLUED, str) == {}
    assert CorpusEvidence(["nothing here"]).ending_shares(GLUED, str) == {}


def test_adapt_learns_glued_letters_and_lemma_rules_only_without_a_language_file(
        tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    rows = PAIRS + [(f"word{i}", w) for i, w in enumerate(GLUED)]
    pairs.write_text("".join(f"{en}\t{qq}\n" for en, qq in rows), encoding="utf-8")
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\n" + "".join(f"{c.id}\t{n}\n" for c in CONCEPTS
                                                 for n in c.names), encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS + [" ".join(f"{w} b{w} {w}an" for w in GLUED)]) + "\n",
                      encoding="utf-8")
    report = adapt("qq", pairs, [f"tsv:{kb}"], tmp_path / "out", corpus=[corpus],
                   generic_grammar=True, transliteration_seconds=0)
    assert list(report["attached_letters"]) == ["b"]
    assert report["letter_shares"]["b"][1] == len(GLUED) + 2  # and CORPUS's "bdor", "btal"
    # the learned prefix lets induction read "bdor" as "dor" (pain), as the file's would
    attested = Dictionary.load(tmp_path / "out" / ATTESTED_FILE)
    assert "C4" in attested.concepts_of("bdor")
    # and the plural ending "-an" (GLUED's and CORPUS's "doran") is read back to the listed form
    assert list(report["lemma_rules"]) == ["an>"]
    assert report["ending_shares"]["an>"][1] == len(GLUED) + 1
    assert "C4" in attested.concepts_of("doran")
    (tmp_path / "qq.yaml").write_text("segment_order: reverse\n", encoding="utf-8")
    with_file = adapt("qq", pairs, [f"tsv:{kb}"], tmp_path / "file", corpus=[corpus],
                      language_file=tmp_path / "qq.yaml", transliteration_seconds=0)
    assert not {"attached_letters", "letter_shares", "lemma_rules"} & set(with_file)
    assert not {"bdor", "doran"} & set(Dictionary.load(tmp_path / "file" / ATTESTED_FILE).names)


def test_adapt_learns_no_glued_letters_in_a_script_without_spaces(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    rows = [("kidney", "腎臓"), ("liver", "肝臓"), ("heart", "心臓"), ("pain", "痛み"),
            ("disease", "病気")]
    pairs.write_text("".join(f"{en}\t{t}\n" for en, t in rows), encoding="utf-8")
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nC1\tHeart disease\nC4\tPain\n", encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("心臓 病気 大心臓 大病気 大痛み 痛み\n", encoding="utf-8")
    report = adapt("zz", pairs, [f"tsv:{kb}"], tmp_path / "out", corpus=[corpus],
                   generic_grammar=True, transliteration_seconds=0)
    assert report["joiner"] == ""
    assert not {"letter_shares", "attached_letters", "lemma_rules"} & set(report)
