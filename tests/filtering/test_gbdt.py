from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from tests.conftest import make_documents
from xlnel.candidates.tfidf_generator import TfidfCandidateGenerator
from xlnel.config import CandidatesConfig, FilterConfig
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ArtifactError, ConfigError
from xlnel.filtering.gbdt import GradientBoostingFilter, _span_tops
from xlnel.filtering.labels import label_candidates
from xlnel.io.jsonl import read_jsonl
from xlnel.types import Candidate, Concept, Span


@pytest.fixture(scope="module")
def docs_and_candidates(tmp_path_factory):
    import json

    path = tmp_path_factory.mktemp("g") / "d.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in make_documents()), encoding="utf-8")
    docs = read_jsonl(path)
    names = {("diabetes", "C1"), ("hypertension", "C2"), ("insulin", "C3"), ("asthma", "C4"),
             ("migraine", "C5"), ("metformin", "C6"), ("high blood pressure", "C2"),
             ("diabetes mellitus", "C1")}
    d = Dictionary.from_concepts(Concept(cid, (n,)) for n, cid in names)
    gen = TfidfCandidateGenerator(CandidatesConfig(), "en").fit(d)
    return docs, gen.generate_batch(docs)


def _cand(s: int, e: int, score: float, cid: str = "C") -> Candidate:
    return Candidate(Span(s, e, "x" * (e - s)), cid, "x", score)


def test_span_tops_picks_best_match_per_span():
    cands = [_cand(0, 3, 0.5), _cand(0, 3, 0.9), _cand(4, 6, 0.7)]
    tops, owner = _span_tops(cands)
    assert list(tops) == [1, 2] and list(owner) == [0, 0, 1]


@pytest.mark.parametrize("unit", ["span", "pair"])
def test_fit_score_save_load(tmp_path, docs_and_candidates, unit):
    docs, cands = docs_and_candidates
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={"folds": 2, "max_iter": 20, "unit": unit})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    scores = f.score_batch(docs, cands)
    assert all(len(s) == len(c) for s, c in zip(scores, cands, strict=True))
    if unit == "span":  # every candidate of a span shares the span's score
        for s, c in zip(scores, cands, strict=True):
            by_span: dict[tuple[int, int], set[float]] = {}
            for cand, v in zip(c, s, strict=True):
                by_span.setdefault((cand.span.start, cand.span.end), set()).add(float(v))
            assert all(len(v) == 1 for v in by_span.values())
    # gold spans should score higher than the rest on this easy data
    y = np.concatenate([label_candidates(d, c) for d, c in zip(docs, cands, strict=True)])
    pooled = np.concatenate(scores)
    assert pooled[y].mean() > pooled[~y].mean()
    f.save(tmp_path / "f")
    g = GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    assert g.threshold == f.threshold
    for a, b in zip(scores, g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)


def test_bad_options():
    with pytest.raises(ValueError, match="unknown option"):
        GradientBoostingFilter(FilterConfig(options={"depth": 3}), "en")
    with pytest.raises(ValueError, match="unit"):
        GradientBoostingFilter(FilterConfig(options={"unit": "doc"}), "en")
    with pytest.raises(ValueError, match="bag"):
        GradientBoostingFilter(FilterConfig(options={"bag": 0}), "en")
    for share in (0, 1.5):
        with pytest.raises(ValueError, match="negatives"):
            GradientBoostingFilter(FilterConfig(options={"negatives": share}), "en")


@pytest.mark.parametrize("key, value, allowed", [
    ("folds", 1, "greater than or equal to 2"), ("folds", 0, "greater than or equal to 2"),
    ("folds", "abc", "valid integer"), ("folds", True, "valid integer"),
    ("max_iter", 0, "greater than or equal to 1"), ("learning_rate", 0, "greater than 0"),
    ("learning_rate", True, "not the boolean"), ("max_leaf_nodes", 1, "greater than or equal"),
    ("l2_regularization", -1, "greater than or equal to 0"), ("seed", -1, "greater than"),
    ("window", -2, "greater than"), ("name_prior", "most", "'all' or 'best'"),
    ("encoder_context_words", 0, "greater than or equal to 1"),
])
def test_each_option_is_checked_up_front(key, value, allowed):
    with pytest.raises(ConfigError, match=rf"filter\.options\.{key}: .*{allowed}.*"
                                          rf"\(got {re.escape(repr(value))}\)"):
        GradientBoostingFilter(FilterConfig(options={key: value}), "en")


