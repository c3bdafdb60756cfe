"""Tests of how :func:`xlnel.dictionary.adapt.adapt` writes its folder (staged, moved into place
once complete) and reads its inputs (corpora checked before any training)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import xlnel.dictionary.adapt as adapt_module
from tests.dictionary.cipher import encipher, synthetic_words, write_cipher_pairs, write_kb
from xlnel.dictionary.adapt import adapt
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import FormatError

pytestmark = pytest.mark.usefixtures("one_thread")


def _inputs(tmp_path: Path) -> tuple[Path, str]:
    return write_cipher_pairs(tmp_path / "pairs.tsv"), f"tsv:{write_kb(tmp_path / 'kb.tsv')}"


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_an_interrupted_run_leaves_the_folder_as_it_was(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pairs, kb = _inputs(tmp_path)
    adapt("xx", pairs, [kb], tmp_path / "out", transliteration_seconds=0, limit=1)
    before = _listing(tmp_path / "out")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # as Ctrl-C (or SIGTERM) after dictionary.tsv was written

    monkeypatch.setattr(adapt_module, "write_stopwords", interrupted)
    with pytest.raises(KeyboardInterrupt):
        adapt("xx", pairs, [kb], tmp_path / "out", transliteration_seconds=0)
    assert _listing(tmp_path / "out") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.tsv", "out", "pairs.tsv"]


def test_a_first_run_interrupted_leaves_no_folder(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pairs, kb = _inputs(tmp_path)
    monkeypatch.setattr(adapt_module, "write_pipeline_config",
                        lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        adapt("xx", pairs, [kb], tmp_path / "out", transliteration_seconds=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.tsv", "pairs.tsv"]


def test_a_killed_run_s_staging_folder_is_removed(tmp_path: Path) -> None:
    pairs, kb = _inputs(tmp_path)
    stale = tmp_path / ".out.k1ll3d_x"
    stale.mkdir()
    (stale / "dictionary.tsv").write_text("name\tconcept_id\tsource\nhalf", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stale / "dictionary.tsv", (old, old))
    os.utime(stale, (old, old))
    adapt("xx", pairs, [kb], tmp_path / "out", transliteration_seconds=0)
    assert not stale.exists()
    assert len(Dictionary.load(tmp_path / "out" / "dictionary.tsv")) > 0


def test_other_files_of_the_folder_are_kept_and_an_earlier_run_s_replaced(
        tmp_path: Path) -> None:
    pairs, kb = _inputs(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(f"{encipher('maleno')} {encipher('tirasu')}\n", encoding="utf-8")
    out = tmp_path / "out"
    adapt("xx", pairs, [kb], out, corpus=[corpus], transliteration_seconds=0)
    assert (out / "attested.tsv").is_file()
    (out / "notes.md").write_text("mine\n", encoding="utf-8")
    report = adapt("xx", pairs, [kb], out, transliteration_seconds=0, everyday_top=0)
    assert (out / "notes.md").read_text(encoding="utf-8") == "mine\n"
    # the earlier run's attested entries and linking dictionary describe another build
    assert not (out / "attested.tsv").exists() and not (out / "linking.tsv").exists()
    assert report["linking"]["out"] == str(out / "dictionary.tsv")
    assert str(out / "dictionary.tsv") in (out / "pipeline.yaml").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "kb.tsv", "out",
                                                          "pairs.tsv"]


def test_the_pipeline_config_names_the_final_paths(tmp_path: Path) -> None:
    pairs, kb = _inputs(tmp_path)
    out = tmp_path / "out"
    adapt("xx", pairs, [kb], out, transliteration_seconds=0)
    config = (out / "pipeline.yaml").read_text(encoding="utf-8")
    assert f"xlnel train {out / 'pipeline.yaml'} " in config
    assert str(out / "linking.tsv") in config and str(out / "stopwords.txt") in config
    assert ".out." not in config


def test_corpus_files_are_read_before_any_training(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pairs, kb = _inputs(tmp_path)
    corpus = tmp_path / "posts.jsonl"
    corpus.write_text('{"id": "d1", "text": "ok"}\n{"id": "d2", "text": \n', encoding="utf-8")

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("the transliterator trained before the corpus was read")

    monkeypatch.setattr(adapt_module, "train_transliterator", no_training)
    with pytest.raises(FormatError, match=r"posts\.jsonl:2"):
        adapt("xx", pairs, [kb], tmp_path / "out", corpus=[corpus],
              transliteration_seconds=60)
    with pytest.raises(FileNotFoundError, match="absent.jsonl"):
        adapt("xx", pairs, [kb], tmp_path / "out", corpus=[tmp_path / "absent.jsonl"],
              transliteration_seconds=60)
    assert not (tmp_path / "out").exists()


def test_a_brat_folder_is_a_corpus(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from xlnel.cli.main import app

    pairs, kb = _inputs(tmp_path)
    brat = tmp_path / "brat"
    brat.mkdir()
    (brat / "d1.txt").write_text(f"{encipher('maleno')} {encipher('tirasu')}\n",
                                 encoding="utf-8")
    (brat / "d1.ann").write_text("", encoding="utf-8")
    result = CliRunner().invoke(app, ["adapt", "--lang", "xx", "--pairs", str(pairs), "--kb", kb,
                                      "--corpus", str(brat), "--translit-seconds", "0",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    attested = Dictionary.load(tmp_path / "out" / "attested.tsv")
    assert encipher("maleno") in attested and attested.concepts_of(encipher("maleno")) == ["X:1"]


def test_the_working_folder_as_output_stays_the_working_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pairs, kb = _inputs(tmp_path)
    out = tmp_path / "out"
    adapt("xx", pairs, [kb], out, transliteration_seconds=0)
    inode = out.stat().st_ino
    monkeypatch.chdir(out)
    adapt("xx", pairs, [kb], ".", transliteration_seconds=0, limit=1)
    assert Path.cwd().exists() and out.stat().st_ino == inode  # not swapped away and removed
    assert Dictionary.load(out / "dictionary.tsv").concept_ids() == {"X:1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.tsv", "out", "pairs.tsv"]


def test_an_empty_kb_is_refused_before_any_output_and_one_concept_is_enough(
        tmp_path: Path) -> None:
    pairs, _ = _inputs(tmp_path)
    empty = tmp_path / "empty.tsv"
    empty.write_text("concept_id\tname\n", encoding="utf-8")
    with pytest.raises(ValueError, match="holds no concept"):
        adapt("xx", pairs, [f"tsv:{empty}"], tmp_path / "out", transliteration_seconds=0)
    assert not (tmp_path / "out").exists()
    one = tmp_path / "one.tsv"
    word = synthetic_words()[0]  # a word of the pairs
    one.write_text(f"concept_id\tname\nX:1\t{word}\n", encoding="utf-8")
    report = adapt("xx", pairs, [f"tsv:{one}"], tmp_path / "out", transliteration_seconds=0)
    assert report["dictionary"]["concepts_covered"] == 1
    assert encipher(word) in Dictionary.load(tmp_path / "out" / "dictionary.tsv")


def test_a_pair_folder_is_named_as_a_folder(tmp_path: Path) -> None:
    _, kb = _inputs(tmp_path)
    (tmp_path / "pairs").mkdir()
    with pytest.raises(IsADirectoryError, match="is a folder"):
        adapt("xx", tmp_path / "pairs", [kb], tmp_path / "out", transliteration_seconds=0)


def test_japanese_renderings_are_glued_and_copies_are_english_names(tmp_path: Path) -> None:
    pairs = tmp_path / "en-ja.txt"
    pairs.write_text("heart\t心臓\nfailure\t不全\nkidney\t腎臓\ndisease\t病気\nchronic\t慢性\n",
                     encoding="utf-8")
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nC1\tHeart failure\nC2\tChronic kidney disease\n"
                  "C3\tInsulin resistance\n", encoding="utf-8")
    adapt("ja", pairs, [f"tsv:{kb}"], tmp_path / "out", transliteration_seconds=0)
    dictionary = Dictionary.load(tmp_path / "out" / "dictionary.tsv")
    assert dictionary.source_of("心臓不全", "C1") == "composed"
    assert dictionary.source_of("慢性腎臓病気", "C2") == "composed"
    # no word of the pairs: the English name, not its words glued ('insulinresistance')
    assert [(e.name, e.source) for e in dictionary if e.concept_id == "C3"] == [
        ("Insulin resistance", "kb")]


def test_a_corpus_file_without_text_is_named_in_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pairs, kb = _inputs(tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="xlnel.dictionary.adapt"):
        adapt("xx", pairs, [kb], tmp_path / "out", corpus=[empty], transliteration_seconds=0)
    assert f"corpus {empty} holds no text" in caplog.text


def test_an_output_that_is_a_link_is_written_through(tmp_path: Path) -> None:
    pairs, kb = _inputs(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    adapt("xx", pairs, [kb], tmp_path / "link", transliteration_seconds=0)
    adapt("xx", pairs, [kb], tmp_path / "link", transliteration_seconds=0, limit=1)
    assert (tmp_path / "link").is_symlink()
    assert Dictionary.load(tmp_path / "real" / "dictionary.tsv").concept_ids() == {"X:1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.tsv", "link", "pairs.tsv", "real"]


def test_very_long_names_are_rendered_on_one_row(tmp_path: Path) -> None:
    pairs, _ = _inputs(tmp_path)
    word = synthetic_words()[0]
    kb = tmp_path / "long.tsv"
    kb.write_text(f"concept_id\tname\nX:1\t{' '.join([word] * 300)}\nX:2\t{'a' * 5000}\n",
                  encoding="utf-8")
    adapt("xx", pairs, [f"tsv:{kb}"], tmp_path / "out", transliteration_seconds=0)
    dictionary = Dictionary.load(tmp_path / "out" / "dictionary.tsv")
    assert " ".join([encipher(word)] * 300) in dictionary
    assert dictionary.concepts_of("a" * 5000) == ["X:2"]  # kept as the English name
