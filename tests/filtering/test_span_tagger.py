from __future__ import annotations

import numpy as np
import pytest

from xlnel.config import FilterConfig
from xlnel.errors import ArtifactError
from xlnel.filtering.gbdt import GradientBoostingFilter
from xlnel.filtering.span_tagger import (
    TAGGER_FEATURES,
    SpanTagger,
    _span_row,
    _token_range,
    _tokens,
    gold_tags,
    word_features,
)
from xlnel.types import Candidate, Document, Link, Span


def _doc(text: str, *spans: tuple[str, str]) -> Document:
    links = []
    for word, kind in spans:
        s = text.index(word)
        links.append(Link(s, s + len(word), word, ("C",), kind))
    return Document("d", text, tuple(sorted(links, key=lambda link: link.start)))


def test_tokens_and_token_range_hand_worked():
    text = "Type 2 diabetes, treated."
    tokens = _tokens(text)
    assert [text[s:e] for s, e in tokens] == ["Type", "2", "diabetes", ",", "treated", "."]
    assert _token_range(tokens, 0, 15) == (0, 2)      # "Type 2 diabetes"
    assert _token_range(tokens, 9, 12) == (2, 2)      # inside one word: the word holding it
    assert _token_range(tokens, 5, 5) == (-1, -1)     # empty range
    assert _token_range(tokens, 4, 8) == (1, 2)       # " 2 d": from the first word it touches
    assert _token_range(tokens, 4, 5) == (-1, -1)     # white space between words
    assert _token_range(tokens, 25, 26) == (-1, -1)   # past the last word


def test_tokens_keep_combining_marks_inside_words():
    """Niqqud and decomposed accents (category M) are not ``\\w``: each stays in its word,
    and offsets still cover the text exactly."""
    pointed = "סֻכֶּרֶת"  # 5 letters, 3 points and a dagesh
    assert _tokens(pointed) == [(0, len(pointed))]
    text = "cafe\u0301, " + pointed + " -\u0301x"
    words = [text[s:e] for s, e in _tokens(text)]
    assert words == ["cafe\u0301", ",", pointed, "-\u0301", "x"]
    # a mark after white space has no word to join
    assert [" \u0301ab"[s:e] for s, e in _tokens(" \u0301ab")] == ["\u0301", "ab"]


def test_gold_tags_leave_entities_of_white_space_untagged():
    dropped: dict[str, int] = {}
    doc = Document("a", "  diabetes", (Link(0, 1, " "),))
    assert gold_tags(doc, _tokens(doc.text), dropped) == ["O"]
    between = Document("b", "gout  asthma", (Link(4, 6, "  "), Link(6, 12, "asthma")))
    assert gold_tags(between, _tokens(between.text), dropped) == ["O", "B"]
    assert dropped == {"no_word": 2}


def test_gold_tags_typed_and_overlaps_skipped():
    doc = _doc("high blood pressure and gout", ("high blood pressure", "Disease"),
               ("gout", "Disease"))
    doc = Document(doc.id, doc.text, (*doc.entities, Link(5, 10, "blood", ("X",), "Chemical")))
    assert gold_tags(doc, _tokens(doc.text)) == ["B-Disease", "I-Disease", "I-Disease", "O",
                                                 "B-Disease"]
    untyped = Document("u", "gout", (Link(0, 4, "gout", ("C",)),))
    assert gold_tags(untyped, _tokens(untyped.text)) == ["B"]


def test_word_features_see_matches_and_neighbours():
    text = "my gout flared"
    cand = Candidate(Span(3, 7, "gout"), "C", "gout", 0.97)
    feats = word_features(text, _tokens(text), [cand])
    assert "w=gout" in feats[1] and "ms=0.95" in feats[1] and "mc=0.95" in feats[1]
    assert "+1ms=0.95" in feats[0] and "-1me=0.95" in feats[2]
    assert "-1w=<edge>" in feats[0] and "1w=gout" in feats[0]


def test_span_row_hand_worked():
    starts = [0, 5, 11, 17]
    begin = np.array([0.1, 0.8, 0.0, 0.05])
    inside = np.array([0.0, 0.1, 0.6, 0.3])
    # words 1..2: begins at 1 (0.8), word 2 continues (0.6), word 3 does not (1 - 0.3)
    tokens = [(s, s + 4) for s in starts]
    np.testing.assert_allclose(_span_row(tokens, (5, 16), begin, inside),
                               [0.8, 0.6, 0.7, 0.8 * 0.6 * 0.7])
    # the last word: nothing follows, one word: nothing inside
    np.testing.assert_allclose(_span_row(tokens, (17, 20), begin, inside),
                               [0.05, 1.0, 1.0, 0.05])