def test_bag_averages_the_seeded_models(tmp_path, docs_and_candidates):
    docs, cands = docs_and_candidates
    one = {"folds": 2, "max_iter": 20}
    f = GradientBoostingFilter(FilterConfig(options={**one, "bag": 2}), "en").fit(docs, cands)
    g = GradientBoostingFilter(FilterConfig(options=one), "en").fit(docs, cands)
    assert f.model is not None and g.model is not None
    assert len(f.model.tree_starts) == 2 * len(g.model.tree_starts)
    # seeds 0 and 1: the tiny data is under early stopping's 10,000 rows, so the two models
    # are alike and their average is the single model
    for a, b in zip(f.score_batch(docs, cands), g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)
    f.save(tmp_path / "f")
    loaded = GradientBoostingFilter.load(tmp_path / "f", FilterConfig(options={**one, "bag": 2}),
                                         "en")
    for a, b in zip(f.score_batch(docs, cands), loaded.score_batch(docs, cands), strict=True):
        np.testing.assert_array_equal(a, b)


def test_window_adds_context_features_and_round_trips(tmp_path, docs_and_candidates):
    docs, cands = docs_and_candidates
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={"folds": 2, "max_iter": 20, "window": 2})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    assert "window_prior_max" in f.extractor.feature_names
    assert f.priors.window  # context words were counted
    x = f.extractor.transform(docs[0], cands[0], f.priors)
    assert x.shape[1] == len(f.extractor.feature_names)
    f.save(tmp_path / "f")
    g = GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    for a, b in zip(f.score_batch(docs, cands), g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)
    # a filter trained without a window cannot be loaded as one with it
    with pytest.raises(ArtifactError, match="other features"):
        GradientBoostingFilter.load(tmp_path / "f", FilterConfig(name="xlnel.gbdt.v1"), "en")


def test_window_words_are_ws_words_each_side():
    from xlnel.filtering.features import FeatureExtractor
    from xlnel.stopwords import load_stopwords

    ex = FeatureExtractor("en", load_stopwords("en"), window=2)
    text = "one two three SPAN four five six"
    s = text.index("SPAN")
    assert ex._window_words(text, s, s + 4) == ["five", "four", "three", "two"]
    with pytest.raises(ValueError, match="window"):
        FeatureExtractor("en", frozenset(), window=-1)


def test_pair_features_rank_gap_and_exact_match():
    from xlnel.filtering.features import PAIR_FEATURES, FeatureExtractor, Priors
    from xlnel.types import Document

    ex = FeatureExtractor("en", frozenset())
    doc = Document(id="d", text="foo bar")
    span = Span(0, 3, "foo")
    cands = [Candidate(span, f"C{i}", name, score)
             for i, (name, score) in enumerate([("foo", 0.9), ("fob", 0.7), ("fog", 0.7),
                                                ("food", 0.5)])]
    rows = ex.transform(doc, cands, Priors())
    pair = rows[:, -len(PAIR_FEATURES):]
    col = {name: i for i, name in enumerate(PAIR_FEATURES)}
    # rank = how many candidates of the span score strictly higher; ties share a rank
    assert pair[:, col["rank"]].tolist() == [0, 1, 1, 3]
    assert pair[:, col["gap_to_best"]] == pytest.approx([0, 0.2, 0.2, 0.4])
    assert pair[:, col["exact"]].tolist() == [1, 0, 0, 0]
    assert pair[:, col["length_ratio"]] == pytest.approx([1, 1, 1, 4 / 3])


def _reference_pair_features(ex, cands, priors):
    """Each candidate's pair features computed alone, straight from their definitions."""
    import math

    out = []
    for c in cands:
        same = [o.score for o in cands if (o.span.start, o.span.end) == (c.span.start,
                                                                          c.span.end)]
        span_norm, name_norm = ex.norm(c.span.text), ex.norm(c.name)
        prior, seen = priors.rate("name", name_norm)
        out.append([c.score, sum(s > c.score for s in same), max(same) - c.score,
                    len(name_norm), len(name_norm) / max(1, len(span_norm)),
                    span_norm == name_norm, prior, math.log1p(seen)])
    return np.asarray(out, dtype=np.float32)


