"""Torch side of the CRF tagger: the network, sentence chunks and their batches.

Imported only when a tagger is trained or loaded, so the core package works without torch.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torchcrf import CRF

from xlnel.ner.sentences import split_sentences

IGNORE = -100
"""Target of positions that no loss reads (cross-entropy's ``ignore_index``)."""


@dataclass
class Chunk:
    """A sentence, or a piece of a long one, ready for the encoder.

    Attributes:
        doc: Index of the document in its batch of documents.
        words: Indices of the chunk's words among the document's words.
        input_ids: Sub-token ids with the special tokens around them.
        first_pieces: Position in ``input_ids`` of each word's first sub-token.
        tags: Label id of each word (training only).
        prefixes: Prefix length of each word, ``IGNORE`` except on ``B`` words (training only).
    """

    doc: int
    words: list[int]
    input_ids: list[int]
    first_pieces: list[int]
    tags: list[int] = field(default_factory=list)
    prefixes: list[int] = field(default_factory=list)


def word_pieces(tokenizer: Any, text: str, words: Sequence[tuple[int, int]],
                limit: int) -> list[list[int]]:
    """Sub-token ids of each word (tokenised alone, as a word after a space), at most ``limit``.

    A word the tokenizer reduces to nothing (a lone combining mark) becomes the unknown token,
    or the padding token for a tokenizer without one, so every word has a first sub-token to
    carry its tag (the attention mask does not depend on the ids, so a padding id inside a
    chunk is still attended to).

    Raises:
        ValueError: If a word reduces to nothing and the tokenizer has neither token, naming
            the word, its offsets and the tokenizer.
    """
    if not words:
        return []
    enc = tokenizer([text[s:e] for s, e in words], add_special_tokens=False)
    stand_in = tokenizer.unk_token_id
    if stand_in is None:
        stand_in = tokenizer.pad_token_id
    out: list[list[int]] = []
    for (start, end), ids in zip(words, enc["input_ids"], strict=True):
        if not ids:
            if stand_in is None:
                name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
                raise ValueError(f"tokenizer {name} turns the word {text[start:end]!r} "
                                 f"(characters {start}-{end}) into no token and has no unknown "
                                 "or padding token to stand for it; use a tokenizer with an "
                                 "unknown token")
            ids = [stand_in]
        out.append(list(ids[:limit]))
    return out


def make_chunks(tokenizer: Any, doc_index: int, text: str, words: Sequence[tuple[int, int]],
                max_length: int) -> list[Chunk]:
    """Cut a document into sentence chunks of at most ``max_length`` sub-tokens (specials too).

    Each sentence is one chunk unless its sub-tokens do not fit; then it is cut between words.
    """
    budget = max_length - 2
    pieces = word_pieces(tokenizer, text, words, budget)
    sentence_starts = [s for s, _ in split_sentences(text)]
    chunks: list[Chunk] = []
    current: list[int] = []
    used = 0
    sentence = -1
    for i, (start, _) in enumerate(words):
        in_sentence = bisect.bisect_right(sentence_starts, start) - 1
        if current and (in_sentence != sentence or used + len(pieces[i]) > budget):
            chunks.append(_chunk(tokenizer, doc_index, current, pieces))
            current, used = [], 0
        sentence = in_sentence
        current.append(i)
        used += len(pieces[i])
    if current:
        chunks.append(_chunk(tokenizer, doc_index, current, pieces))
    return chunks


def _chunk(tokenizer: Any, doc_index: int, word_ids: list[int],
           pieces: list[list[int]]) -> Chunk:
    input_ids = [tokenizer.cls_token_id]
    first_pieces = []
    for i in word_ids:
        first_pieces.append(len(input_ids))
        input_ids.extend(pieces[i])
    input_ids.append(tokenizer.sep_token_id)
    return Chunk(doc_index, list(word_ids), input_ids, first_pieces)


def collate(chunks: Sequence[Chunk], pad_id: int, device: torch.device,
            with_targets: bool) -> dict[str, torch.Tensor]:
    """Right-padded tensors of a batch of chunks (word-level tensors padded to the most words)."""
    width = max(len(c.input_ids) for c in chunks)
    n_words = max(len(c.words) for c in chunks)

    def pad(rows: list[list[int]], size: int, fill: int) -> torch.Tensor:
        return torch.tensor([r + [fill] * (size - len(r)) for r in rows], dtype=torch.long,
                            device=device)

    batch = {
        "input_ids": pad([c.input_ids for c in chunks], width, pad_id),
        "attention_mask": pad([[1] * len(c.input_ids) for c in chunks], width, 0),
        "first_pieces": pad([c.first_pieces for c in chunks], n_words, 0),
        "word_mask": pad([[1] * len(c.words) for c in chunks], n_words, 0).bool(),
    }
    if with_targets:
        batch["tags"] = pad([c.tags for c in chunks], n_words, 0)
        batch["prefixes"] = pad([c.prefixes for c in chunks], n_words, IGNORE)
    return batch


class TaggerNetwork(torch.nn.Module):
    """Encoder, linear emission and prefix layers on each word's first sub-token, and a CRF.

    Args:
        encoder: A Hugging Face encoder (``AutoModel``).
        n_labels: Number of BIO labels.
        n_prefixes: Number of prefix lengths (0 to ``max_prefix``).
        dropout: Dropout on the word states before the layers.
    """

    def __init__(self, encoder: Any, n_labels: int, n_prefixes: int,
                 dropout: float = 0.1) -> None:
        super().__init__()
        hidden = int(encoder.config.hidden_size)
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(dropout)
        self.emission = torch.nn.Linear(hidden, n_labels)
        self.prefix = torch.nn.Linear(hidden, n_prefixes)
        self.crf = CRF(n_labels, batch_first=True)

    def head_state(self) -> dict[str, torch.Tensor]:
        """Parameters outside the encoder (emission, prefix, CRF), for saving."""
        return {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()
                if not k.startswith("encoder.")}

    def _word_states(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        hidden = self.encoder(input_ids=batch["input_ids"],
                              attention_mask=batch["attention_mask"]).last_hidden_state
        index = batch["first_pieces"].unsqueeze(-1).expand(-1, -1, hidden.size(-1))
        return self.dropout(hidden.gather(1, index))

    def loss(self, batch: dict[str, torch.Tensor], crf_weight: float) -> torch.Tensor:
        """Cross-entropy of the emissions + ``crf_weight`` x CRF NLL (batch mean) + prefix CE."""
        states = self._word_states(batch)
        emissions = self.emission(states).float()
        mask, tags = batch["word_mask"], batch["tags"]
        loss = F.cross_entropy(emissions[mask], tags[mask])
        if crf_weight > 0:
            loss = loss - crf_weight * self.crf(emissions, tags, mask=mask, reduction="mean")
        prefix_targets = batch["prefixes"]
        if bool((prefix_targets != IGNORE).any()):
            logits = self.prefix(states).float()
            loss = loss + F.cross_entropy(logits.flatten(0, 1), prefix_targets.flatten(),
                                          ignore_index=IGNORE)
        return loss

    def decode(self, batch: dict[str, torch.Tensor]) -> tuple[list[list[int]], list[list[int]]]:
        """Viterbi label ids and the most likely prefix length of each word of each chunk."""
        states = self._word_states(batch)
        emissions = self.emission(states).float()
        mask = batch["word_mask"]
        paths = self.crf.decode(emissions, mask=mask)
        prefixes = self.prefix(states).argmax(-1).tolist()
        return paths, [p[:len(path)] for p, path in zip(prefixes, paths, strict=True)]