def _corpus() -> tuple[list[Document], list[list[Candidate]]]:
    docs, cands = [], []
    for i in range(30):
        disease = ["gout", "asthma", "migraine"][i % 3]
        text = f"the patient {i} has {disease} since may"
        docs.append(_doc(text, (disease, "Disease")))
        s = text.index(disease)
        cands.append([Candidate(Span(s, s + len(disease), disease), "C", disease, 1.0),
                      Candidate(Span(0, 3, "the"), "X", "tha", 0.6)])
    return docs, cands


def test_fitted_tagger_scores_gold_spans_high_and_round_trips(tmp_path):
    docs, cands = _corpus()
    tagger = SpanTagger().fit(docs, cands)
    cols = tagger.columns(docs[0], cands[0])
    assert cols.shape == (2, len(TAGGER_FEATURES))
    assert cols[0, 3] > 0.5 > cols[1, 3]
    tagger.save(tmp_path / "m.crfsuite")
    again = SpanTagger.load(tmp_path / "m.crfsuite")
    np.testing.assert_allclose(again.columns(docs[0], cands[0]), cols)
    empty = Document("e", "", ())
    assert tagger.columns(empty, []).shape == (0, len(TAGGER_FEATURES))


def test_tagger_needs_entities_and_a_fit():
    with pytest.raises(ValueError, match="no entity"):
        SpanTagger().fit([Document("d", "no mention here")], [[]])
    with pytest.raises(RuntimeError, match="not fitted"):
        SpanTagger().columns(_corpus()[0][0], _corpus()[1][0])


def test_fit_counts_entities_covering_no_word(caplog):
    docs, cands = _corpus()
    docs[0] = Document("w", "  " + docs[0].text, (Link(0, 2, "  "),))
    cands[0] = []
    with caplog.at_level("WARNING", logger="xlnel.filtering.span_tagger"):
        SpanTagger().fit(docs, cands)
    assert "0 overlapping gold entities left out" in caplog.text
    assert "1 covering no word" in caplog.text
    with pytest.raises(ValueError, match="no entity that covers a word"):
        SpanTagger().fit(docs[:1], cands[:1])


@pytest.mark.parametrize("content", [b"", b"lCRF" + b"\0" * 60, b"not a model at all" * 4])
def test_foreign_or_truncated_model_is_refused(tmp_path, content):
    path = tmp_path / "m.crfsuite"
    path.write_bytes(content)
    with pytest.raises(ArtifactError, match="not a CRFsuite model"):
        SpanTagger.load(path)
    with pytest.raises(ArtifactError, match="lacks"):
        SpanTagger.load(tmp_path / "missing.crfsuite")


def test_gbdt_option_tagger_adds_columns_and_round_trips(tmp_path, corpus):
    docs, cands = corpus
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={"folds": 2, "max_iter": 10,
                                                       "tagger": True})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    assert f.feature_names[-len(TAGGER_FEATURES):] == TAGGER_FEATURES
    f.save(tmp_path / "f")
    assert (tmp_path / "f" / "span_tagger.crfsuite").is_file()
    g = GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    for a, b in zip(f.score_batch(docs, cands), g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)
    (tmp_path / "f" / "span_tagger.crfsuite").unlink()
    with pytest.raises(ArtifactError, match="span tagger"):
        GradientBoostingFilter.load(tmp_path / "f", cfg, "en")


def test_blank_tagger_gives_zero_columns_and_a_fold_without_entities_trains(corpus):
    docs, cands = corpus
    assert not SpanTagger.blank().columns(docs[0], cands[0]).any()
    # with two folds (document i in fold i % 2), the odd documents lose their entities: the
    # even fold's other documents hold none and it gets the blank tagger
    bare = [d if i % 2 == 0 else Document(d.id, d.text, ()) for i, d in enumerate(docs)]
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={"folds": 2, "max_iter": 5,
                                                       "tagger": True})
    f = GradientBoostingFilter(cfg, "en").fit(bare, cands)
    assert len(f.score_batch(bare[:1], cands[:1])[0]) == len(cands[0])


def test_attributes_computed_once_give_the_same_model_and_columns(corpus):
    docs, cands = corpus
    attributes = SpanTagger.attributes(docs, cands)
    once = SpanTagger().fit(docs, cands, attributes)
    again = SpanTagger().fit(docs, cands)
    assert once.model == again.model
    for d, c, a in zip(docs, cands, attributes, strict=True):
        np.testing.assert_array_equal(once.columns(d, c, a), again.columns(d, c))
    assert SpanTagger.attributes([Document("e", "", ())], [[]]) == [None]
