from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlnel.candidates import tfidf_kernels
from xlnel.candidates.tfidf import (
    Match,
    MatcherConfig,
    TfidfMatcher,
    brute_force_search,
    char_ngrams,
)
from xlnel.errors import ArtifactError, ConfigError

# the compiled (numba) search and the scipy one must both equal brute force
PATHS = ["compiled", "scipy"]


@contextmanager
def _search_path(path: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        if path == "scipy":
            mp.setattr(tfidf_kernels, "AVAILABLE", False)
        yield


def _rounded(results):
    return [[(m.name_index, round(m.score, 4)) for m in row] for row in results]


def test_numba_is_installed():
    # a dependency: without it search falls back to the slower scipy path
    assert tfidf_kernels.AVAILABLE


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
@pytest.mark.parametrize("path", PATHS)
def test_matches_brute_force_on_random_data(th, sublinear, use_idf, path):
    rng = random.Random(int(th * 10) + 100 * sublinear + 7 * use_idf)
    alphabet = "abcdefg h"
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))).strip()
                    or "a" for _ in range(600)})
    queries = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
               for _ in range(150)]
    cfg = MatcherConfig(threshold=th, top_m=15, sublinear_tf=sublinear, use_idf=use_idf,
                        chunk_size=17)
    m = TfidfMatcher(cfg).fit(names)
    with _search_path(path):
        assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.text(alphabet="abcאבג ", min_size=1, max_size=8), min_size=1,
                      max_size=30, unique=True),
       queries=st.lists(st.text(alphabet="abcאבגd ", max_size=8), max_size=10),
       th=st.floats(0.0, 1.0))
@pytest.mark.parametrize("path", PATHS)
def test_property_same_as_brute_force(path, names, queries, th):
    m = TfidfMatcher(MatcherConfig(threshold=th, top_m=5, chunk_size=3)).fit(names)
    with _search_path(path):
        assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


@pytest.mark.parametrize("th", [0.0, 0.4, 0.7])
@pytest.mark.parametrize("path", PATHS)
def test_pad_ends_matches_brute_force(th, path):
    rng = random.Random(int(th * 10) + 31)
    alphabet = "abcdefg h"
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))).strip()
                    or "a" for _ in range(400)})
    queries = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
               for _ in range(100)]
    m = TfidfMatcher(MatcherConfig(threshold=th, top_m=10, pad_ends=True, ngram_min=3,
                                   chunk_size=13)).fit(names)
    with _search_path(path):
        assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


def test_pad_ends_adds_word_start_and_end_ngrams():
    m = TfidfMatcher(MatcherConfig(ngram_min=3, threshold=0.0, pad_ends=True))
    m.fit(["diabetes", "betes dia"])
    assert {" di", "es ", "iab"} <= set(m.vocabulary)
    assert "dia" in m.vocabulary and " be" in m.vocabulary
    assert m.search(["diabetes"])[0][0] == Match(0, 1.0)
    # the query is padded too: its own first and last grams are known, not out of vocabulary
    plain = TfidfMatcher(MatcherConfig(ngram_min=3, threshold=0.0)).fit(["diabetes", "x"])
    assert " di" not in plain.vocabulary


@pytest.mark.parametrize("th", [0.0, 0.3, 0.6])
def test_manhattan_matches_brute_force(th):
    rng = random.Random(int(th * 10))
    alphabet = "abcdefg h"
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))).strip()
                    or "a" for _ in range(300)})
    queries = ["".join(rng.choice(alphabet + "xy") for _ in range(rng.randint(0, 10)))
               for _ in range(60)]
    m = TfidfMatcher(MatcherConfig(threshold=th, top_m=10, metric="manhattan",
                                   chunk_size=7)).fit(names)
    assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


def test_manhattan_is_one_minus_half_the_l1_distance():
    m = TfidfMatcher(MatcherConfig(threshold=0.0, metric="manhattan", use_idf=False))
    m.fit(["ab", "cd"])
    # identical string: 1; disjoint: not returned; 'abz' shares a, b, ab of a, b, z, ab, bz, abz
    assert m.search(["ab"])[0][0] == Match(0, 1.0)
    assert [x.name_index for x in m.search(["cd"])[0]] == [1]
    assert m.search(["abz"])[0][0].score == pytest.approx(3 / 6)


def test_unknown_metric_is_a_config_error():
    with pytest.raises(ConfigError, match="metric"):
        MatcherConfig(metric="euclidean")


def test_save_load_round_trip(tmp_path):
    names = ["insulin", "insulin pump", "metformin", "סוכרת"]
    m = TfidfMatcher(MatcherConfig(threshold=0.2, sublinear_tf=True)).fit(names)
    m.save(tmp_path / "m")
    loaded = TfidfMatcher.load(tmp_path / "m")
    queries = ["insulin pumps", "סכרת", "metphormin"]
    assert _rounded(loaded.search(queries)) == _rounded(m.search(queries))
    assert list(loaded.names) == names


