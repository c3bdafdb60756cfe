"""Frozen-encoder features of (span, name) candidates for the gradient-boosted filter.

A multilingual sentence encoder (``multilingual-e5-small`` by default, or any model
:class:`~xlnel.linkers.encoder.EntityEncoder` loads) embeds three kinds of text, each distinct
text once:

- the *context* of a span: the piece of its sentence that holds it (sentences longer than
  ``context_words`` words are cut into pieces of that many words), shared by every span in it;
- the span's text;
- the dictionary name of the candidate.

The features are the cosines context-name, span-name and context-span and, with ``pca`` > 0,
the first ``pca`` principal components of the span embedding (fitted on the training spans), so
the trees can learn which kinds of words are medical terms beyond the texts seen in training.

Embeddings are kept in an :class:`EmbeddingStore`: in memory, and on disk under
``cache_dir()/embeddings/store-<fingerprint>`` so that cross-validation folds and later runs do not
embed a text twice. The encoder itself is loaded on the first text that is not stored.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xlnel.cache import cache_dir
from xlnel.io._atomic import atomic_path, atomic_write
from xlnel.types import Candidate, Document

if TYPE_CHECKING:
    from xlnel.linkers.encoder import EntityEncoder

logger = logging.getLogger(__name__)

COSINE_FEATURES = ("enc_context_name", "enc_span_name", "enc_context_span")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_WORD = re.compile(r"\S+")


def context_pieces(text: str, max_words: int) -> list[tuple[int, int]]:
    """Character ranges of a text's sentence pieces: sentences (split at ``.!?`` and line
    ends) of at most ``max_words`` words, and longer ones as pieces of ``max_words`` words that
    start every ``max_words // 2`` words (so that a span lies well inside one of them).

    Raises:
        ValueError: If ``max_words`` is below 1.
    """
    if max_words < 1:
        raise ValueError(f"context_words must be at least 1, got {max_words}")
    stride = max(1, max_words // 2)
    pieces = []
    for sentence in _SENTENCE.finditer(text):
        words = list(_WORD.finditer(sentence.group()))
        base = sentence.start()
        for i in range(0, max(1, len(words) - max_words + stride), stride):
            chunk = words[i:i + max_words]
            if chunk:
                pieces.append((base + chunk[0].start(), base + chunk[-1].end()))
    return pieces


class EmbeddingStore:
    """Unit vectors of texts under one encoder, kept in memory and appended to a disk folder.

    Args:
        model: Registered name, Hugging Face id or local folder of the encoder.
        folder: Where the store lives; ``None`` = ``cache_dir()/embeddings/store-<fingerprint>``.
        max_length: Most tokens per embedded text.
        batch_size: Texts per forward pass.
        encoder: An encoder already loaded (tests); else loaded on first use.
        safetensors_only: Read the encoder's weights from safetensors only (the copy a saved
            filter holds).
    """

    def __init__(self, model: str, folder: Path | None = None, max_length: int = 64,
                 batch_size: int = 64, encoder: EntityEncoder | None = None,
                 safetensors_only: bool = False) -> None:
        self.model = model
        self.safetensors_only = safetensors_only
        self.max_length = max_length
        self.batch_size = batch_size
        self._encoder = encoder
        self._folder = folder
        self._vectors: dict[str, np.ndarray] = {}
        self._loaded = False
        #: Seconds spent embedding (not reading the store), for timing reports.
        self.seconds = 0.0
        #: How many texts were embedded (not read from the store).
        self.embedded = 0

    def encoder(self) -> EntityEncoder:
        """The encoder, loaded on first use on the CPU unless one was given."""
        if self._encoder is None:
            from xlnel.linkers.encoder import EntityEncoder

            self._encoder = EntityEncoder(self.model, max_length=self.max_length, device="cpu",
                                          batch_size=self.batch_size,
                                          safetensors_only=self.safetensors_only)
        return self._encoder

    def save_encoder(self, target: Path) -> bool:
        """Write the encoder to ``target`` when it comes from a local folder; ``False`` (and
        nothing written) for a registered name or hub id, which a saved filter references.

        The copy keeps a saved filter's features those it was trained on, wherever it is
        loaded from and whatever becomes of the folder.
        """
        from xlnel.models.registry import registered_models

        if self.model in registered_models() or not Path(self.model).is_dir():
            return False
        if Path(self.model).resolve() != target.resolve():  # not the copy it was loaded from
            self.encoder().save(target, extra={"base_model": self.model})
        return True

    def folder(self) -> Path:
        """The store's disk folder (fixed by the encoder's weights and settings)."""
        if self._folder is None:
            self._folder = cache_dir() / "embeddings" / f"store-{self.encoder().fingerprint()}"
        return self._folder

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        folder = self.folder()
        for shard in sorted(folder.glob("shard-*.json")):
            texts = json.loads(shard.read_text(encoding="utf-8"))
            vectors = np.load(shard.with_suffix(".npy"), allow_pickle=False)
            if len(texts) == len(vectors):
                self._vectors.update(zip(texts, vectors, strict=True))
        logger.debug("embedding store %s: %d texts", folder, len(self._vectors))

    def add(self, texts: Iterable[str]) -> None:
        """Embed the texts not stored yet and append them to the disk store."""
        self._load()
        new = sorted({t for t in texts if t not in self._vectors})
        if not new:
            return
        t0 = time.perf_counter()
        vectors = self.encoder().encode(new)
        self.seconds += time.perf_counter() - t0
        self.embedded += len(new)
        self._vectors.update(zip(new, vectors, strict=True))
        # The vectors first, then the texts that make the shard visible to _load; both appear
        # whole or not at all, so a killed run never leaves a shard that cannot be read.
        stem = self.folder() / f"shard-{time.time_ns()}"
        with atomic_path(stem.with_suffix(".npy")) as tmp, open(tmp, "wb") as f:
            np.save(f, vectors)
        with atomic_write(stem.with_suffix(".json")) as out:
            out.write(json.dumps(new, ensure_ascii=False))
        logger.info("embedded %d texts in %.1f s", len(new), time.perf_counter() - t0)

    def get(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` (embedding those not stored), shape ``(len(texts), dim)``."""
        self.add(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])


