"""Tokenising (window, name) pairs fast: each distinct text once, names cached across calls.

A cross-encoder reads about a thousand pairs per BC5CDR document, but they are made of far
fewer distinct windows and names (a span is paired with up to ``top_k_per_span`` names, and the
same dictionary names come back document after document). The tokenizer's pair template (for
BERT ``[CLS] A [SEP] B [SEP]``, for XLM-R ``<s> A </s></s> B </s>``) only wraps the two
sides' own tokens, so :class:`PairEncoder` tokenises each side alone and joins them as the
template does. The template is read off the tokenizer itself and checked on two probe pairs;
if the tokenizer does not behave as a fixed template (or a pair would need truncation), the
pair is tokenised by the tokenizer as a whole, so the ids are always the tokenizer's own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

_PROBES = (("alpha beta", "gamma"), ("delta", "epsilon zeta eta"))
"""Two pairs of different lengths the template is derived from, then checked on."""


@dataclass(frozen=True)
class PairTemplate:
    """Special tokens around and between the two sides, and the type id of each part."""

    keys: tuple[str, ...]
    prefix: tuple[int, ...]
    middle: tuple[int, ...]
    suffix: tuple[int, ...]
    #: Token type ids of the prefix, side A, middle, side B and suffix (0s when not returned).
    types: tuple[int, int, int, int, int]
    prefix_ids: np.ndarray = field(init=False, repr=False, compare=False)
    middle_ids: np.ndarray = field(init=False, repr=False, compare=False)
    suffix_ids: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("prefix", "middle", "suffix"):
            object.__setattr__(self, f"{name}_ids",
                               np.asarray(getattr(self, name), dtype=np.int64))

    @property
    def specials(self) -> int:
        """Special tokens added to a pair."""
        return len(self.prefix) + len(self.middle) + len(self.suffix)

    def join(self, a: Sequence[int], b: Sequence[int]) -> dict[str, list[int]]:
        """The features of the pair whose sides tokenise to ``a`` and ``b``."""
        p, m, s = self.prefix, self.middle, self.suffix
        out = {"input_ids": [*p, *a, *m, *b, *s]}
        if "token_type_ids" in self.keys:
            tp, ta, tm, tb, ts = self.types
            out["token_type_ids"] = ([tp] * len(p) + [ta] * len(a) + [tm] * len(m)
                                     + [tb] * len(b) + [ts] * len(s))
        if "attention_mask" in self.keys:
            out["attention_mask"] = [1] * len(out["input_ids"])
        return out


def pair_template(tokenizer: PreTrainedTokenizerBase) -> PairTemplate | None:
    """The tokenizer's pair template, or ``None`` if it does not act as a fixed template."""
    (a, b), (c, d) = _PROBES
    sides = tokenizer([a, b, c, d], add_special_tokens=False)["input_ids"]
    whole = tokenizer([a, c], [b, d])
    keys = tuple(k for k in ("input_ids", "token_type_ids", "attention_mask") if k in whole)
    ids, ia, ib = whole["input_ids"][0], sides[0], sides[1]
    start = _find(ids, ia, 0)
    middle_at = start + len(ia) if start is not None else None
    end = _find(ids, ib, middle_at) if middle_at is not None else None
    if start is None or middle_at is None or end is None:
        return None
    tt = whole["token_type_ids"][0] if "token_type_ids" in whole else [0] * len(ids)
    parts = [(0, start), (start, middle_at), (middle_at, end), (end, end + len(ib)),
             (end + len(ib), len(ids))]
    types = []
    for lo, hi in parts:
        values = set(tt[lo:hi])
        if len(values) > 1:
            return None
        types.append(values.pop() if values else 0)
    template = PairTemplate(keys, tuple(ids[:start]), tuple(ids[middle_at:end]),
                            tuple(ids[end + len(ib):]), (types[0], types[1], types[2],
                                                         types[3], types[4]))
    probe = template.join(sides[2], sides[3])
    if any(probe[k] != whole[k][1] for k in keys):
        return None
    return template