def test_load_rejects_incompatible_settings(tmp_path):
    TfidfMatcher(MatcherConfig()).fit(["a"]).save(tmp_path)
    with pytest.raises(ConfigError, match="ngram_max"):
        TfidfMatcher.load(tmp_path, MatcherConfig(ngram_max=4))
    with pytest.raises(ConfigError, match="pad_ends"):
        TfidfMatcher.load(tmp_path, MatcherConfig(pad_ends=True))
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


def test_ties_go_by_name_index_and_top_m_cuts_them():
    # with plain TF, 'xa', 'xb' and 'xc' score the same against 'x'
    names = ["xc", "xa", "xb", "q"]
    m = TfidfMatcher(MatcherConfig(threshold=0.1, top_m=2, use_idf=False)).fit(names)
    top = m.search(["x"])[0]
    assert [r.name_index for r in top] == [0, 1]
    assert top[0].score == top[1].score
    assert _rounded(m.search(["x"])) == _rounded(brute_force_search(m, ["x"]))


def test_threshold_zero_returns_every_name_sharing_an_ngram():
    names = ["abc", "cde", "xyz"]
    m = TfidfMatcher(MatcherConfig(threshold=0.0, top_m=10)).fit(names)
    assert sorted(r.name_index for r in m.search(["ac"])[0]) == [0, 1]


def test_threshold_one_keeps_only_the_identical_name():
    m = TfidfMatcher(MatcherConfig(threshold=1.0)).fit(["asthma", "asthmas", "asthm"])
    assert [r.name_index for r in m.search(["asthma"])[0]] == [0]
    assert m.search(["asthmaa"])[0] == []


def test_empty_and_unseen_queries_find_nothing():
    m = TfidfMatcher(MatcherConfig(threshold=0.0)).fit(["insulin", "metformin"])
    assert m.search([]) == []
    assert m.search(["", "   ", "\u05d0\u05d1", "qqq"]) == [[], [], [], []]
    # a query mixing seen and unseen n-grams keeps its honest norm
    assert _rounded(m.search(["qqinsu"])) == _rounded(brute_force_search(m, ["qqinsu"]))


def _random_strings(rng, n, alphabet="abcdefgh ", lo=1, hi=12):
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def test_workers_give_the_same_results():
    rng = random.Random(3)
    names = sorted({s.strip() or "a" for s in _random_strings(rng, 800)})
    queries = _random_strings(rng, 300, lo=0)
    one = TfidfMatcher(MatcherConfig(top_m=7, chunk_size=16)).fit(names)
    four = TfidfMatcher(MatcherConfig(top_m=7, chunk_size=16, workers=4)).fit(names)
    assert one.search(queries) == four.search(queries)
    with pytest.raises(ConfigError, match="workers"):
        MatcherConfig(workers=0)


@pytest.mark.parametrize("path", PATHS)
def test_index_blocks_give_the_same_results(monkeypatch, path):
    # several name blocks, as at dictionary scale
    import xlnel.candidates.tfidf_index as ix

    rng = random.Random(4)
    names = sorted({s.strip() or "a" for s in _random_strings(rng, 500)})
    queries = _random_strings(rng, 80, lo=0)
    split = ix.split_index
    monkeypatch.setattr(ix, "split_index", lambda v, r, t: split(v, r, t, block_size=37))
    m = TfidfMatcher(MatcherConfig(top_m=9, threshold=0.3)).fit(names)
    assert len(m._index.block_indptr) > 1
    with _search_path(path):
        assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


def test_loaded_matcher_is_memory_mapped_and_answers_the_same(tmp_path):
    rng = random.Random(5)
    names = sorted({s.strip() or "a" for s in _random_strings(rng, 400)})
    queries = _random_strings(rng, 60, lo=0)
    m = TfidfMatcher(MatcherConfig(top_m=5, threshold=0.3)).fit(names)
    m.save(tmp_path / "m")
    loaded = TfidfMatcher.load(tmp_path / "m")
    assert loaded.search(queries) == m.search(queries)
    assert isinstance(loaded._name_vectors.data, np.memmap)
    assert isinstance(loaded._index.block_names, np.memmap)
    assert isinstance(loaded.idf, np.memmap)
    assert loaded.names[3] == names[3] and len(loaded.names) == len(names)
    in_memory = TfidfMatcher.load(tmp_path / "m", mmap=False)
    assert not isinstance(in_memory._name_vectors.data, np.memmap)
    assert in_memory.search(queries) == m.search(queries)
    # a lower threshold than the saved split re-splits (in memory) and stays exact
    lower = TfidfMatcher.load(tmp_path / "m", MatcherConfig(top_m=5, threshold=0.1))
    assert _rounded(lower.search(queries)) == _rounded(brute_force_search(lower, queries))


