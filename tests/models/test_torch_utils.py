"""Torch helpers: the most tokens a model reads."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("torch")

from xlnel.errors import ConfigError  # noqa: E402
from xlnel.models.torch_utils import check_max_length, token_limit  # noqa: E402

UNKNOWN = int(1e30)  # transformers' model_max_length of a tokenizer saved without one


@pytest.mark.parametrize("saved, config, limit", [
    (512, SimpleNamespace(model_type="bert", max_position_embeddings=512), 512),
    (128, SimpleNamespace(model_type="bert", max_position_embeddings=512), 128),
    (UNKNOWN, SimpleNamespace(model_type="bert", max_position_embeddings=256), 256),
    # RoBERTa's position ids start after the padding id 1: 514 positions, 512 tokens
    (UNKNOWN, SimpleNamespace(model_type="xlm-roberta", max_position_embeddings=514,
                              pad_token_id=1), 512),
    (UNKNOWN, SimpleNamespace(model_type="t5"), None),
])
def test_token_limit_hand_worked(saved: int, config: SimpleNamespace,
                                 limit: int | None) -> None:
    assert token_limit(SimpleNamespace(model_max_length=saved), config) == limit


def test_check_max_length_names_the_option_and_the_limit() -> None:
    tokenizer = SimpleNamespace(model_max_length=UNKNOWN)
    config = SimpleNamespace(model_type="bert", max_position_embeddings=128)
    check_max_length(128, tokenizer, config, "filter.options.max_length", "m")
    with pytest.raises(ConfigError, match=r"filter\.options\.max_length=129 .*'m'.* at most 128"):
        check_max_length(129, tokenizer, config, "filter.options.max_length", "m")
    check_max_length(10_000, tokenizer, SimpleNamespace(), "max_length", "m")  # unknown: allowed