def test_pair_features_match_their_per_candidate_definition():
    """Interleaved spans, tied scores and names shared between spans, in any order."""
    import random

    from xlnel.filtering.features import PAIR_FEATURES, FeatureExtractor, Priors
    from xlnel.types import Document

    rng = random.Random(3)
    text = "alpha beta gamma delta epsilon"
    spans = [Span(text.index(w), text.index(w) + len(w), w)
             for w in ("alpha", "beta", "gamma", "delta")]
    spans.append(Span(0, 10, "alpha beta"))
    names = ["alpha", "Beta", "gama", "delta x", "alpha beta", ""]
    cands = [Candidate(rng.choice(spans), f"C{i}", rng.choice(names),
                       rng.choice([0.4, 0.5, 0.5, 0.75, 1.0])) for i in range(60)]
    priors = Priors()
    for name, y in [("alpha", True), ("alpha", False), ("gama", True)]:
        priors.add("name", name, y)
    ex = FeatureExtractor("en", frozenset())
    doc = Document(id="d", text=text)
    got = ex.transform(doc, cands, priors)[:, -len(PAIR_FEATURES):]
    np.testing.assert_array_equal(got, _reference_pair_features(ex, cands, priors))
    # the extractor caches name rates; a change of the priors must be seen
    priors.add("name", "beta", True)
    got = ex.transform(doc, cands, priors)[:, -len(PAIR_FEATURES):]
    np.testing.assert_array_equal(got, _reference_pair_features(ex, cands, priors))
    assert ex.transform(doc, [], priors).shape == (0, len(ex.feature_names))


def test_extended_features_hand_worked():
    from xlnel.filtering.features import EXTENDED_FEATURES, NEXT, FeatureExtractor, Priors
    from xlnel.types import Document

    ex = FeatureExtractor("en", frozenset(), extended=True)
    doc = Document(id="d", text="we have diabetes and type diabetes here")
    first, second, longer = Span(8, 16, "diabetes"), Span(26, 34, "diabetes"), \
        Span(21, 34, "type diabetes")
    cands = [Candidate(first, "C1", "diabetes", 1.0), Candidate(first, "C2", "diabetic", 0.7),
             Candidate(second, "C1", "diabetes", 1.0),
             Candidate(longer, "C3", "type 1 diabetes", 0.8)]
    priors = Priors()
    for _ in range(3):
        priors.add("context", NEXT + "and", True)
    rows = ex.transform(doc, cands, priors)
    assert rows.shape[1] == len(ex.feature_names)
    start = ex.feature_names.index(EXTENDED_FEATURES[0])
    ext = {name: rows[:, start + i] for i, name in enumerate(EXTENDED_FEATURES)}
    # 3 of 3 spans followed by "and" were gold: (3 + 0.1) / (3 + 1)
    assert ext["next_context_prior"][0] == pytest.approx(3.1 / 4)
    # "diabetes" occurs as two spans: each has one other occurrence
    assert ext["doc_repeats"].tolist() == pytest.approx([np.log(2)] * 3 + [0.0])
    # the first span's two best names score 1.0 and 0.7; single-name spans keep their score
    assert ext["best_margin"].tolist() == pytest.approx([0.3, 0.3, 1.0, 0.8])
    # "type diabetes" overlaps "diabetes" (1.0 > 0.8); no span is inside a better one
    assert ext["overlaps_better_span"].tolist() == [0, 0, 0, 1]


def test_extended_option_round_trips(tmp_path, docs_and_candidates):
    docs, cands = docs_and_candidates
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={"folds": 2, "max_iter": 20,
                                                      "extended": True})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    assert "best_margin" in f.extractor.feature_names
    f.save(tmp_path / "f")
    g = GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    for a, b in zip(f.score_batch(docs, cands), g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)