def _verified_backend(tokenizer: PreTrainedTokenizerBase) -> Any:
    """The fast tokenizer's Rust backend, called directly (skipping the Python wrapper's
    per-call work), if it gives the wrapper's ids on the probes; else ``None``."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    texts = [t for pair in _PROBES for t in pair] + ["Ünïcode – ß ﬁ  spaces  "]
    try:
        direct = [e.ids for e in _plain(backend).encode_batch(texts, add_special_tokens=False)]
    except Exception:  # a backend we do not know how to call
        return None
    return backend if direct == tokenizer(texts, add_special_tokens=False)["input_ids"] else None


def _plain(backend: Any) -> Any:
    """``backend`` with truncation and padding off, as the tokenizer's wrapper sets them for
    a call that asks for neither (a whole-pair call with truncation leaves it set on the
    backend until the next wrapper call)."""
    if backend.truncation is not None:
        backend.no_truncation()
    if backend.padding is not None:
        backend.no_padding()
    return backend


def _find(seq: list[int], sub: list[int], start: int) -> int | None:
    """First index at or after ``start`` where ``sub`` occurs in ``seq``."""
    for i in range(start, len(seq) - len(sub) + 1):
        if seq[i:i + len(sub)] == sub:
            return i
    return None


class EncodedPairs:
    """Tokenised pairs, held as the token ids of their distinct sides until a batch is built.

    Pair ``i`` is ``template.prefix + pieces[first[i]] + template.middle + pieces[second[i]] +
    template.suffix``, unless the tokenizer encoded it whole (``whole[i]``: no fixed template,
    or a pair that needed truncation).
    """

    def __init__(self, keys: Sequence[str], template: PairTemplate | None,
                 pieces: Sequence[np.ndarray], first: np.ndarray, second: np.ndarray,
                 whole: dict[int, dict[str, list[int]]], n: int) -> None:
        self.keys = tuple(keys)
        self.template = template
        self.pieces = list(pieces)
        self.first, self.second = first, second
        self.whole = whole
        specials = 0 if template is None else template.specials
        self._piece_lengths = np.array([len(p) for p in self.pieces] or [0], dtype=np.int64)
        self.lengths = (np.zeros(n, dtype=np.int64) if not len(first)
                        else specials + self._piece_lengths[first]
                        + self._piece_lengths[second])
        for i, f in whole.items():
            self.lengths[i] = len(f["input_ids"])

    def __len__(self) -> int:
        return len(self.lengths)

    def features(self, i: int) -> dict[str, list[int]]:
        """Pair ``i`` as the tokenizer returns one pair (unpadded lists)."""
        if i in self.whole:
            return self.whole[i]
        assert self.template is not None
        return self.template.join(self.pieces[self.first[i]].tolist(),
                                  self.pieces[self.second[i]].tolist())

    def batch(self, rows: Sequence[int], pad_id: int) -> dict[str, np.ndarray]:
        """Right-padded int64 arrays of the pairs ``rows`` (0 padding, ``pad_id`` for ids)."""
        index = np.asarray(rows, dtype=np.int64)
        lengths = self.lengths[index]
        width = int(lengths.max()) if len(index) else 0
        positions = np.arange(width)
        real = positions < lengths[:, None]
        ids = np.full((len(index), width), pad_id, dtype=np.int64)
        ids[real] = np.concatenate([self._ids(r) for r in index.tolist()]
                                   or [np.zeros(0, np.int64)])
        out = {"input_ids": ids}
        if "token_type_ids" in self.keys:
            out["token_type_ids"] = self._types(index, positions, real)
        if "attention_mask" in self.keys:
            out["attention_mask"] = real.astype(np.int64)
        return out

    def _ids(self, i: int) -> np.ndarray:
        if i in self.whole or self.template is None:
            return np.asarray(self.whole[i]["input_ids"], dtype=np.int64)
        t = self.template
        return np.concatenate((t.prefix_ids, self.pieces[self.first[i]], t.middle_ids,
                               self.pieces[self.second[i]], t.suffix_ids))

    def _types(self, rows: np.ndarray, positions: np.ndarray, real: np.ndarray) -> np.ndarray:
        types = np.zeros(real.shape, dtype=np.int64)
        if self.template is not None and len(self.first):
            t = self.template
            a_end = len(t.prefix) + self._piece_lengths[self.first[rows]]
            bounds = np.stack([np.full(len(rows), len(t.prefix)), a_end, a_end + len(t.middle),
                               a_end + len(t.middle) + self._piece_lengths[self.second[rows]]],
                              1)
            part = (positions[None, :, None] >= bounds[:, None, :]).sum(-1)  # 0..4
            types = np.asarray(t.types, dtype=np.int64)[part] * real
        for j, r in enumerate(rows.tolist()):
            if r in self.whole:
                f = self.whole[r]
                tt = f.get("token_type_ids", [0] * len(f["input_ids"]))
                types[j] = 0
                types[j, :len(tt)] = tt
        return types


class PairEncoder:
    """Tokenises (window, name) pairs as ``tokenizer(windows, names, truncation=True,
    max_length=max_length)`` would, each distinct text once.

    Args:
        tokenizer: A Hugging Face tokenizer.
        max_length: Longest tokenised pair; longer pairs are truncated by the tokenizer itself.
        cache_size: Most names whose tokens are kept between calls (cleared when full).
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, max_length: int,
                 cache_size: int = 200_000) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.cache_size = cache_size
        self.template = pair_template(tokenizer)
        if self.template is None:
            logger.info("%s does not join pairs by a fixed template; pairs are tokenised whole",
                        type(tokenizer).__name__)
        self._names: dict[str, np.ndarray] = {}
        self._backend = _verified_backend(tokenizer)
        self.keys = self.template.keys if self.template is not None else tuple(
            k for k in ("input_ids", "token_type_ids", "attention_mask")
            if k in tokenizer("a", "b"))

    def __call__(self, windows: Sequence[str], names: Sequence[str]) -> EncodedPairs:
        """The pairs ``zip(windows, names)``, tokenised."""
        if len(windows) != len(names):
            raise ValueError(f"{len(windows)} windows but {len(names)} names")
        empty = np.zeros(0, dtype=np.int64)
        if self.template is None:
            whole = dict(enumerate(self._whole(windows, names)))
            return EncodedPairs(self.keys, None, [], empty, empty, whole, len(windows))
        pieces: list[np.ndarray] = []
        first = self._tokenize_distinct(windows, pieces)
        second = self._name_pieces(names, pieces)
        pairs = EncodedPairs(self.keys, self.template, pieces, first, second, {}, len(windows))
        long = np.flatnonzero(pairs.lengths > self.max_length).tolist()
        if long:  # truncation is left to the tokenizer
            pairs.whole = dict(zip(long, self._whole([windows[i] for i in long],
                                                     [names[i] for i in long]), strict=True))
            for i, f in pairs.whole.items():
                pairs.lengths[i] = len(f["input_ids"])
        return pairs

    def _whole(self, windows: Sequence[str], names: Sequence[str]
               ) -> list[dict[str, list[int]]]:
        if not windows:
            return []
        enc = self.tokenizer(list(windows), list(names), truncation=True,
                             max_length=self.max_length)
        return [{k: enc[k][i] for k in self.keys} for i in range(len(windows))]

    def _ids(self, texts: list[str]) -> list[np.ndarray]:
        """Token ids of each text alone, without special tokens."""
        if not texts:
            return []
        if self._backend is not None:
            raw = [e.ids for e in
                   _plain(self._backend).encode_batch(texts, add_special_tokens=False)]
        else:
            raw = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [np.asarray(ids, dtype=np.int64) for ids in raw]

    def _tokenize_distinct(self, texts: Sequence[str], pieces: list[np.ndarray]) -> np.ndarray:
        """Append the distinct texts' ids to ``pieces``; the piece index of each text."""
        index: dict[str, int] = {}
        for t in texts:
            index.setdefault(t, len(pieces) + len(index))
        pieces.extend(self._ids(list(index)))
        return np.array([index[t] for t in texts], dtype=np.int64)

    def _name_pieces(self, names: Sequence[str], pieces: list[np.ndarray]) -> np.ndarray:
        """Append the distinct names' ids (cached across calls) to ``pieces``; their indices."""
        missing = list(dict.fromkeys(n for n in names if n not in self._names))
        if missing and len(self._names) + len(missing) > self.cache_size:
            self._names.clear()
            missing = list(dict.fromkeys(names))
        self._names.update(zip(missing, self._ids(missing), strict=True))
        index: dict[str, int] = {}
        for n in names:
            if n not in index:
                index[n] = len(pieces)
                pieces.append(self._names[n])
        return np.array([index[n] for n in names], dtype=np.int64)