def test_loads_the_first_save_format(tmp_path):
    import json

    import scipy.sparse as sp

    names = ["insulin", "insulin pump", "metformin"]
    m = TfidfMatcher(MatcherConfig(threshold=0.2)).fit(names)
    meta = {"xlnel_version": "0", "config": {"ngram_min": 1, "ngram_max": 3, "top_m": 50,
                                             "threshold": 0.2, "sublinear_tf": False,
                                             "use_idf": True, "chunk_size": None},
            "oov_idf": m._oov_idf}
    (tmp_path / "matcher.json").write_text(json.dumps(meta))
    (tmp_path / "names.json").write_text(json.dumps(names))
    vocab = sorted(m.vocabulary, key=m.vocabulary.__getitem__)
    (tmp_path / "vocabulary.json").write_text(json.dumps(vocab))
    np.save(tmp_path / "idf.npy", m.idf)
    sp.save_npz(tmp_path / "name_vectors.npz", m._name_vectors)
    old = TfidfMatcher.load(tmp_path)
    assert old.search(["insulin pumps"]) == m.search(["insulin pumps"])


def test_candidates_config_reaches_the_matcher():
    from xlnel.candidates.tfidf_generator import matcher_config
    from xlnel.config import CandidatesConfig

    cfg = matcher_config(CandidatesConfig(pad_ends=True, ngram_min=3, threshold=0.3))
    assert (cfg.pad_ends, cfg.ngram_min, cfg.threshold) == (True, 3, 0.3)
    assert matcher_config(CandidatesConfig()).pad_ends is False


@pytest.mark.parametrize("path", PATHS)
def test_queries_touching_thousands_of_names_match_brute_force(path):
    # one block, a query touching more names than the kernel's first buffers hold
    rng = random.Random(8)
    names = sorted({"".join(rng.choice("abcde") for _ in range(rng.randint(3, 9)))
                    for _ in range(9000)})
    assert len(names) > 4096
    queries = ["abc", "a", "eeddcc", "bad cab"]
    m = TfidfMatcher(MatcherConfig(threshold=0.2, top_m=300)).fit(names)
    with _search_path(path):
        assert _rounded(m.search(queries)) == _rounded(brute_force_search(m, queries))


def test_packed_bounds_never_lower_a_bound():
    rng = np.random.default_rng(0)
    rest = np.nextafter(rng.random(1000).astype(np.float32) * 0.9, np.float32(2))
    rest[:3] = [0.0, 1e-9, 0.89999]
    bucket = rng.integers(0, 200, 1000)
    packed = tfidf_kernels.pack_bounds(rest, bucket)
    assert packed.dtype == np.uint32
    assert np.array_equal(packed >> tfidf_kernels.REST_BITS, bucket)
    back = (packed & ((1 << tfidf_kernels.REST_BITS) - 1)) / float(1 << tfidf_kernels.REST_BITS)
    assert np.all(back >= rest.astype(np.float64))
    assert np.all(back - rest < 2.0 ** -23)
    with pytest.raises(ValueError, match="buckets"):
        tfidf_kernels.pack_bounds(rest[:1], np.array([256]))
    with pytest.raises(ValueError, match="below 1"):
        tfidf_kernels.pack_bounds(np.array([1.0], np.float32), np.array([0]))


@pytest.mark.parametrize("metric", ["cosine", "manhattan"])
@pytest.mark.parametrize("pad_ends", [False, True])
def test_pair_scores_equal_the_search_scores(metric, pad_ends):
    rng = random.Random(7)
    alphabet = "abcdefg h"
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(2, 10))).strip()
                    or "a" for _ in range(200)})
    queries = ["".join(rng.choice(alphabet + "xy") for _ in range(rng.randint(1, 10)))
               for _ in range(40)]
    m = TfidfMatcher(MatcherConfig(threshold=0.0, top_m=5, metric=metric,
                                   pad_ends=pad_ends)).fit(names)
    found = m.search(queries)
    pairs = [(q, names[hit.name_index], hit.score)
             for q, row in zip(queries, found, strict=True) for hit in row]
    got = m.pair_scores([q for q, _, _ in pairs], [n for _, n, _ in pairs])
    assert got == pytest.approx([s for _, _, s in pairs], abs=1e-5)
    # a name outside the dictionary is scored too; its unknown n-grams lower the score
    assert m.pair_scores(["abc"], ["abc"])[0] == pytest.approx(1.0, abs=1e-5)
    assert m.pair_scores(["abc"], ["abcxyz"])[0] < 1.0
    assert m.pair_scores([], []).shape == (0,)
    with pytest.raises(ValueError, match="names"):
        m.pair_scores(["a"], [])
