"""Tests of the character translator on a tiny synthetic cipher language."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import xlnel
from xlnel.dictionary.pairs import WordPair
from xlnel.dictionary.translator import (
    CharTranslator,
    CharVocab,
    TranslatorConfig,
    train_translator,
)
from xlnel.errors import ArtifactError

LETTERS = "abcdefghijklmnopqrstuvwxyz"
CIPHER = dict(zip(LETTERS, "אבגדהוזחטיכלמנסעפצקרשתםןףץ", strict=True))
TINY = TranslatorConfig(embedding_dim=32, hidden_size=64, epochs=20, batch_size=32, lr=2e-2,
                        dropout=0.0, dev_fraction=0.0, seed=3)


def encipher(word: str) -> str:
    return "".join(CIPHER[c] for c in word)


@pytest.fixture(scope="module")
def words() -> list[str]:
    rng = random.Random(0)
    found = {"".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 7))) for _ in range(260)}
    return sorted(found)[:200]


@pytest.fixture(scope="module")
def single_thread() -> Iterator[None]:
    # tests share 2 cores with other jobs; one intra-op thread avoids oversubscription
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def translator(words: list[str], single_thread: None) -> CharTranslator:
    return train_translator([(w, encipher(w)) for w in words], TINY)


def test_vocab_round_trip_and_unknown() -> None:
    vocab = CharVocab.build(["abc", "cab"], extra=["<x>"])
    assert vocab.symbols[:5] == ("<pad>", "<s>", "</s>", "<unk>", "<x>")
    assert vocab.decode(vocab.encode("cab")) == "cab"
    assert vocab.encode("z") == [vocab.id_of("<unk>")]
    assert vocab.decode([*vocab.encode("ab"), 2, *vocab.encode("c")]) == "ab"
    with pytest.raises(ValueError, match="must start with"):
        CharVocab(["a", "b"])


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="hidden_size"):
        TranslatorConfig(hidden_size=0)
    with pytest.raises(ValueError, match="unknown_field"):
        TranslatorConfig.model_validate({"unknown_field": 1})


def test_learns_cipher(translator: CharTranslator, words: list[str]) -> None:
    outputs = translator.translate(words, beam=3, n_best=1)
    exact = sum(o[0][0] == encipher(w) for o, w in zip(outputs, words, strict=True) if o)
    assert exact / len(words) >= 0.7


def test_n_best_sorted_and_distinct(translator: CharTranslator, words: list[str]) -> None:
    for hyps in translator.translate(words[:10], beam=5, n_best=4):
        assert 1 <= len(hyps) <= 4
        scores = [s for _, s in hyps]
        assert scores == sorted(scores, reverse=True)
        assert all(s <= 0.0 for s in scores)
        assert len({t for t, _ in hyps}) == len(hyps)


def test_translate_edge_cases(translator: CharTranslator) -> None:
    assert translator.translate([]) == []
    assert translator.translate(["", "  "]) == [[], []]
    with pytest.raises(ValueError, match="n_best"):
        translator.translate(["abc"], beam=2, n_best=3)
    with pytest.raises(ValueError, match="without kinds"):
        translator.translate(["abc"], kind="translation")


def test_input_is_normalised(translator: CharTranslator) -> None:
    assert translator.translate(["  ABC "]) == translator.translate(["abc"])


def test_batched_equals_one_by_one(translator: CharTranslator, words: list[str]) -> None:
    names = [words[0], words[5] + words[6], words[1][:2], words[7]]
    batched = translator.translate(names, beam=4, n_best=4, batch_size=3)
    for name, hyps in zip(names, batched, strict=True):
        alone = translator.translate([name], beam=4, n_best=4, batch_size=1)[0]
        assert [t for t, _ in alone] == [t for t, _ in hyps]
        assert [s for _, s in alone] == pytest.approx([s for _, s in hyps], abs=1e-5)


def test_save_load_round_trip(translator: CharTranslator, words: list[str],
                              tmp_path: Path) -> None:
    translator.save(tmp_path / "model")
    files = {p.name for p in (tmp_path / "model").iterdir()}
    assert files == {"config.json", "model.safetensors", "vocab.json"}
    # every file gets the mode open() gives under the umask, the weights included
    plain = tmp_path / "plain.txt"
    plain.write_text("", encoding="utf-8")
    modes = {p.stat().st_mode & 0o777 for p in (tmp_path / "model").iterdir()}
    assert modes == {plain.stat().st_mode & 0o777}
    meta = json.loads((tmp_path / "model" / "config.json").read_text(encoding="utf-8"))
    assert meta["xlnel_version"] == xlnel.__version__
    loaded = CharTranslator.load(tmp_path / "model")
    assert loaded.config == translator.config
    assert loaded.translate(words[:20]) == translator.translate(words[:20])


def test_load_errors(translator: CharTranslator, tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="missing"):
        CharTranslator.load(tmp_path / "nothing")
    translator.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "config.json").read_text(encoding="utf-8"))
    (tmp_path / "m" / "config.json").write_text(json.dumps({**meta, "format_version": 99}),
                                                encoding="utf-8")
    with pytest.raises(ArtifactError, match="format version"):
        CharTranslator.load(tmp_path / "m")


def test_tagged_pairs_give_kinds(words: list[str], single_thread: None) -> None:
    pairs = [WordPair(w, encipher(w), "transliteration") for w in words[:40]]
    pairs += [WordPair(w, encipher(w)[::-1], "translation") for w in words[40:80]]
    config = TINY.model_copy(update={"epochs": 1})
    model = train_translator(pairs, config)
    assert model.kinds == ("translation", "transliteration")
    assert len(model.translate(["abc"], kind="transliteration")[0]) >= 1
    with pytest.raises(ValueError, match="unknown kind"):
        model.translate(["abc"], kind="gloss")


def test_training_input_errors() -> None:
    with pytest.raises(ValueError, match="no usable"):
        train_translator([("", "")], TINY)
    with pytest.raises(ValueError, match="mix"):
        train_translator([("ab", "אב"), ("cd", "גד", "translation")], TINY)


def test_early_stopping_keeps_history(words: list[str], single_thread: None) -> None:
    config = TINY.model_copy(update={"epochs": 3, "dev_fraction": 0.2})
    model = train_translator([(w, encipher(w)) for w in words[:60]], config)
    assert 1 <= len(model.history) <= 3
    assert all(h["dev_loss"] == h["dev_loss"] for h in model.history)  # not NaN
