"""Tests of :mod:`xlnel.dictionary.translate_kb`: train a translator from a pair file, translate a
KB with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.dictionary.cipher import encipher, write_cipher_pairs, write_kb
from xlnel.dictionary.dictionary import Dictionary
from xlnel.dictionary.translate_kb import (
    build_dictionary_from_kb,
    dictionary_path,
    read_training_pairs,
    train_translator_from_pairs,
    translator_config,
)
from xlnel.errors import ArtifactError, ConfigError, FormatError

#: A tiny model that trains on ~150 pairs in a second or two.
TINY: dict[str, Any] = {"embedding_dim": 8, "hidden_size": 16, "epochs": 2, "batch_size": 32,
                        "max_train_seconds": 5.0, "dev_fraction": 0.1}
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A translator into the cipher language trained once for the module, and its report."""
    root = tmp_path_factory.mktemp("adapt")
    pairs = write_cipher_pairs(root / "pairs.tsv")
    out = root / "translator"
    report = train_translator_from_pairs(pairs, out, {**TINY, "target_lang": "xx"},
                                         test_fraction=0.1)
    return out, report


def test_read_training_pairs_drops_copies_and_keeps_kinds(tmp_path: Path) -> None:
    pairs = read_training_pairs(write_cipher_pairs(tmp_path / "p.tsv", n=20))
    assert all(p.target != p.source for p in pairs)
    assert {p.kind for p in pairs} <= {"translation", "transliteration"}
    assert ("maleno", encipher("maleno"), "transliteration") in pairs


def test_read_training_pairs_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.tsv"):
        read_training_pairs(tmp_path / "nope.tsv")
    (tmp_path / "bad.tsv").write_text("a\tb\tc\td\n", encoding="utf-8")
    with pytest.raises(FormatError, match="bad.tsv:1"):
        read_training_pairs(tmp_path / "bad.tsv")
    (tmp_path / "copies.tsv").write_text("rbd\trbd\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no usable pair"):
        read_training_pairs(tmp_path / "copies.tsv")


def test_translator_config_overrides() -> None:
    cfg = translator_config({"epochs": 3, "hidden_size": None})
    assert cfg.epochs == 3 and cfg.hidden_size == translator_config().hidden_size
    with pytest.raises(ConfigError, match="epochs"):
        translator_config({"epochs": 0})
    with pytest.raises(ConfigError, match="no_such_field"):
        translator_config({"no_such_field": 1})


def test_train_translator_from_pairs_report(trained: tuple[Path, dict[str, Any]]) -> None:
    out, report = trained
    assert (out / "model.safetensors").is_file()
    saved = json.loads((out / "train_report.json").read_text(encoding="utf-8"))
    assert saved["data"] == report["data"]
    assert report["data"]["test_pairs"] > 0 and report["data"]["train_pairs"] > 100
    held = report["held_out"]
    assert held["n"] > 0 and 0.0 <= held["exact@1"] <= held["exact@5"] <= 1.0
    assert report["config"]["target_lang"] == "xx" and 1 <= report["epochs_run"] <= 2