def test_provenance_features_hand_worked():
    from xlnel.filtering.features import (
        PAIR_FEATURES,
        PROVENANCE_FEATURES,
        FeatureExtractor,
        Priors,
    )
    from xlnel.types import Document

    ex = FeatureExtractor("en", frozenset(), provenance=True)
    assert ex.feature_names[-len(PROVENANCE_FEATURES):] == PROVENANCE_FEATURES
    assert ex.feature_names[-len(PROVENANCE_FEATURES) - len(PAIR_FEATURES):
                            -len(PROVENANCE_FEATURES)] == PAIR_FEATURES
    doc = Document(id="d", text="so tired of sugar")
    tired, sugar = Span(3, 8, "tired"), Span(12, 17, "sugar")
    cands = [Candidate(tired, "C1", "tired", 1.0, "translated", 0.4),
             Candidate(tired, "C2", "tire", 0.8, "corpus", 0.9),
             Candidate(sugar, "C3", "sugar", 1.0, "composed", 0.5),
             Candidate(sugar, "C4", "sugars", 0.9, "kb"),
             Candidate(sugar, "C5", "suga", 0.7, "annotation"),
             Candidate(sugar, "C6", "sugar x", 0.6)]  # no source: taken as given
    rows = ex.transform(doc, cands, Priors())
    assert rows.shape == (6, len(ex.feature_names))
    prov = {name: rows[:, -len(PROVENANCE_FEATURES) + i].tolist()
            for i, name in enumerate(PROVENANCE_FEATURES)}
    assert prov["entry_generated"] == [1, 1, 1, 0, 0, 0]
    assert prov["entry_annotation"] == [0, 0, 0, 0, 1, 0]
    assert prov["entry_score"] == pytest.approx([0.4, 0.9, 0.5, -1, -1, -1])
    # "tired" has only generated names; "sugar"'s best given name scores 0.9
    assert prov["best_given_score"] == pytest.approx([0, 0, 0.9, 0.9, 0.9, 0.9])
    # the other columns do not depend on the option
    plain = FeatureExtractor("en", frozenset()).transform(doc, cands, Priors())
    np.testing.assert_array_equal(rows[:, :-len(PROVENANCE_FEATURES)], plain)


def test_provenance_is_listed_in_the_saved_filter(tmp_path, docs_and_candidates):
    import json

    docs, cands = docs_and_candidates
    assert all(c.source == "kb" for one in cands for c in one)  # the fixture's generator says
    assert "entry_generated" not in GradientBoostingFilter(
        FilterConfig(name="xlnel.gbdt.v1"), "en").fit(docs, cands).feature_names  # off by default
    cfg = FilterConfig(name="xlnel.gbdt.v1",
                       options={"folds": 2, "max_iter": 20, "provenance": True})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    assert "entry_generated" in f.feature_names
    f.save(tmp_path / "f")
    meta = json.loads((tmp_path / "f" / "filter.json").read_text(encoding="utf-8"))
    assert meta["options"]["provenance"] is True and "best_given_score" in meta["features"]


def test_a_filter_saved_without_provenance_loads_and_predicts(tmp_path, docs_and_candidates):
    """A filter saved before the option existed lists neither it nor its features."""
    import json

    docs, cands = docs_and_candidates
    options = {"folds": 2, "max_iter": 20}
    old = GradientBoostingFilter(FilterConfig(name="xlnel.gbdt.v1",
                                              options={**options, "provenance": False}), "en")
    old.fit(docs, cands).save(tmp_path / "f")
    meta_path = tmp_path / "f" / "filter.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta["options"]["provenance"]
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    loaded = GradientBoostingFilter.load(tmp_path / "f", FilterConfig(name="xlnel.gbdt.v1",
                                                                      options=options), "en")
    assert not loaded.extractor.provenance
    for a, b in zip(old.score_batch(docs, cands), loaded.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)
    # asking for the features it was not trained with still fails
    with pytest.raises(ArtifactError, match="other features"):
        GradientBoostingFilter.load(tmp_path / "f", FilterConfig(
            name="xlnel.gbdt.v1", options={**options, "provenance": True}), "en")


