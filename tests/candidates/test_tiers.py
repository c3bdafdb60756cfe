"""Generated names as a fallback tier behind the names taken as given."""

from __future__ import annotations

import pytest

from xlnel.candidates.tfidf_generator import TfidfCandidateGenerator
from xlnel.candidates.tiers import tier_hits
from xlnel.config import CandidatesConfig
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ConfigError
from xlnel.linkers.dense import DenseCandidateGenerator
from xlnel.types import Document

KB = ("C1", "diabetes", 0.9, "kb", None)
GEN_EXACT = ("C2", "diabetes", 1.0, "translated", 0.7)
GEN_FUZZY = ("C3", "diabetic", 0.6, "corpus", 0.4)
UNKNOWN = ("C4", "diabetes", 0.5, None, None)


def test_no_setting_keeps_every_hit():
    assert tier_hits([KB, GEN_EXACT, GEN_FUZZY]) == [KB, GEN_EXACT, GEN_FUZZY]
    assert tier_hits([]) == []


def test_fallback_drops_generated_hits_where_a_given_name_reaches():
    assert tier_hits([KB, GEN_EXACT, GEN_FUZZY], fallback=0.9) == [KB]  # inclusive
    assert tier_hits([KB, GEN_EXACT, GEN_FUZZY], fallback=0.95) == [KB, GEN_EXACT, GEN_FUZZY]
    assert tier_hits([GEN_EXACT, GEN_FUZZY], fallback=0.0) == [GEN_EXACT, GEN_FUZZY]


def test_an_unknown_source_counts_as_given():
    assert tier_hits([UNKNOWN, GEN_EXACT], fallback=0.5) == [UNKNOWN]


def test_generated_min_score_drops_weak_generated_hits_only():
    hits = [KB, GEN_EXACT, GEN_FUZZY, UNKNOWN]
    assert tier_hits(hits, generated_min_score=1.0) == [KB, GEN_EXACT, UNKNOWN]
    assert tier_hits(hits, fallback=0.95, generated_min_score=0.7) == [KB, GEN_EXACT, UNKNOWN]
    assert tier_hits(hits, fallback=0.9, generated_min_score=0.0) == [KB, UNKNOWN]


def test_generated_min_chars_drops_short_generated_names_only():
    short_gen = ("C5", "no", 1.0, "corpus", 0.9)
    short_kb = ("C6", "ok", 1.0, "kb", None)
    hyphen = ("C7", "a-b-c", 1.0, "translated", 0.5)  # three letters, the hyphens do not count
    hits = [short_gen, short_kb, hyphen, GEN_EXACT]
    assert tier_hits(hits, generated_min_chars=3) == [short_kb, hyphen, GEN_EXACT]
    assert tier_hits(hits, generated_min_chars=4) == [short_kb, GEN_EXACT]
    assert tier_hits(hits, generated_min_score=1.0, generated_min_chars=9) == [short_kb]


def _found(cfg: CandidatesConfig) -> set[tuple[str, str]]:
    d = Dictionary()
    d.add("diabetes", "C1")
    d.add("diabetes", "C9", source="translated", score=0.6)
    d.add("tired", "C2", source="corpus", score=0.3)
    d.add("tiredness", "C5", source="translated", score=0.8)
    gen = TfidfCandidateGenerator(cfg, "en").fit(d)
    return {(c.span.text, c.concept_id)
            for c in gen.generate(Document("d", "tired of diabetes"))}


def test_generator_tiers_generated_names():
    base = _found(CandidatesConfig())
    assert {("diabetes", "C1"), ("diabetes", "C9"), ("tired", "C2"), ("tired", "C5")} <= base
    tiered = _found(CandidatesConfig(generated_fallback=1.0))
    assert ("diabetes", "C9") not in tiered and ("tired", "C2") in tiered
    strict = _found(CandidatesConfig(generated_min_score=1.0))
    assert ("tired", "C5") not in strict and ("tired", "C2") in strict
    assert ("diabetes", "C9") in strict
    long_only = _found(CandidatesConfig(generated_min_chars=6))
    assert ("tired", "C2") not in long_only and ("diabetes", "C9") in long_only


def test_the_dense_generator_refuses_tiers():
    with pytest.raises(ConfigError, match="generated_fallback"):
        DenseCandidateGenerator(CandidatesConfig(generated_fallback=1.0), "en")
    with pytest.raises(ConfigError, match="generated_min_chars"):
        DenseCandidateGenerator(CandidatesConfig(generated_min_chars=4), "en")
