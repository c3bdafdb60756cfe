from __future__ import annotations

import numpy as np
import pytest

from xlnel.filtering.edit_features import EDIT_FEATURES, FAR, SAME, edit_key
from xlnel.filtering.features import PAIR_FEATURES, FeatureExtractor, Priors
from xlnel.types import Candidate, Document, Link, Span


@pytest.mark.parametrize(("span", "name", "key"), [
    ("fever", "fever", SAME),
    ("kidney stones", "kidney stone", "end:s>"),  # the span has an ending the name lacks
    ("kidney stone", "kidney stones", "end:>s"),
    ("tumour", "tumor", "inside:u>"),
    ("הסכרת", "סכרת", "start:ה>"),  # an attached article
    ("שמן הדגים", "שמן דגים", "inside:ה>"),
    ("חולי לב", "חולה לב", "inside:י>ה"),  # a changed letter: both sides kept
    ("anaemia", "anemia", "inside:a>"),
    ("aaa", "aa", "end:a>"),  # a repeated letter: the beginning is taken first
    ("pain", "painful", "end:>ful"),
    ("pain", "painfully", FAR),  # five letters: too far for a key of its own
    ("ache", "seizure", FAR),
    ("", "a", "start:>a"),
])
def test_edit_key_hand_worked(span, name, key):
    assert edit_key(span, name) == key


def test_edit_priors_count_best_names_once_per_span_and_fill_their_columns():
    ex = FeatureExtractor("en", frozenset(), edits=True)
    n_pair = ex.feature_names.index(PAIR_FEATURES[-1]) + 1
    assert ex.feature_names[n_pair:n_pair + 2] == EDIT_FEATURES
    train = Document(id="t", text="fevers and colds", entities=(Link(0, 6, "fevers", ("C1",)),))
    fevers, and_, colds = Span(0, 6, "fevers"), Span(7, 10, "and"), Span(11, 16, "colds")
    train_cands = [Candidate(fevers, "C1", "fever", 0.9), Candidate(fevers, "C7", "fever", 0.9),
                   Candidate(fevers, "C2", "fervour", 0.5),  # not a best match: not counted
                   Candidate(and_, "C3", "an", 0.6), Candidate(colds, "C4", "cold", 0.9)]
    priors = Priors()
    ex.count(priors, train, train_cands, np.array([1, 1, 1, 0, 0], dtype=bool))
    # "fevers" (gold) and "colds" share the edit end:s>; "fevers" counts once although two
    # concepts share its best name
    assert priors.edit == {"end:s>": [1, 2], "end:d>": [0, 1]}
    doc = Document(id="d", text="chills and rash")
    chills, rash = Span(0, 6, "chills"), Span(11, 15, "rash")
    cands = [Candidate(chills, "C5", "chill", 0.9), Candidate(chills, "C6", "chilblain", 0.4),
             Candidate(rash, "C8", "rash", 1.0)]
    rows = ex.transform(doc, cands, priors)
    prior, seen = rows[:, n_pair], rows[:, n_pair + 1]
    # "end:s>": 1 gold of 2, smoothed (1 + 0.1) / 3; the others unseen: 0.1 / 1
    np.testing.assert_allclose(prior, [1.1 / 3, 0.1, 0.1], rtol=1e-6)
    np.testing.assert_allclose(seen, [np.log(3), 0, 0], rtol=1e-6)
    plain = FeatureExtractor("en", frozenset()).transform(doc, cands, priors)
    np.testing.assert_array_equal(np.delete(rows, [n_pair, n_pair + 1], axis=1), plain)