def test_concept_features_hand_worked():
    from xlnel.filtering.features import CONCEPT_FEATURES, FeatureExtractor, Priors
    from xlnel.types import Document, Link

    ex = FeatureExtractor("en", frozenset(), provenance=True, concepts=True)
    assert ex.feature_names[-len(CONCEPT_FEATURES):] == CONCEPT_FEATURES
    train = Document(id="t", text="sugar and tired", entities=(Link(0, 5, "sugar", ("C1",)),))
    sugar_t, and_t, tired_t = Span(0, 5, "sugar"), Span(6, 9, "and"), Span(10, 15, "tired")
    train_cands = [Candidate(sugar_t, "C1", "sugar", 1.0), Candidate(sugar_t, "C2", "sugar", 1.0),
                   Candidate(sugar_t, "C3", "sugars", 0.8),  # not a best match: not counted
                   Candidate(and_t, "C2", "and", 1.0), Candidate(tired_t, "C4", "tired", 1.0)]
    priors = Priors()
    ex.count(priors, train, train_cands, np.array([1, 1, 1, 0, 0], dtype=bool))
    assert priors.concept == {"C1": [1, 1], "C2": [1, 2], "C4": [0, 1]}
    doc = Document(id="d", text="glucose and sugar")
    glucose, sugar = Span(0, 7, "glucose"), Span(12, 17, "sugar")
    cands = [Candidate(glucose, "C1", "glucose", 1.0), Candidate(glucose, "C4", "glucose", 1.0),
             Candidate(glucose, "C9", "glucosa", 0.7), Candidate(sugar, "C3", "sugars", 0.9)]
    rows = ex.transform(doc, cands, priors)
    cols = {name: rows[:, -len(CONCEPT_FEATURES) + i].tolist()
            for i, name in enumerate(CONCEPT_FEATURES)}
    # "glucose" stands for C1 (1 gold of 1, smoothed (1 + 0.1) / 2) and C4 (0 of 1): C1 wins
    assert cols["concept_prior"] == pytest.approx([0.55, 0.55, 0.1, 0.1])
    assert cols["concept_seen"] == pytest.approx([np.log(2), np.log(2), 0, 0])
    assert cols["name_concepts"] == [2, 2, 1, 1]
    plain = FeatureExtractor("en", frozenset(), provenance=True).transform(doc, cands, priors)
    np.testing.assert_array_equal(rows[:, :-len(CONCEPT_FEATURES)], plain)


@pytest.mark.parametrize(("options", "last", "table"), [
    ({"concepts": True}, "name_concepts", "concept"),
    ({"lexical": True, "concepts": True}, "long_form", "lexical"),
    ({"ngrams": True}, "name_ngram", "mention"),
    ({"lexical": True, "ngrams": True}, "name_ngram", "lexical"),
    ({"kinds": True}, "concept_kind", "kind"),
    ({"ngrams": True, "kinds": True}, "concept_kind", "mention"),
    ({"edits": True}, "edit_seen", "edit"),
    ({"edits": True, "concepts": True, "kinds": True}, "concept_kind", "edit"),
])
def test_option_priors_round_trip(tmp_path, docs_and_candidates, options, last, table):
    docs, cands = docs_and_candidates
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={"folds": 2, "max_iter": 20, **options})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    assert f.feature_names[-1] == last and getattr(f.priors, table)
    f.save(tmp_path / "f")
    g = GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    assert getattr(g.priors, table) == getattr(f.priors, table)
    for a, b in zip(f.score_batch(docs, cands), g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)


def _name_prior_case():
    from xlnel.types import Document, Link

    doc = Document(id="d", text="aspirin day",
                   entities=(Link(start=0, end=7, text="aspirin", concept_ids=("C1",)),))
    aspirin, day = Span(0, 7, "aspirin"), Span(8, 11, "day")
    cands = [Candidate(aspirin, "C1", "aspirin", 1.0),
             Candidate(aspirin, "C2", "Aspirin", 1.0),  # the same name, a second concept
             Candidate(aspirin, "C3", "asp", 0.5),
             Candidate(day, "C1", "aspirin", 0.45),  # a loose match at an everyday word
             Candidate(day, "C4", "days", 0.8)]
    return doc, cands


