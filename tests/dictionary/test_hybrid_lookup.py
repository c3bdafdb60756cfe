"""The hybrid lookup ranking on hand-worked cases: TF-IDF cosine plus a weighted encoder cosine."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.analysis.coverage import coverage
from xlnel.analysis.encoder_lookup import encoder_names
from xlnel.analysis.lookup import DictionaryLookup
from xlnel.cli.main import app
from xlnel.dictionary.dictionary import Dictionary, Entry

# "hypertension" is C1's name; "hypertensiona" (C2) is at a TF-IDF cosine c < 1 of it; C4's
# name shares no character with it. The stub encoder puts C2 (0.9) and C4 (0.8) near it.
ENTRIES = [Entry("hypertension", "C1", "composed", 0.5), Entry("hypertensiona", "C2"),
           Entry("kkkk", "C4")]
NEAR = {"hypertension": {"C2": 0.9, "C4": 0.8}, "qqqq": {"C4": 0.5}, "zzzz": {}}


class StubEncoder:
    """Encoder cosines from a table; counts the texts it is asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, keys: Sequence[str]) -> list[dict[str, float]]:
        self.asked.extend(keys)
        return [dict(NEAR[k]) for k in keys]


def _lookup(weight: float, dense: StubEncoder | None = None) -> DictionaryLookup:
    return DictionaryLookup(Dictionary(ENTRIES), "en", rank="hybrid",
                            dense=dense or StubEncoder(), encoder_weight=weight)


def test_hybrid_adds_the_weighted_encoder_cosine() -> None:
    lookup = _lookup(2.0)
    c = lookup.search(["hypertension"])[0][1].score
    assert 0.8 < c < 1.0
    # C1: 1 + 2 * 0.8 (the encoder's lowest score for the text) = 2.6; C2: c + 1.8 > 2.6;
    # C4: c (TF-IDF's lowest, as it found no name of C4) + 1.6 < 2.6
    assert lookup.ranked_concepts("hypertension", 10) == ["C2", "C1", "C4"]
    assert lookup.ranked_concepts("hypertension", 1) == ["C2"]
    # the cosine ranking of the same lookup ignores the encoder; C4 is not a TF-IDF find
    assert lookup.ranked_concepts("hypertension", 10, rank="cosine") == ["C1", "C2"]


def test_hybrid_with_weight_zero_keeps_the_tfidf_order_then_adds_encoder_finds() -> None:
    # C4 ties with C2 at c; ties keep the TF-IDF order, then the encoder's
    assert _lookup(0.0).ranked_concepts("hypertension", 10) == ["C1", "C2", "C4"]


def test_hybrid_on_texts_one_side_misses() -> None:
    lookup = _lookup(8.0)
    assert lookup.search(["qqqq"])[0] == []  # no TF-IDF name: the encoder alone decides
    assert lookup.ranked_concepts("qqqq", 10) == ["C4"]
    assert lookup.ranked_concepts("zzzz", 10) == []  # neither side finds anything


def test_encoder_is_asked_once_per_distinct_text() -> None:
    encoder = StubEncoder()
    lookup = _lookup(8.0, encoder)
    assert lookup.dense_search(["hypertension", "qqqq", "hypertension"])[2] == NEAR["hypertension"]
    lookup.ranked_concepts("hypertension", 10)
    lookup.ranked_concepts("qqqq", 10)
    assert encoder.asked == ["hypertension", "qqqq"]


def test_hybrid_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="needs an encoder"):
        DictionaryLookup(Dictionary(ENTRIES), "en", rank="hybrid")
    with pytest.raises(ValueError, match="encoder_weight must be at least 0"):
        _lookup(-1.0)
    plain = DictionaryLookup(Dictionary(ENTRIES), "en")
    with pytest.raises(ValueError, match="no encoder"):
        plain.dense_search(["hypertension"])
    with pytest.raises(ValueError, match="no encoder"):
        plain.ranked_concepts("hypertension", 1, rank="hybrid")


def test_encoder_searches_the_knowledge_base_names() -> None:
    mixed = Dictionary([Entry("hypertension", "C1", "composed", 0.5), Entry("Hypertension", "C1"),
                        Entry("kkkk", "C4", "kb")])
    assert sorted(e.name for e in encoder_names(mixed)) == ["Hypertension", "kkkk"]
    rendered = Dictionary([Entry("hypertension", "C1", "composed", 0.5)])
    assert [e.name for e in encoder_names(rendered)] == ["hypertension"]  # no kb entry: all


def _files(tmp_path: Path) -> tuple[Path, Path]:
    dictionary = tmp_path / "dict.tsv"
    Dictionary(ENTRIES).save(dictionary)
    gold = tmp_path / "gold.tsv"
    gold.write_text("hpo_id\tenglish\ttranslation\nC2\tHigh blood pressure\thypertension\n",
                    encoding="utf-8")
    return dictionary, gold


def test_coverage_needs_an_encoder_for_hybrid_and_hybrid_for_an_encoder(tmp_path: Path) -> None:
    dictionary, gold = _files(tmp_path)
    with pytest.raises(ValueError, match="hybrid ranking needs an encoder"):
        coverage(dictionary, [gold], "en", rank="hybrid")
    with pytest.raises(ValueError, match="hybrid ranking only"):
        coverage(dictionary, [gold], "en", encoder="multilingual-e5-small")


def test_cli_hybrid_without_encoder_is_an_error(tmp_path: Path) -> None:
    dictionary, gold = _files(tmp_path)
    r = CliRunner().invoke(app, ["dictionary", "coverage", str(dictionary), str(gold),
                                 "--rank", "hybrid"])
    assert r.exit_code == 1
    assert "--encoder MODEL" in r.output
