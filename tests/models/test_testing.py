"""Tests of the tiny random BERT used as a fixture by the neural tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlnel.models.testing import wordpiece_vocab

WORDS = ["diabetes", "mellitus", "סוכרת", "Sclérose en plaques"]


def test_vocab_has_specials_characters_and_normalised_words() -> None:
    vocab = wordpiece_vocab(WORDS)
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert {"א", "##ת", "ץ", "a", "##z", "7"} <= set(vocab)
    assert {"diabetes", "סוכרת", "sclerose", "plaques"} <= set(vocab)
    assert len(vocab) == len(set(vocab))


@pytest.mark.parametrize("num_labels", [None, 3])
def test_tiny_bert_loads_and_runs_offline(tmp_path: Path, num_labels: int | None) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from xlnel.models.testing import tiny_bert

    folder = tiny_bert(tmp_path / "bert", WORDS, num_labels=num_labels)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    pieces = ["diabetes", "ח", "##ו", "##ל", "##ה", "סוכרת"]
    assert tokenizer.tokenize("Diabetes חולה סוכרת") == pieces
    pair = tokenizer("a", "b")
    assert pair["input_ids"][0] == tokenizer.cls_token_id and pair["token_type_ids"][-1] == 1
    assert tokenizer.unk_token_id not in tokenizer("Café, type-2!")["input_ids"]
    batch = tokenizer(["diabetes mellitus", "סוכרת"], ["a", "b"], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = transformers.AutoModel.from_pretrained(folder)(**batch).last_hidden_state
        logits = transformers.AutoModelForSequenceClassification.from_pretrained(
            folder, num_labels=num_labels or 2
        )(**batch).logits
    assert hidden.shape[0] == 2 and hidden.shape[-1] == 32
    assert logits.shape == (2, num_labels or 2)


def test_tiny_bert_is_seeded(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from safetensors.numpy import load_file

    from xlnel.models.testing import tiny_bert

    first = load_file(str(tiny_bert(tmp_path / "a", WORDS) / "model.safetensors"))
    second = load_file(str(tiny_bert(tmp_path / "b", WORDS) / "model.safetensors"))
    assert all((first[key] == second[key]).all() for key in first)


def test_tiny_bert_rejects_zero_labels(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from xlnel.models.testing import tiny_bert

    with pytest.raises(ValueError, match="num_labels"):
        tiny_bert(tmp_path, WORDS, num_labels=0)