@pytest.mark.parametrize(("name_prior", "expected"), [
    # every candidate: aspirin at the gold span twice (two concepts) and once at "day"
    ("all", {"aspirin": [2, 3], "asp": [1, 1], "days": [0, 1]}),
    # only each span's best names, once per span: "asp" and aspirin at "day" are not counted
    ("best", {"aspirin": [1, 1], "days": [0, 1]}),
])
def test_name_prior_counts_hand_worked(name_prior, expected):
    from xlnel.filtering.features import FeatureExtractor, Priors

    doc, cands = _name_prior_case()
    ex = FeatureExtractor("en", frozenset(), name_prior=name_prior)
    priors = Priors()
    ex.count(priors, doc, cands, label_candidates(doc, cands, "span"))
    assert priors.name == expected
    # the mention prior does not depend on the option
    assert priors.mention == {"aspirin": [1, 1], "day": [0, 1]}
    rate, seen = priors.rate("name", "aspirin")
    assert (rate, seen) == pytest.approx(((expected["aspirin"][0] + 0.1)
                                          / (expected["aspirin"][1] + 1), expected["aspirin"][1]))


def test_name_prior_best_with_ties_and_no_gold():
    from xlnel.filtering.features import FeatureExtractor, Priors
    from xlnel.types import Document

    ex = FeatureExtractor("en", frozenset(), name_prior="best")
    doc = Document(id="d", text="flu")
    span = Span(0, 3, "flu")
    cands = [Candidate(span, "C1", "flu", 0.9), Candidate(span, "C2", "flue", 0.9),
             Candidate(span, "C3", "fly", 0.6)]
    priors = Priors()
    ex.count(priors, doc, cands, np.zeros(3, dtype=bool))
    # both tied best names count once as not gold; the weaker "fly" is not counted
    assert sorted(priors.name.items()) == [("flu", [0, 1]), ("flue", [0, 1])]
    empty = Priors()
    ex.count(empty, doc, [], np.zeros(0, dtype=bool))
    assert empty.name == {}


def test_name_prior_option_is_checked_and_fits(docs_and_candidates):
    from xlnel.filtering.features import FeatureExtractor

    with pytest.raises(ValueError, match="name_prior"):
        FeatureExtractor("en", frozenset(), name_prior="exact")
    with pytest.raises(ValueError, match="name_prior"):
        GradientBoostingFilter(FilterConfig(name="xlnel.gbdt.v1",
                                            options={"name_prior": "some"}), "en")
    docs, cands = docs_and_candidates
    cfg = FilterConfig(name="xlnel.gbdt.v1",
                       options={"folds": 2, "max_iter": 20, "name_prior": "best"})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    assert f.extractor.name_prior == "best"
    assert f.feature_names == GradientBoostingFilter(
        FilterConfig(name="xlnel.gbdt.v1"), "en").feature_names  # the same columns