def test_build_dictionary_from_kb(trained: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    kb = write_kb(tmp_path / "kb.tsv")
    report = build_dictionary_from_kb([f"tsv:{kb}"], trained[0], "xx", tmp_path / "out",
                                      n_best=2, max_names_per_concept=3)
    path = tmp_path / "out" / "dictionary.tsv"
    assert report["out"] == str(path) and report["concepts"] == 3
    dictionary = Dictionary.load(path)
    assert len(dictionary) == report["entries"] > 0
    assert {e.source for e in dictionary} == {"translated"}
    assert dictionary.concept_ids() <= {"X:1", "X:2", "X:3"}
    limited = build_dictionary_from_kb([f"tsv:{kb}"], trained[0], "xx", tmp_path / "l.tsv",
                                       limit=1)
    assert limited["concepts"] == 1 and Dictionary.load(tmp_path / "l.tsv").concept_ids() == {"X:1"}


def test_build_dictionary_from_kb_errors(trained: tuple[Path, dict[str, Any]],
                                         tmp_path: Path) -> None:
    kb = f"tsv:{write_kb(tmp_path / 'kb.tsv')}"
    with pytest.raises(ConfigError, match="'he'"):
        build_dictionary_from_kb([kb], trained[0], "he", tmp_path / "d.tsv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArtifactError, match="missing"):
        build_dictionary_from_kb([kb], tmp_path / "empty", "xx", tmp_path / "d.tsv")
    with pytest.raises(FileNotFoundError, match="missing_kb.tsv"):
        build_dictionary_from_kb(["tsv:missing_kb.tsv"], trained[0], "xx", tmp_path / "d.tsv")
    with pytest.raises(ValueError, match="at least one"):
        build_dictionary_from_kb([], trained[0], "xx", tmp_path / "d.tsv")
    assert not (tmp_path / "d.tsv").exists()


def test_dictionary_path(tmp_path: Path) -> None:
    assert dictionary_path(tmp_path / "a.tsv") == tmp_path / "a.tsv"
    assert dictionary_path(tmp_path) == tmp_path / "dictionary.tsv"


def test_build_refuses_to_overwrite_its_inputs(trained: tuple[Path, dict[str, Any]],
                                               tmp_path: Path) -> None:
    from xlnel.errors import OutputError

    kb = write_kb(tmp_path / "kb.tsv")
    before = kb.read_bytes()
    with pytest.raises(OutputError, match=r"is the input .*kb\.tsv"):
        build_dictionary_from_kb([f"tsv:{kb}"], trained[0], "xx", kb)
    assert kb.read_bytes() == before
    with pytest.raises(OutputError, match="lies inside the input folder"):
        build_dictionary_from_kb([f"tsv:{kb}"], trained[0], "xx", trained[0])
    assert not (trained[0] / "dictionary.tsv").exists()


def test_build_replaces_a_dictionary_but_another_file_only_with_force(
        trained: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    from xlnel.errors import OutputError

    kb = f"tsv:{write_kb(tmp_path / 'kb.tsv')}"
    notes = tmp_path / "notes.tsv"
    notes.write_text("my\tnotes\n", encoding="utf-8")
    with pytest.raises(OutputError, match=r"notes\.tsv exists and is not a dictionary TSV "
                                          r"\(its first line is 'my\\tnotes'.*--force"):
        build_dictionary_from_kb([kb], trained[0], "xx", notes)
    assert notes.read_text(encoding="utf-8") == "my\tnotes\n"
    build_dictionary_from_kb([kb], trained[0], "xx", notes, force=True)
    assert len(Dictionary.load(notes)) > 0
    build_dictionary_from_kb([kb], trained[0], "xx", notes, limit=1)  # now a dictionary
    assert Dictionary.load(notes).concept_ids() == {"X:1"}
    (tmp_path / "folder.tsv").mkdir()
    with pytest.raises(OutputError, match="is a folder"):
        build_dictionary_from_kb([kb], trained[0], "xx", tmp_path / "folder.tsv")


def test_train_translator_checks_its_output_before_training(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import xlnel.dictionary.translate_kb as translate_kb
    from xlnel.errors import OutputError

    pairs = write_cipher_pairs(tmp_path / "pairs.tsv", n=20)

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("trained before the output was checked")

    monkeypatch.setattr(translate_kb, "train_translator", no_training)
    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "thesis.tex").write_text("x", encoding="utf-8")
    for out, why in ((tmp_path / "file", "is a file"), (pairs, "is a file"),
                     (tmp_path, "holds the input"), (tmp_path / "full", "other files")):
        with pytest.raises(OutputError, match=why):
            train_translator_from_pairs(pairs, out, TINY)
    (tmp_path / "full" / "config.json").write_text("{}", encoding="utf-8")  # a translator's
    with pytest.raises(OutputError, match=r"other files than a saved translator \(thesis\.tex\)"):
        train_translator_from_pairs(pairs, tmp_path / "full", TINY)
    monkeypatch.chdir(tmp_path / "full")
    with pytest.raises(OutputError, match="working folder"):
        train_translator_from_pairs(pairs, ".", TINY)
    assert (tmp_path / "full" / "thesis.tex").is_file()


def test_an_interrupted_translator_save_leaves_the_earlier_one(
        trained: tuple[Path, dict[str, Any]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import xlnel.dictionary.translator as translator_module
    from xlnel.dictionary.translator import CharTranslator

    out = tmp_path / "translator"
    shutil.copytree(trained[0], out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    model = CharTranslator.load(out)
    model.history = [{"epoch": 99}]

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # after config.json and vocab.json were written

    monkeypatch.setattr(translator_module, "save_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.save(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["translator"]


def test_a_pair_folder_is_named_as_a_folder(tmp_path: Path) -> None:
    (tmp_path / "pairs").mkdir()
    with pytest.raises(IsADirectoryError, match="is a folder"):
        read_training_pairs(tmp_path / "pairs")


def test_a_test_fraction_holding_out_every_word_is_named(tmp_path: Path) -> None:
    pairs = tmp_path / "one.tsv"
    pairs.write_text("heart\tlev\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"test_fraction 0\.9 holds out every one of the 1 "
                                         r"source words"):
        train_translator_from_pairs(pairs, tmp_path / "out", TINY, test_fraction=0.9)
    assert not (tmp_path / "out").exists()


def test_a_saved_translator_folder_has_the_mode_mkdir_gives(
        trained: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    import os

    from xlnel.dictionary.translator import CharTranslator

    (tmp_path / "plain").mkdir()
    CharTranslator.load(trained[0]).save(tmp_path / "saved")
    assert (os.stat(tmp_path / "saved").st_mode & 0o777
            == os.stat(tmp_path / "plain").st_mode & 0o777)