class EncoderFeatures:
    """Cosine (and optional PCA) columns of candidates from a frozen encoder.

    Args:
        store: The embeddings.
        pca: Principal components of the span embedding to add (0 = none).
        context_words: Most words of a context piece.
    """

    def __init__(self, store: EmbeddingStore, pca: int = 0, context_words: int = 24) -> None:
        if pca < 0:
            raise ValueError(f"encoder_pca must be at least 0, got {pca}")
        self.store = store
        self.pca = pca
        self.context_words = context_words
        self.mean: np.ndarray | None = None
        self.components: np.ndarray | None = None

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Names of the columns :meth:`transform` returns."""
        return COSINE_FEATURES + tuple(f"enc_span_pc{i}" for i in range(self.pca))

    def _contexts(self, document: Document, candidates: Sequence[Candidate]) -> list[str]:
        """The context text of each candidate's span."""
        pieces = np.array(context_pieces(document.text, self.context_words),
                          dtype=np.int64).reshape(-1, 2)
        middle = pieces.sum(axis=1) / 2
        chosen: dict[tuple[int, int], str] = {}
        for c in candidates:
            key = (c.span.start, c.span.end)
            if key in chosen:
                continue
            holds = (pieces[:, 0] <= key[0]) & (pieces[:, 1] >= key[1])
            if not holds.any():  # a span across sentences: its own text
                chosen[key] = c.span.text
                continue
            # the piece in which the span is most central
            k = int(np.argmin(np.where(holds, np.abs(middle - sum(key) / 2), np.inf)))
            chosen[key] = document.text[int(pieces[k, 0]):int(pieces[k, 1])]
        return [chosen[(c.span.start, c.span.end)] for c in candidates]

    def prepare(self, documents: Sequence[Document],
                candidates: Sequence[Sequence[Candidate]]) -> None:
        """Embed, in one pass, every text the documents' candidates need."""
        texts: set[str] = set()
        for d, cands in zip(documents, candidates, strict=True):
            texts.update(self._contexts(d, cands))
            texts.update(c.span.text for c in cands)
            texts.update(c.name for c in cands)
        self.store.add(texts)

    def fit(self, documents: Sequence[Document],
            candidates: Sequence[Sequence[Candidate]]) -> EncoderFeatures:
        """Embed the training texts and fit the PCA of span embeddings (when ``pca`` > 0)."""
        self.prepare(documents, candidates)
        if self.pca:
            spans = sorted({c.span.text for cands in candidates for c in cands})
            x = self.store.get(spans).astype(np.float64)
            self.mean = x.mean(axis=0)
            _, _, vt = np.linalg.svd(x - self.mean, full_matrices=False)
            self.components = vt[:self.pca]
        return self

    def transform(self, document: Document, candidates: Sequence[Candidate]) -> np.ndarray:
        """Feature matrix of shape ``(len(candidates), len(self.feature_names))``."""
        n = len(candidates)
        if not n:
            return np.zeros((0, len(self.feature_names)), dtype=np.float32)
        ctx = self.store.get(self._contexts(document, candidates))
        span = self.store.get([c.span.text for c in candidates])
        name = self.store.get([c.name for c in candidates])
        cols = [np.einsum("ij,ij->i", ctx, name), np.einsum("ij,ij->i", span, name),
                np.einsum("ij,ij->i", ctx, span)]
        out = np.column_stack(cols)
        if self.pca:
            if self.mean is None or self.components is None:
                raise RuntimeError("encoder features with pca are not fitted")
            out = np.hstack([out, (span - self.mean) @ self.components.T])
        return out.astype(np.float32)

    def save(self, path: Path) -> None:
        """Write the PCA (if any) as plain arrays."""
        if self.pca and self.mean is not None and self.components is not None:
            np.savez(path, mean=self.mean, components=self.components)

    def load(self, path: Path) -> None:
        """Read the PCA written by :meth:`save`.

        Raises:
            FileNotFoundError: If the filter has PCA features and ``path`` is missing.
        """
        if not self.pca:
            return
        if not path.is_file():
            raise FileNotFoundError(f"saved filter lacks its encoder PCA: {path}")
        with np.load(path, allow_pickle=False) as data:
            self.mean, self.components = data["mean"], data["components"]
