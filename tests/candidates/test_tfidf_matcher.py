from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlnel.candidates.tfidf import MatcherConfig, TfidfMatcher, brute_force_search, char_ngrams
from xlnel.errors import ArtifactError, ConfigError


def _rounded(results):
    return [[(m.name_index, round(m.score, 4)) for m in row] for row in results]


def test_char_ngrams():
    assert char_ngrams("abc", 1, 2) == ["a", "b", "c", "ab", "bc"]
    assert char_ngrams("", 1, 3) == []


def test_exact_name_scores_one_and_comes_first():
    m = TfidfMatcher(MatcherConfig(threshold=0.4)).fit(["diabetes", "diabetic foot", "asthma"])
    top = m.search(["diabetes"])[0]
    assert top[0].name_index == 0
    assert top[0].score == pytest.approx(1.0, abs=1e-5)
    assert all(r.score >= 0.4 for r in top)


def test_unknown_ngrams_lower_the_cosine():
    # 'x' and 'y' are unknown to the index: the query must not look like a perfect match
    m = TfidfMatcher(MatcherConfig(threshold=0.0)).fit(["a", "b"])
    score = m.search(["axyxy"])[0][0].score
    assert score < 0.5


@pytest.mark.parametrize("th", [0.0, 0.3, 0.4, 0.7, 1.0])
@pytest.mark.parametrize("sublinear", [False, True])
@pytest.mark.parametrize("use_idf", [False, True])
def test_matches_brute_force_on_random_data(th, sublinear, use_idf):
    rng = random.Random(int(th * 10) + 100 * sublinear + 7 * use_idf)
    alphabet = "abcdefg h"
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))).strip()
                    or "a" for _ in range(600)})
    queries = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
               for _ in range(150)]
    cfg = MatcherConfig(threshold=th, top_m=15, sublinear_tf=sublinear, use_idf=use_idf,
                        chunk_size=17)
    m = TfidfMatcher(cfg).fit(names)
    assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.text(alphabet="abcאבג ", min_size=1, max_size=8), min_size=1,
                      max_size=30, unique=True),
       queries=st.lists(st.text(alphabet="abcאבגd ", max_size=8), max_size=10),
       th=st.floats(0.0, 1.0))
def test_property_same_as_brute_force(names, queries, th):
    m = TfidfMatcher(MatcherConfig(threshold=th, top_m=5, chunk_size=3)).fit(names)
    assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


def test_save_load_round_trip(tmp_path):
    names = ["insulin", "insulin pump", "metformin", "סוכרת"]
    m = TfidfMatcher(MatcherConfig(threshold=0.2, sublinear_tf=True)).fit(names)
    m.save(tmp_path / "m")
    loaded = TfidfMatcher.load(tmp_path / "m")
    queries = ["insulin pumps", "סכרת", "metphormin"]
    assert _rounded(loaded.search(queries)) == _rounded(m.search(queries))
    assert loaded.names == names


def test_load_rejects_incompatible_settings(tmp_path):
    TfidfMatcher(MatcherConfig()).fit(["a"]).save(tmp_path)
    with pytest.raises(ConfigError, match="ngram_max"):
        TfidfMatcher.load(tmp_path, MatcherConfig(ngram_max=4))
    (tmp_path / "idf.npy").unlink()
    with pytest.raises(ArtifactError, match="idf.npy"):
        TfidfMatcher.load(tmp_path)


def test_bad_config_and_empty_fit():
    with pytest.raises(ConfigError, match="threshold"):
        MatcherConfig(threshold=1.5)
    with pytest.raises(ConfigError, match="top_m"):
        MatcherConfig(top_m=0)
    with pytest.raises(ValueError, match="empty"):
        TfidfMatcher().fit([])
    with pytest.raises(RuntimeError, match="not fitted"):
        TfidfMatcher().search(["x"])


def test_replacing_the_config_rebuilds_the_index_split():
    rng = random.Random(5)
    names = sorted({"".join(rng.choice("abcde ") for _ in range(8)).strip() or "a"
                    for _ in range(300)})
    queries = ["".join(rng.choice("abcde ") for _ in range(6)) for _ in range(40)]
    m = TfidfMatcher(MatcherConfig(threshold=0.8)).fit(names)
    m.config = MatcherConfig(threshold=0.2, top_m=10)
    assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))