def test_lexical_features_hand_worked():
    from xlnel.filtering.features import FeatureExtractor, Priors
    from xlnel.filtering.lexical_features import LEXICAL_FEATURES
    from xlnel.types import Document, Link

    ex = FeatureExtractor("en", frozenset(), lexical=True)
    assert ex.feature_names[-len(LEXICAL_FEATURES):] == LEXICAL_FEATURES
    train = Document(id="t", text="renal failure and hepatitis",
                     entities=(Link(0, 13, "renal failure", ("C1",)),))
    renal_failure, failure = Span(0, 13, "renal failure"), Span(6, 13, "failure")
    hepatitis = Span(18, 27, "hepatitis")
    train_cands = [Candidate(renal_failure, "C1", "renal failure", 1.0),
                   Candidate(renal_failure, "C2", "failure", 0.6),  # the same span: once
                   Candidate(failure, "C2", "failure", 1.0),
                   Candidate(hepatitis, "C3", "hepatitis", 1.0)]
    priors = Priors()
    ex.count(priors, train, train_cands, np.array([1, 1, 0, 0], dtype=bool))
    # last word "failure" twice (once gold), ending "lure" twice, "hepatitis" / "itis" once
    assert priors.lexical == {"h:failure": [1, 2], "s:lure": [1, 2], "h:hepatitis": [0, 1],
                              "s:itis": [0, 1]}
    text = "Acute liver failure (ALF) and colitis; ALF again"
    doc = Document(id="d", text=text)
    liver_failure, alf = Span(6, 19, "liver failure"), Span(21, 24, "ALF")
    colitis, alf2 = Span(30, 37, "colitis"), Span(39, 42, "ALF")
    cands = [Candidate(liver_failure, "C1", "liver failure", 1.0), Candidate(alf, "C9", "alf", 1.0),
             Candidate(colitis, "C4", "colitis", 1.0), Candidate(alf2, "C9", "alf", 1.0)]
    rows = ex.transform(doc, cands, priors)
    cols = {name: rows[:, -len(LEXICAL_FEATURES) + i].tolist()
            for i, name in enumerate(LEXICAL_FEATURES)}
    # "liver failure": head "failure" 1 of 2, smoothed (1 + 0.1) / 3; "colitis" ends in "itis"
    # (0 of 1: 0.1 / 2) with an unseen last word (0.1 / 1); "alf" never seen
    assert cols["head_prior"] == pytest.approx([1.1 / 3, 0.1, 0.1, 0.1])
    assert cols["head_seen"] == pytest.approx([np.log(3), 0, 0, 0])
    assert cols["suffix_prior"] == pytest.approx([1.1 / 3, 0.1, 0.05, 0.1])
    # "Acute liver failure (ALF)" defines ALF; "liver failure" ends the long form
    assert cols["short_form"] == [0, 1, 0, 1]
    assert cols["long_form"] == [1, 0, 0, 0]
    plain = FeatureExtractor("en", frozenset()).transform(doc, cands, priors)
    np.testing.assert_array_equal(rows[:, :-len(LEXICAL_FEATURES)], plain)


def test_ngram_columns_follow_the_lexical_ones(docs_and_candidates):
    from xlnel.filtering.features import FeatureExtractor, count_priors
    from xlnel.filtering.ngram_priors import NGRAM_FEATURES

    docs, cands = docs_and_candidates
    labels = [label_candidates(d, c, "span") for d, c in zip(docs, cands, strict=True)]
    both = FeatureExtractor("en", frozenset(), lexical=True, ngrams=True)
    assert both.feature_names[-len(NGRAM_FEATURES):] == NGRAM_FEATURES
    priors = count_priors(both, docs, cands, labels)
    rows = both.transform(docs[0], cands[0], priors)
    lexical = FeatureExtractor("en", frozenset(), lexical=True).transform(docs[0], cands[0],
                                                                           priors)
    np.testing.assert_array_equal(rows[:, :-len(NGRAM_FEATURES)], lexical)
    assert ((rows[:, -2:] > 0) & (rows[:, -2:] < 1)).all()
    # the span text's column is the mention model's prediction for it
    model = both.ngram_models(priors)[0]
    expected = model.predict([both.norm(c.span.text) for c in cands[0]])
    np.testing.assert_allclose(rows[:, -2], expected, rtol=1e-6)


@pytest.mark.parametrize(("option", "arrays", "message"), [
    ("ngrams", "ngram_priors.npz", "ngram_priors.npz"),
    ("kinds", "kind_prior.npz", "kind_prior.npz.*kinds"),
])
def test_saved_filter_without_its_option_arrays_is_refused(tmp_path, docs_and_candidates,
                                                           option, arrays, message):
    docs, cands = docs_and_candidates
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={"folds": 2, "max_iter": 5,
                                                       option: True})
    GradientBoostingFilter(cfg, "en").fit(docs, cands).save(tmp_path / "f")
    (tmp_path / "f" / arrays).unlink()
    with pytest.raises(ArtifactError, match=message):
        GradientBoostingFilter.load(tmp_path / "f", cfg, "en")


def test_kind_table_labels_every_name_by_its_concept():
    from xlnel.filtering.concept_kinds import kind_key, kind_table

    kind = {kind_key("D1", "drowsiness"): [1, 6],   # annotated once of six: a disease
            kind_key("D1", "somnolence"): [0, 2],   # its other name is labelled with it
            kind_key("D2", "neutrophils"): [0, 4],  # never annotated
            kind_key("D3", "somnolence"): [0, 1]}   # a name two concepts share
    assert kind_table(kind) == {"drowsiness": [1, 1], "somnolence": [1, 2],
                                "neutrophils": [0, 1]}


