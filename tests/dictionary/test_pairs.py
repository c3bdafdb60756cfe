"""Tests of training-pair reading, transliteration detection and splitting."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlnel.dictionary.pairs import (
    WordPair,
    derive_training_pairs,
    is_romanized_transliteration,
    is_transliteration,
    load_pairs,
    phonetic_skeleton_en,
    phonetic_skeleton_he,
    read_pairs,
    split_pairs,
    tag_pair,
    training_triples,
)
from xlnel.errors import FormatError


@pytest.mark.parametrize(("en", "he", "skeleton"), [
    ("insulin", "אינסולין", "NZLN"),
    ("lymphocyte", "לימפוציט", "LMBZD"),
    ("vlasov", "ולאסוב", "BLZB"),
    ("gruber", "גרובר", "GRBR"),
])
def test_skeletons_agree_on_transliterations(en: str, he: str, skeleton: str) -> None:
    assert phonetic_skeleton_en(en) == skeleton
    assert phonetic_skeleton_he(he) == skeleton
    assert is_transliteration(en, he)


def test_skeleton_rules() -> None:
    assert phonetic_skeleton_en("Chemistry") == "GMZDR"  # ch hard, y and vowels dropped
    assert phonetic_skeleton_en("cell") == "ZL"  # soft c, doubled letters collapse
    assert phonetic_skeleton_en("phosphate") == "BZBD"
    assert phonetic_skeleton_he("וושינגטון") == "BZNGDN"  # doubled vav is a consonant
    assert phonetic_skeleton_he("סוכרת") == "ZGRD"  # inner vav is a vowel
    assert phonetic_skeleton_he("abc") == ""


@pytest.mark.parametrize(("en", "he"), [
    ("diabetes", "סוכרת"), ("was", "היה"), ("crisis", "משבר"), ("island", "אי"), ("one", "אחד"),
])
def test_translations_are_not_transliterations(en: str, he: str) -> None:
    assert not is_transliteration(en, he)


def test_short_skeletons_must_match_exactly() -> None:
    assert is_transliteration("bir", "ביר")
    assert not is_transliteration("bar", "בד")


@pytest.mark.parametrize(("en", "target", "expected"), [
    ("insulin", "インスリン", True),   # insurin
    ("insulin", "инсулин", True),     # Cyrillic
    ("insulin", "ινσουλίνη", True),   # Greek
    ("heart", "心臓", False),          # a translation
    ("heart", "сердце", False),
    ("insulin", "insulin", False),    # a copy is no transliteration
])
def test_romanized_transliterations_in_any_script(en: str, target: str, expected: bool) -> None:
    assert is_romanized_transliteration(en, target) is expected


def test_read_pairs(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("insulin\tאינסולין\n\nheart \t לב\r\n", encoding="utf-8")
    assert read_pairs(path) == [("insulin", "אינסולין"), ("heart", "לב")]


@pytest.mark.parametrize("line", ["insulin", "insulin\t", "a\tb\tc", "\tלב"])
def test_read_pairs_malformed_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(f"heart\tלב\n{line}\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.txt:2: expected 'source<TAB>target'") as info:
        read_pairs(path)
    assert info.value.line == 2


def test_read_pairs_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_pairs(tmp_path / "none.txt")


def test_load_pairs_with_header_and_kinds(tmp_path: Path) -> None:
    path = tmp_path / "user.tsv"
    path.write_text("source\ttarget\tkind\ninsulin\tאינסולין\n"
                    "heart\tלב\ttranslation\n", encoding="utf-8")
    assert load_pairs(path) == [WordPair("insulin", "אינסולין", "transliteration"),
                                WordPair("heart", "לב", "translation")]
    path.write_text("heart\tלב\tgloss\n", encoding="utf-8")
    with pytest.raises(FormatError, match="unknown pair kind 'gloss'"):
        load_pairs(path)


def test_tag_pair() -> None:
    assert tag_pair("insulin", "אינסולין").kind == "transliteration"
    assert tag_pair("heart", "לב").kind == "translation"
    with pytest.raises(ValueError, match="unknown pair kind"):
        tag_pair("heart", "לב", "gloss")


def test_derive_training_pairs_normalises_and_filters() -> None:
    pairs = derive_training_pairs([("Insulin", "אינסולין"), ("insulin", "אינסולין"),
                                   ("rbd", "rbd"), ("heart", "לב"), ("", "x")])
    assert pairs == [WordPair("insulin", "אינסולין", "transliteration"),
                     WordPair("heart", "לב", "translation")]


def test_split_pairs_by_source() -> None:
    pairs = [(f"w{i // 3}", f"t{i}") for i in range(300)]  # 100 sources, 3 targets each
    train, dev = split_pairs(pairs, 0.2, seed=1)
    assert len(train) + len(dev) == 300
    assert len({s for s, _ in dev}) == 20
    assert not {s for s, _ in train} & {s for s, _ in dev}
    assert split_pairs(pairs, 0.2, seed=1) == (train, dev)
    assert split_pairs(pairs, 0.0) == (pairs, [])
    with pytest.raises(ValueError, match="dev_fraction"):
        split_pairs(pairs, 1.0)


def test_training_triples() -> None:
    triples = training_triples([("Heart", " לב "), WordPair("x" * 50, "y"), ("", "a"),
                                WordPair("insulin", "אינסולין", "transliteration")], 40)
    assert triples == [("heart", "לב", ""), ("insulin", "אינסולין", "transliteration")]
    with pytest.raises(ValueError, match="training pair"):
        training_triples([("a",)])
