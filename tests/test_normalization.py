"""Tests of xlnel.normalization: exact outputs, offset maps and the fast string path."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from xlnel.normalization import NormalizedText, hebrew_rules, normalize, normalize_string

# Characters that exercise every rule: Latin and Hebrew letters (final forms too), niqqud and
# cantillation, geresh/gershayim and quote variants, maqaf, ligatures and other NFKC expansions,
# case-folding expansions, combining accents, invisible format characters, odd whitespace.
_ALPHABET = (
    "abcXYZ019ÀöÿßÆ×µª -/.,()'\"`’‘”“_|~+%\n\t"
    "אבגדהוזחטיכלמנסעפצקרשתךםןףץ"
    "\u05b0\u05b4\u05b8\u05bc\u05c1\u05c2\u0591\u05bd"
    "׳״־"
    "ﬁﬂßİΣςé\u0301\u0307\u0308¨½Ａ\u00a0\u2003\u200e\u200f\u202b\u00ad\ufb2a\ufb4b…"
)
_texts = st.text(alphabet=_ALPHABET, max_size=40)
_langs = st.sampled_from(["he", "en", "iw", "de"])


def _check_offsets(original: str, result: NormalizedText) -> None:
    assert len(result.offsets) == len(result.text) + 1
    assert result.offsets[-1] == len(original)
    assert list(result.offsets) == sorted(result.offsets)
    assert all(0 <= offset <= len(original) for offset in result.offsets)


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("סֻכֶּרֶת", "he", "סכרת"),
        ("לחולי סוכרת.", "he", "לחולי סוכרת"),
        ("סם", "he", "סמ"),
        ("ך ם ן ף ץ", "he", "כ מ נ פ צ"),
        ('ד"ר זילבר', "he", "דר זילבר"),
        ("ד״ר", "he", "דר"),
        ("צ'יפס", "he", "ציפס"),
        ("צ׳יפס", "he", "ציפס"),
        ("צ’יפס", "he", "ציפס"),
        ('"סוכרת"', "he", "סוכרת"),
        ("פרופ' כהן", "he", "פרופ כהנ"),
        ("בית־חולים", "he", "בית חולימ"),
        ("חולה Diabetes-Mellitus", "he", "חולה diabetes mellitus"),
        ("Crohn's disease", "he", "crohn s disease"),
        ("Crohn's Disease", "en", "crohn s disease"),
        ("  Alpha-Methyldopa (AMD), 5/10  ", "en", "alpha methyldopa amd 5 10"),
        ("ﬁbrosis", "en", "fibrosis"),
        ("Straße", "en", "strasse"),
        ("hyper\u00adtension", "en", "hypertension"),
        ("Ｈｂ\u00a0A1c", "en", "hb a1c"),
        ("Na+ 140% > 5°", "en", "na+ 140 > 5°"),
        ("סם", "en", "סם"),
        ("סֻכֶּרֶת", "en", "סֻכֶּרֶת"),
        ('ד"ר', "en", "ד ר"),
        ("", "en", ""),
        (" \n\t ", "he", ""),
    ],
)
def test_normalize_examples(text: str, lang: str, expected: str) -> None:
    result = normalize(text, lang)
    assert result.text == expected
    assert normalize_string(text, lang) == expected
    _check_offsets(text, result)


def test_niqqud_offsets_point_at_letters() -> None:
    result = normalize("סֻכֶּרֶת", "he")
    assert result.offsets == (0, 2, 5, 7, 8)
    assert result.to_original(1, 3) == (2, 7)


def test_ligature_maps_every_output_char_to_its_source() -> None:
    result = normalize("ﬁne", "en")
    assert result.text == "fine"
    assert result.offsets == (0, 0, 1, 2, 3)


def test_collapsed_delimiters_map_to_first_delimiter() -> None:
    text = "  Heart -- failure  "
    result = normalize(text, "en")
    assert result.text == "heart failure"
    assert result.offsets[0] == 2
    assert result.to_original(0, 5) == (2, 7)
    assert text[slice(*result.to_original(6, 13))].strip() == "failure"


def test_empty_and_whitespace_only() -> None:
    assert normalize("", "he") == NormalizedText("", (0,))
    assert normalize("   ", "en") == NormalizedText("", (3,))


def test_to_original_rejects_bad_slices() -> None:
    result = normalize("abc")
    with pytest.raises(ValueError, match=r"\[2:1\]"):
        result.to_original(2, 1)
    with pytest.raises(ValueError, match="length 3"):
        result.to_original(0, 4)


def test_hebrew_language_codes() -> None:
    assert hebrew_rules("he") and hebrew_rules("iw") and hebrew_rules("HE")
    assert not hebrew_rules("en") and not hebrew_rules("ar")
    assert normalize_string("שָׁלוֹם", "iw") == normalize_string("שלום", "he") == "שלומ"


@given(text=_texts, lang=_langs)
@settings(max_examples=300, deadline=None)
@example(text="א׳׳ב", lang="he")
@example(text="e\u0301 ﬁ", lang="en")
def test_offsets_are_consistent(text: str, lang: str) -> None:
    result = normalize(text, lang)
    _check_offsets(text, result)
    assert result.text == result.text.strip()
    assert "  " not in result.text
    for i, char in enumerate(result.text):
        if char == " ":
            continue
        # the original stretch up to the next source char normalises to something with char
        next_source = next((o for o in result.offsets[i:] if o > result.offsets[i]), len(text))
        assert char in normalize_string(text[result.offsets[i] : next_source], lang)


@given(text=_texts, lang=_langs)
@settings(max_examples=300, deadline=None)
def test_word_slices_map_back(text: str, lang: str) -> None:
    result = normalize(text, lang)
    words = result.text.split(" ") if result.text else []
    bounds = []
    position = 0
    for word in words:
        bounds.append((position, position + len(word)))
        position += len(word) + 1
    for first in range(len(bounds)):
        for last in range(first, min(first + 3, len(bounds))):
            start, end = bounds[first][0], bounds[last][1]
            original = text[slice(*result.to_original(start, end))]
            assert normalize_string(original, lang) == result.text[start:end]


@given(text=_texts | st.text(max_size=40), lang=_langs)
@settings(max_examples=500, deadline=None)
@example(text="אבג'דה\"ו", lang="he")
@example(text="\u05b8\u05b4", lang="en")
def test_normalize_string_equals_normalize(text: str, lang: str) -> None:
    assert normalize_string(text, lang) == normalize(text, lang).text


@given(text=_texts, lang=_langs)
@settings(max_examples=300, deadline=None)
def test_normalize_string_is_idempotent(text: str, lang: str) -> None:
    once = normalize_string(text, lang)
    assert normalize_string(once, lang) == once
