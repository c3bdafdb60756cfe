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


def test_a_line_of_words_separated_by_spaces_in_a_tab_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "pairs.txt"
    path.write_text("heart\tלב\ninsulin אינסולין\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"pairs\.txt:2: expected 'source<TAB>target\[<TAB>kind"
                                          r"\]', found no tab but 2 space-separated word\(s\): "
                                          r"'insulin אינסולין' \(the file's first pair, line 1, "
                                          r"is tab-separated\)"):
        load_pairs(path)
    with pytest.raises(FormatError, match=r"pairs\.txt:2: .* found no tab"):
        read_pairs(path)


def test_the_muse_space_format_is_read(tmp_path: Path) -> None:
    path = tmp_path / "en-he.txt"
    path.write_text("insulin אינסולין\nheart  לב\n\n", encoding="utf-8")
    assert load_pairs(path, derive_kinds=False) == [WordPair("insulin", "אינסולין"),
                                                    WordPair("heart", "לב")]
    assert read_pairs(path) == [("insulin", "אינסולין"), ("heart", "לב")]


@pytest.mark.parametrize(("text", "found"), [
    ("heart failure insuffisance\n", "found 3 space-separated word"),
    ("insulin\n", "found 1 space-separated word"),
    ("heart coeur\nliver\tfoie\n", "MUSE space format of the file's first pair, line 1"),
])
def test_a_line_in_neither_layout_is_refused(tmp_path: Path, text: str, found: str) -> None:
    path = tmp_path / "p.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=r"p\.txt:\d: expected 'source<TAB>target\[<TAB>kind\]' "
                                          r"\(tab-separated\) or two words separated by a space"
                                          ) as info:
        load_pairs(path)
    assert found in str(info.value)


def test_hash_lines_are_pairs_not_comments(tmp_path: Path) -> None:
    path = tmp_path / "en-de.txt"
    path.write_text("#the\t#der\nthe\tdie\n", encoding="utf-8")
    assert load_pairs(path, derive_kinds=False) == [WordPair("#the", "#der"),
                                                    WordPair("the", "die")]


@pytest.mark.parametrize("bad", ["\x00", "\r", "\x1b"])
def test_control_characters_are_refused_with_file_and_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes(f"heart\tלב\nin{bad}sulin\tאינסולין\n".encode())
    with pytest.raises(FormatError, match=rf"p\.txt:2: control character U\+{ord(bad):04X}"):
        load_pairs(path)
    with pytest.raises(FormatError, match=r"p\.txt:2: control character"):
        read_pairs(path)


def test_duplicate_pairs_give_one_sense(tmp_path: Path) -> None:
    from xlnel.dictionary.lexicon import Lexicon

    path = tmp_path / "p.txt"
    path.write_text("heart\tלב\nheart\tלב\nHeart\t לב\nheart\tמרכז\n", encoding="utf-8")
    lexicon = Lexicon.from_file(path)
    assert [s.text for s in lexicon.senses("heart")] == ["לב", "מרכז"]
