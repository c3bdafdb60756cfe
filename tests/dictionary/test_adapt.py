"""Tests of :func:`xlnel.dictionary.adapt.adapt`'s checks and of the entries its zero-shot pipeline
links with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dictionary.cipher import write_cipher_pairs, write_kb
from xlnel.dictionary.adapt import adapt
from xlnel.errors import ConfigError

pytestmark = pytest.mark.usefixtures("one_thread")


def test_adapt_fails_fast_on_missing_inputs(tmp_path: Path) -> None:
    pairs = write_cipher_pairs(tmp_path / "pairs.tsv", n=20)
    with pytest.raises(FileNotFoundError, match="absent.tsv"):
        adapt("xx", tmp_path / "absent.tsv", ["hpo"], tmp_path / "out")
    with pytest.raises(FileNotFoundError, match="no_kb.tsv"):
        adapt("xx", pairs, [f"tsv:{tmp_path / 'no_kb.tsv'}"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_linking_entries_leave_out_everyday_one_word_names() -> None:
    from xlnel.dictionary.adapt import linking_entries
    from xlnel.dictionary.dictionary import Entry

    # MUSE order: "book" and "time" are the two most frequent English words
    pairs = [("book", "sefer"), ("time", "zman"), ("time", "et"), ("barber", "sefer"),
             ("garlic", "shum")]
    entries = [Entry("sefer", "D1", "translated", 0.9),  # barber, but also the everyday "book"
               Entry("hasefer", "D1", "translated", 0.8),  # the same with a glued prefix letter
               Entry("sefer tora", "D2", "composed", 0.7),  # longer names are kept
               Entry("shum", "D3", "translated", 1.0),  # garlic only: kept
               Entry("zman", "D4", "kb"),  # given names are kept
               Entry("ET", "D5", "transliterated", 0.5)]  # compared normalised
    kept = linking_entries(entries, pairs, "en", ["h", "a"], top=2)
    assert [e.name for e in kept] == ["sefer tora", "shum", "zman"]
    assert linking_entries(entries, pairs, "en", ["h"], top=1) == [entries[i] for i in
                                                                    (1, 2, 3, 4, 5)]
    assert linking_entries(entries, pairs, "en", [], top=0) == entries


def test_adapt_rejects_a_negative_everyday_cut(tmp_path: Path) -> None:
    pairs, kb = write_cipher_pairs(tmp_path / "pairs.tsv"), write_kb(tmp_path / "kb.tsv")
    with pytest.raises(ConfigError, match="everyday_top"):
        adapt("xx", pairs, [f"tsv:{kb}"], tmp_path / "out", everyday_top=-1,
              transliteration_seconds=0)


@pytest.mark.parametrize("lang", ["fr_FR", "", "../evil", "x y"])
def test_adapt_refuses_what_a_pipeline_config_refuses_as_lang(tmp_path: Path, lang: str) -> None:
    from typer.testing import CliRunner

    from xlnel.cli.main import app

    pairs, kb = write_cipher_pairs(tmp_path / "pairs.tsv"), write_kb(tmp_path / "kb.tsv")
    with pytest.raises(ConfigError, match=f"language code such as 'he' or 'en', got {lang!r}"):
        adapt(lang, pairs, [f"tsv:{kb}"], tmp_path / "out", transliteration_seconds=0)
    result = CliRunner().invoke(app, ["adapt", "--lang", lang, "--pairs", str(pairs), "--kb",
                                      f"tsv:{kb}", "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and f"got {lang!r}" in result.output
    assert not (tmp_path / "out").exists()
