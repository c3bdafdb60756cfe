"""The pair encoder gives exactly the tokenizer's own pair encoding, however it gets there."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

from xlnel.filtering._pair_encoder import PairEncoder, pair_template  # noqa: E402
from xlnel.models.testing import _fast_tokenizer, wordpiece_vocab  # noqa: E402

WORDS = ["diabetes", "type", "mellitus", "insulin", "pain", "chest", "סוכרת", "כאב", "ראש"]


@pytest.fixture(scope="module")
def bert_tokenizer():
    return _fast_tokenizer(wordpiece_vocab(WORDS))


@pytest.fixture(scope="module")
def xlmr_style_tokenizer():
    """Same vocabulary, joined as XLM-R joins pairs (``[CLS] A [SEP] [SEP] B [SEP]``, no
    token types), as multilingual-e5 does."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    base = _fast_tokenizer(wordpiece_vocab(WORDS))
    backend = base.backend_tokenizer
    cls, sep = base.cls_token_id, base.sep_token_id
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]",
                                   sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]",
                                   model_input_names=["input_ids", "attention_mask"])


def _pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    pool = WORDS + ["x", "a1", "(", ")", "-", "Type-2", "ÉTÉ", "דיכאון"]
    windows = [" ".join(rng.choices(pool, k=rng.randint(0, 12))) for _ in range(n)]
    names = [" ".join(rng.choices(pool, k=rng.randint(0, 6))) for _ in range(n)]
    windows += ["", "chest pain", "chest pain"]  # empty sides and repeats
    names += ["insulin", "", "insulin"]
    return windows, names


def _reference(tokenizer, windows, names, max_length):
    return tokenizer(windows, names, truncation=True, max_length=max_length)


@pytest.mark.parametrize("max_length", [8, 16, 64])
@pytest.mark.parametrize("which", ["bert_tokenizer", "xlmr_style_tokenizer"])
def test_features_equal_the_tokenizers_pair_encoding(request, which, max_length):
    tokenizer = request.getfixturevalue(which)
    windows, names = _pairs(300)
    encoded = PairEncoder(tokenizer, max_length)(windows, names)
    ref = _reference(tokenizer, windows, names, max_length)
    assert len(encoded) == len(windows)
    for i in range(len(windows)):
        assert encoded.features(i) == {k: ref[k][i] for k in ref}, (windows[i], names[i])


@pytest.mark.parametrize("which", ["bert_tokenizer", "xlmr_style_tokenizer"])
def test_batch_is_the_right_padded_reference(request, which):
    tokenizer = request.getfixturevalue(which)
    windows, names = _pairs(120, seed=1)
    encoded = PairEncoder(tokenizer, 16)(windows, names)  # some pairs are truncated
    assert encoded.whole, "the case of pairs tokenised whole must be covered"
    ref = _reference(tokenizer, windows, names, 16)
    rows = [5, 0, 121, 7, 3, 122] + sorted(encoded.whole)[:3]
    batch = encoded.batch(rows, tokenizer.pad_token_id)
    assert set(batch) == set(ref.keys())
    width = max(len(ref["input_ids"][r]) for r in rows)
    for key, array in batch.items():
        assert array.shape == (len(rows), width) and array.dtype == np.int64
        fill = tokenizer.pad_token_id if key == "input_ids" else 0
        expected = [ref[key][r] + [fill] * (width - len(ref[key][r])) for r in rows]
        assert array.tolist() == expected, key


def test_template_is_read_off_the_tokenizer(bert_tokenizer, xlmr_style_tokenizer):
    cls, sep = bert_tokenizer.cls_token_id, bert_tokenizer.sep_token_id
    bert = pair_template(bert_tokenizer)
    assert bert is not None
    assert (bert.prefix, bert.middle, bert.suffix) == ((cls,), (sep,), (sep,))
    assert bert.types == (0, 0, 0, 1, 1)
    xlmr = pair_template(xlmr_style_tokenizer)
    assert xlmr is not None and xlmr.middle == (sep, sep) and "token_type_ids" not in xlmr.keys


class _ReversingTokenizer:
    """Joins pairs name first: not the window-then-name template the encoder can rebuild."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, texts, pairs=None, **kwargs):
        if pairs is None:
            return self.inner(texts, **kwargs)
        return self.inner(pairs, texts, **kwargs)


def test_tokenizer_without_a_fixed_template_encodes_pairs_whole(bert_tokenizer):
    tokenizer = _ReversingTokenizer(bert_tokenizer)
    assert pair_template(tokenizer) is None
    windows, names = _pairs(40)
    encoded = PairEncoder(tokenizer, 64)(windows, names)
    ref = tokenizer(windows, names, truncation=True, max_length=64)
    assert [encoded.features(i)["input_ids"] for i in range(len(windows))] == ref["input_ids"]


def test_name_cache_is_bounded_and_stays_correct(bert_tokenizer):
    encoder = PairEncoder(bert_tokenizer, 64, cache_size=3)
    for seed in range(3):
        windows, names = _pairs(30, seed=seed)
        encoded = encoder(windows, names)
        ref = _reference(bert_tokenizer, windows, names, 64)
        assert [encoded.features(i)["input_ids"] for i in range(len(windows))] == \
            ref["input_ids"]
        assert len(encoder._names) <= max(3, len(set(names)))


def test_empty_input_and_mismatched_lengths(bert_tokenizer):
    encoder = PairEncoder(bert_tokenizer, 64)
    assert len(encoder([], [])) == 0
    with pytest.raises(ValueError, match="2 windows but 1 names"):
        encoder(["a", "b"], ["c"])


def test_truncation_saved_on_the_backend_does_not_cut_sides(bert_tokenizer):
    tokenizer = _fast_tokenizer(wordpiece_vocab(WORDS))
    tokenizer.backend_tokenizer.enable_truncation(max_length=4)
    tokenizer.backend_tokenizer.enable_padding(length=40)
    windows, names = _pairs(50, seed=4)
    encoded = PairEncoder(tokenizer, 64)(windows, names)
    ref = _reference(tokenizer, windows, names, 64)
    assert [encoded.features(i)["input_ids"] for i in range(len(windows))] == ref["input_ids"]


def test_truncation_left_on_the_backend_by_a_whole_pair_call_is_respected(bert_tokenizer):
    """Encoding whole pairs (with truncation) leaves truncation set on the Rust backend;
    sides tokenised afterwards must still be the untruncated ones."""
    tokenizer = _fast_tokenizer(wordpiece_vocab(WORDS))
    encoder = PairEncoder(tokenizer, 8)
    windows, names = _pairs(60, seed=5)
    encoder(windows, names)  # some pairs go through the tokenizer whole
    assert tokenizer.backend_tokenizer.truncation is not None
    encoder.max_length = 64
    encoded = encoder(windows, names)
    ref = _reference(tokenizer, windows, names, 64)
    assert [encoded.features(i)["input_ids"] for i in range(len(windows))] == ref["input_ids"]
