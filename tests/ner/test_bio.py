from __future__ import annotations

import pytest

from xlnel.candidates.spans import tokenize
from xlnel.ner.bio import bio_labels, decode_bio, encode_bio, entity_types
from xlnel.ner.sentences import split_sentences
from xlnel.types import Document, Link


def _link(text: str, mention: str, type_: str | None = "Disorder", occurrence: int = 0) -> Link:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(mention, start + 1)
    return Link(start, start + len(mention), mention, type=type_)


def _round_trip(text: str, entities: list[Link]) -> list[tuple[int, int, str]]:
    words = tokenize(text)
    al = encode_bio(words, entities)
    return [(s.start, s.end, s.text) for s in decode_bio(text, words, al.tags, al.prefixes)]


def test_round_trip_keeps_offsets_and_types():
    text = "She has diabetes mellitus and takes insulin, daily."
    ents = [_link(text, "diabetes mellitus"), _link(text, "insulin", "Chemical")]
    words = tokenize(text)
    al = encode_bio(words, ents)
    assert al.tags == ["O", "O", "B-Disorder", "I-Disorder", "O", "O", "B-Chemical", "O"]
    assert _round_trip(text, ents) == [(e.start, e.end, e.text) for e in ents]


def test_hebrew_prefix_is_kept_as_a_prefix_length():
    text = "אני חולה סוכרת ולוקח אינסולין בבוקר.\nהאם מטפורמין עוזר?"
    ents = [_link(text, "חולה סוכרת"), _link(text, "אינסולין", "Chemical or drug"),
            _link(text, "מטפורמין", "Chemical or drug")]
    assert _round_trip(text, ents) == [(e.start, e.end, e.text) for e in ents]
    # a mention inside a word with a prefix: "בסוכרת" -> "סוכרת"
    text = "טיפול בסוכרת"
    ent = _link(text, "סוכרת")
    words = tokenize(text)
    al = encode_bio(words, [ent])
    assert al.tags == ["O", "B-Disorder"] and al.prefixes == [0, 1]
    (span,) = decode_bio(text, words, al.tags, al.prefixes)
    assert (span.start, span.end, span.text, span.stripped_prefix) == (7, 12, "סוכרת", "ב")


def test_alignment_to_whole_words():
    text = "the hyperglycaemic state"
    # starts too deep inside a word (more than max_prefix characters): the whole word
    ent = Link(9, 24, text[9:24], type="Disorder")
    assert _round_trip(text, [ent]) == [(4, 24, "hyperglycaemic state")]
    # ends inside a word: extended to the word's end
    assert _round_trip(text, [Link(4, 9, "hyper", type="X")]) == [(4, 18, "hyperglycaemic")]


def test_overlapping_entities_keep_the_longest():
    text = "type 2 diabetes mellitus"
    ents = [Link(7, 15, "diabetes", type="D"), Link(0, 24, text, type="D"),
            Link(16, 24, "mellitus", type="D")]
    al = encode_bio(tokenize(text), ents)
    assert al.dropped_overlaps == 2 and al.tags == ["B-D", "I-D", "I-D", "I-D"]


def test_entity_without_words_is_dropped():
    text = "a -- b"
    al = encode_bio(tokenize(text), [Link(2, 4, "--", type="D")])
    assert al.dropped_empty == 1 and al.tags == ["O", "O"]


def test_decoding_is_lenient():
    text = "aa bb cc dd"
    words = tokenize(text)
    spans = decode_bio(text, words, ["I-X", "I-X", "I-Y", "O"])
    assert [s.text for s in spans] == ["aa bb", "cc"]
    spans = decode_bio(text, words, ["B-X", "B-X", "O", "I-X"], [9, 0, 0, 0])
    # a prefix never swallows the whole word
    assert [(s.text, s.stripped_prefix) for s in spans] == [("a", "a"), ("bb", ""), ("dd", "")]
    with pytest.raises(ValueError, match="one tag"):
        decode_bio(text, words, ["O"])


def test_labels_and_types():
    docs = [Document("a", "x y", (Link(0, 1, "x", type="Disorder"), Link(2, 3, "y"))),
            Document("b", "z", (Link(0, 1, "z", type="Chemical"),))]
    types = entity_types(docs)
    assert types == ["Chemical", "Disorder", "Mention"]
    assert bio_labels(types)[:3] == ["O", "B-Chemical", "I-Chemical"]
    assert entity_types([Document("c", "")]) == []


def test_empty_text():
    assert encode_bio([], []).tags == []
    assert decode_bio("", [], []) == []
    assert split_sentences("") == [] and split_sentences(" \n\t ") == []


@pytest.mark.parametrize("text, expected", [
    ("One. Two!  Three?", ["One.", "Two!", "Three?"]),
    ("Dose 5.7 mg, M.S and e.g. this", ["Dose 5.7 mg, M.S and e.g.", "this"]),
    ("  line one\nline two\n\n", ["line one", "line two"]),
    ("Really?! Yes...", ["Really?!", "Yes..."]),
    ("שלום,\nאני חולה סוכרת. תודה", ["שלום,", "אני חולה סוכרת.", "תודה"]),
])
def test_sentences_keep_offsets(text, expected):
    spans = split_sentences(text)
    assert [text[s:e] for s, e in spans] == expected
