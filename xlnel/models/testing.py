"""Tiny randomly initialised transformer models for tests: built in code, nothing downloaded.

Needs ``torch``, ``transformers`` and ``tokenizers`` (the ``neural`` extra).
"""

from __future__ import annotations

import logging
import string
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

logger = logging.getLogger(__name__)

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
HEBREW_LETTERS = "".join(chr(code) for code in range(0x05D0, 0x05EB))  # alef..tav, final forms
_CHARACTERS = string.ascii_lowercase + string.digits + string.punctuation + HEBREW_LETTERS


def wordpiece_vocab(words: Iterable[str]) -> list[str]:
    """Return a WordPiece vocabulary: special tokens, characters, continuations, then ``words``.

    Every lower-case ASCII letter, digit, punctuation mark and Hebrew letter is present both as
    a word start and as a ``##`` continuation, so any text of those characters tokenises
    without ``[UNK]``. Each entry of ``words`` is normalised and split as the tokenizer does
    (lower-cased, accents stripped, split at spaces and punctuation), and every part is added.
    """
    from tokenizers import normalizers, pre_tokenizers

    normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=None)
    splitter = pre_tokenizers.BertPreTokenizer()
    vocab = list(SPECIAL_TOKENS)
    vocab += list(_CHARACTERS) + [f"##{char}" for char in _CHARACTERS]
    seen = set(vocab)
    for word in words:
        for token, _ in splitter.pre_tokenize_str(normalizer.normalize_str(word)):
            if token not in seen:
                seen.add(token)
                vocab.append(token)
    return vocab


def _fast_tokenizer(vocab: list[str]) -> PreTrainedTokenizerFast:
    """Build an uncased BERT WordPiece tokenizer over ``vocab``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    ids = {token: index for index, token in enumerate(vocab)}
    backend = Tokenizer(models.WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100))
    # As BERT uncased: lower-case and strip accents (Hebrew points too).
    backend.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=None)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    backend.decoder = decoders.WordPiece(prefix="##")
    # The generic class saves and reloads tokenizer.json as is; transformers 5's BertTokenizer
    # would rebuild the normaliser from its own options on load.
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        model_max_length=128,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )


def tiny_bert(
    tmp_dir: Path,
    vocab_words: Iterable[str],
    num_labels: int | None = None,
    seed: int = 0,
) -> Path:
    """Save a tiny random BERT (2 layers, hidden 32, 2 heads) with a fast WordPiece tokenizer.

    The folder loads offline with ``AutoTokenizer``, ``AutoModel`` and
    ``AutoModelForSequenceClassification``.

    Args:
        tmp_dir: Folder to write (created if missing).
        vocab_words: Whole words to add to the character vocabulary.
        num_labels: If given, save a ``BertForSequenceClassification`` head with this many
            labels; else a bare ``BertModel``.
        seed: Seed of the random initialisation, so a fixture is the same on every run.

    Returns:
        ``tmp_dir``.

    Raises:
        ValueError: ``num_labels`` is given and below 1.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    if num_labels is not None and num_labels < 1:
        raise ValueError(f"num_labels must be at least 1 or None, got {num_labels}")
    folder = Path(tmp_dir)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _fast_tokenizer(wordpiece_vocab(vocab_words))
    sizes: dict[str, Any] = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}
    if num_labels is not None:
        sizes["num_labels"] = num_labels
    config = BertConfig(
        vocab_size=len(tokenizer),
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        **sizes,
    )
    with torch.random.fork_rng():  # seed locally; leave the caller's random state alone
        torch.manual_seed(seed)
        model = (
            BertForSequenceClassification(config) if num_labels is not None else BertModel(config)
        )
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    logger.debug("Saved a tiny BERT (%d tokens) to %s", len(tokenizer), folder)
    return folder
