"""Encoder cosines of the hybrid lookup with a tiny random encoder, and unloadable encoders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.analysis.encoder_lookup import encoder_scores
from xlnel.cli.main import app
from xlnel.dictionary.dictionary import Dictionary, Entry
from xlnel.errors import ConfigError

from .conftest import NAMES


def test_encoder_scores_give_each_near_concept_its_best_cosine(tiny_encoder_dir: Path) -> None:
    dictionary = Dictionary(Entry(name, cid) for name, cid in NAMES.items())
    scores = encoder_scores(dictionary, "en", str(tiny_encoder_dir), top_m=4)
    found = scores(["diabetes mellitus", "asthma"])
    assert len(found) == 2
    # a text that is a name embeds as that name: its concept comes first at cosine 1
    assert next(iter(found[0])) == "D1" and found[0]["D1"] == pytest.approx(1.0, abs=1e-4)
    assert next(iter(found[1])) == "D2"
    assert all(len(f) <= 4 and all(-1.0 <= v <= 1.0 + 1e-4 for v in f.values()) for f in found)
    assert scores([]) == []


def test_encoder_scores_check_their_settings(tiny_encoder_dir: Path) -> None:
    with pytest.raises(ValueError, match="top_m"):
        encoder_scores(Dictionary([Entry("asthma", "D2")]), "en", str(tiny_encoder_dir), 0)
    with pytest.raises(ValueError, match="no name"):
        encoder_scores(Dictionary(), "en", str(tiny_encoder_dir))


def test_cli_hybrid_coverage(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    dictionary = tmp_path / "dict.tsv"
    Dictionary(Entry(name, cid) for name, cid in NAMES.items()).save(dictionary)
    gold = tmp_path / "gold.tsv"
    gold.write_text("id\tenglish\ttranslation\nD3\tHypertension\thigh blood pressure\n",
                    encoding="utf-8")
    r = CliRunner().invoke(app, ["dictionary", "coverage", str(dictionary), str(gold), "--json",
                                 "--lang", "en", "--rank", "hybrid", "--encoder",
                                 str(tiny_encoder_dir), "--encoder-weight", "2"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert (report["rank"], report["encoder_weight"]) == ("hybrid", 2.0)
    assert report["encoder"] == str(tiny_encoder_dir)
    assert report["total"]["linked_at_1"] == 1  # an exact name, found by both sides


def test_an_unloadable_encoder_is_a_config_error(tmp_path: Path) -> None:
    from xlnel.linkers.encoder import EntityEncoder

    empty = tmp_path / "empty"  # a folder without a model: transformers raises OSError
    empty.mkdir()
    with pytest.raises(ConfigError, match="cannot load encoder .*empty"):
        EntityEncoder(str(empty), device="cpu")


def test_cli_hybrid_lookup(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    dictionary = tmp_path / "dict.tsv"
    Dictionary(Entry(name, cid) for name, cid in NAMES.items()).save(dictionary)
    r = CliRunner().invoke(app, ["dictionary", "lookup", str(dictionary), "asthma", "--json",
                                 "--lang", "en", "--k", "2", "--rank", "hybrid", "--encoder",
                                 str(tiny_encoder_dir), "--encoder-weight", "2"])
    assert r.exit_code == 0, r.output
    (term,) = json.loads(r.output)
    first = term["concepts"][0]
    # an exact name: TF-IDF cosine 1 plus 2 times the encoder's cosine 1
    assert first["id"] == "D2" and first["score"] == pytest.approx(3.0, abs=1e-3)
    assert len(term["concepts"]) == 2