def test_kind_column_counts_close_matches_and_gold_spans():
    from xlnel.filtering.concept_kinds import KIND_FEATURES
    from xlnel.filtering.features import FeatureExtractor, Priors
    from xlnel.types import Document, Span

    ex = FeatureExtractor("en", frozenset(), kinds=True)
    assert ex.feature_names[-1:] == KIND_FEATURES
    train = Document(id="t", text="anemia in rats")
    anemia, rats = Span(0, 6, "anemia"), Span(10, 14, "rats")
    cands = [Candidate(anemia, "C1", "anemia", 1.0), Candidate(anemia, "C2", "anaemias", 0.6),
             Candidate(rats, "C3", "rats", 1.0), Candidate(rats, "C4", "ratios", 0.5)]
    priors = Priors()
    ex.count(priors, train, cands, np.array([1, 0, 0, 0], dtype=bool))
    # gold, or a close match: loose matches of no gold span say nothing of their concept
    assert priors.kind == {"C1\tanemia": [1, 1], "C3\trats": [0, 1]}
    doc = Document(id="d", text="leukemia")
    rows = ex.transform(doc, [Candidate(Span(0, 8, "leukemia"), "C5", "leukemia", 1.0)], priors)
    expected = ex.kind_model(priors).predict(["leukemia"])
    np.testing.assert_allclose(rows[:, -1], expected, rtol=1e-6)
    plain = FeatureExtractor("en", frozenset()).transform(
        doc, [Candidate(Span(0, 8, "leukemia"), "C5", "leukemia", 1.0)], priors)
    np.testing.assert_array_equal(rows[:, :-1], plain)


def test_negatives_draws_each_models_negatives_by_its_seed(docs_and_candidates, monkeypatch):
    docs, cands = docs_and_candidates
    seen: list[tuple[int, int, float]] = []
    fit = HistGradientBoostingClassifier.fit

    def spy(model, x, y, sample_weight=None):
        weights = np.ones(len(y)) if sample_weight is None else sample_weight
        seen.append((len(y), int(y.sum()), float(weights[~y.astype(bool)].max())))
        return fit(model, x, y, sample_weight=sample_weight)

    monkeypatch.setattr(HistGradientBoostingClassifier, "fit", spy)
    options = {"folds": 2, "max_iter": 20, "bag": 2, "negatives": 0.5, "unit": "pair"}
    f = GradientBoostingFilter(FilterConfig(options=options), "en").fit(docs, cands)
    y = np.concatenate([label_candidates(d, c) for d, c in zip(docs, cands, strict=True)])
    final = seen[-2:]  # the last two fits are the bag of the final model, on every document
    assert all(pos == int(y.sum()) and weight == 2.0 for _, pos, weight in final)
    assert all(rows < len(y) for rows, _, _ in final)
    assert final[0][0] != final[1][0]  # seeds 0 and 1 draw other negatives
    pooled = np.concatenate(f.score_batch(docs, cands))
    assert pooled[y].mean() > pooled[~y].mean()
    # a share so small that a draw holds no negative still fits on both classes
    tiny = GradientBoostingFilter(FilterConfig(options={**options, "negatives": 1e-9}), "en")
    assert tiny._fit_trees(np.zeros((4, 3)), np.array([True, False, False, True])) is not None
    assert seen[-1][:2] == (3, 2)


@pytest.mark.parametrize("seed, bag, ok", [
    (2**32 - 1, 1, True), (2**32 - 1, 2, False), (2**32 - 4, 4, True), (2**32 - 3, 4, False),
])
def test_the_last_bag_seed_stays_in_numpys_range(seed, bag, ok):
    """The bag's models are seeded seed..seed+bag-1: a seed in range with a bag that pushes
    the last one to 2**32 is refused at validation, naming the key, value and what is
    allowed, not left to fail inside numpy after the features are computed."""
    config = FilterConfig(options={"seed": seed, "bag": bag})
    if ok:
        GradientBoostingFilter(config, "en")
        return
    with pytest.raises(ConfigError, match=rf"filter\.options\.bag: .*below 2\*\*32 .*"
                                          rf"at most {2**32 - seed}.*\(got {bag}\)"):
        GradientBoostingFilter(config, "en")
