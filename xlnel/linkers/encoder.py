"""Entity encoder: names and mentions (without context) to L2-normalised vectors.

The encoder is any Hugging Face id or local folder, or a name registered in
:mod:`xlnel.models.registry` (``multilingual-e5-small``, built offline). SapBERT-style models
take the ``[CLS]`` vector (``pooling="cls"``); e5 models average the token vectors
(``pooling="mean"``) and expect texts prefixed with ``"query: "``.

A folder written by :meth:`EntityEncoder.save` (or by :func:`xlnel.linkers.align.align_encoder`)
is a standard transformers folder plus ``xlnel_encoder.json`` recording the pooling, prefix and
maximum length it was trained with; those become the defaults when the folder is loaded.

torch and transformers are imported only when an encoder is built.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from tqdm import tqdm

from xlnel.cache import cache_dir
from xlnel.errors import ConfigError
from xlnel.models.quiet import no_progress_bars
from xlnel.version import __version__

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

Pooling = Literal["cls", "mean"]
ENCODER_FILE = "xlnel_encoder.json"
"""File in a model folder recording how the encoder embeds texts (pooling, prefix, length)."""
DEFAULT_POOLING: Pooling = "mean"
DEFAULT_PREFIX = "query: "
"""Defaults suit the offline default model, multilingual-e5-small."""


def encoder_settings(source: str) -> dict[str, Any]:
    """The settings recorded in a model folder's ``xlnel_encoder.json`` (empty when none)."""
    path = Path(source) / ENCODER_FILE
    if not path.is_file():
        return {}
    meta = json.loads(path.read_text(encoding="utf-8"))
    return {k: meta[k] for k in ("pooling", "prefix", "max_length") if k in meta}


class EntityEncoder:
    """A transformer embedding short texts into unit vectors (cosine = inner product).

    Args:
        model: Registered name, Hugging Face id or local folder.
        pooling: ``cls`` or ``mean``; ``None`` = what the folder records, else ``mean``.
        prefix: Text put before every input; ``None`` = what the folder records, else
            ``"query: "``.
        max_length: Most tokens per text; ``None`` = recorded, else 32.
        device: ``cpu``, ``cuda`` or ``auto``.
        batch_size: Texts per forward pass when encoding.
        safetensors_only: Read the weights from safetensors only, never a pickled PyTorch
            file (the encoder copy in a saved pipeline, which may come from anyone).

    Raises:
        ConfigError: If the model cannot be loaded, or ``max_length`` is more than it reads.
        ValueError: If ``max_length`` or ``batch_size`` is below 1.
    """

    def __init__(self, model: str, pooling: Pooling | None = None, prefix: str | None = None,
                 max_length: int | None = None, device: str = "auto",
                 batch_size: int = 128, safetensors_only: bool = False) -> None:
        from transformers import AutoModel, AutoTokenizer

        from xlnel.models.devices import resolve_device
        from xlnel.models.registry import resolve_model

        self.model_name = model
        self.source = resolve_model(model)
        recorded = encoder_settings(self.source)
        self.pooling: Pooling = pooling or recorded.get("pooling", DEFAULT_POOLING)
        if self.pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', got {self.pooling!r}")
        self.prefix: str = recorded.get("prefix", DEFAULT_PREFIX) if prefix is None else prefix
        self.max_length: int = (int(recorded.get("max_length", 32)) if max_length is None
                                else max_length)
        if self.max_length < 1 or batch_size < 1:
            raise ValueError(f"max_length and batch_size must be at least 1, got "
                             f"{self.max_length} and {batch_size}")
        self.batch_size = batch_size
        self.device = resolve_device(device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.source)
            with no_progress_bars():
                self.model = AutoModel.from_pretrained(
                    self.source, **({"use_safetensors": True} if safetensors_only else {})
                ).to(self.device).eval()
        except (OSError, ValueError) as e:  # an unknown id offline; a folder without a model
            raise ConfigError(
                f"cannot load encoder {model!r}: it is not a name of 'xlnel models list', a "
                f"local model folder, or a Hugging Face id in the local cache ({e})") from e
        from xlnel.models.torch_utils import check_max_length

        check_max_length(self.max_length, self.tokenizer, self.model.config, "max_length", model)

    @property
    def dim(self) -> int:
        """Size of the vectors."""
        return int(self.model.config.hidden_size)

    def tokenize(self, texts: Sequence[str]) -> dict[str, list[list[int]]]:
        """Tokenise prefixed texts, unpadded and truncated to ``max_length``."""
        enc = self.tokenizer([self.prefix + t for t in texts], truncation=True,
                             max_length=self.max_length)
        return {k: enc[k] for k in ("input_ids", "attention_mask") if k in enc}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled, L2-normalised vectors of a padded batch (differentiable, for training)."""
        import torch

        hidden = self.model(**batch).last_hidden_state
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return torch.nn.functional.normalize(pooled.float(), dim=-1)

    def collate(self, features: dict[str, list[list[int]]],
                rows: Sequence[int]) -> dict[str, torch.Tensor]:
        """Right-pad the chosen rows of tokenised texts into tensors on the encoder's device."""
        import torch

        width = max(len(features["input_ids"][i]) for i in rows)
        pad = self.tokenizer.pad_token_id or 0
        batch: dict[str, torch.Tensor] = {}
        for key, values in features.items():
            fill = pad if key == "input_ids" else 0
            batch[key] = torch.tensor([values[i] + [fill] * (width - len(values[i]))
                                       for i in rows], dtype=torch.long, device=self.device)
        return batch

    def encode(self, texts: Sequence[str], batch_size: int | None = None,
               progress: bool = False) -> np.ndarray:
        """Embed texts: float32 array of shape ``(len(texts), dim)``, rows of unit length.

        Texts are batched by token length (shortest first) to cut padding.
        """
        import torch

        from xlnel.models.torch_utils import length_batches

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        t0 = time.perf_counter()
        features = self.tokenize(texts)
        lengths = [len(ids) for ids in features["input_ids"]]
        was_training = self.model.training
        self.model.eval()
        size = self.batch_size if batch_size is None else batch_size
        if size < 1:
            raise ValueError(f"batch_size must be at least 1, got {size}")
        batches = list(length_batches(lengths, size))
        with torch.inference_mode():
            for rows in tqdm(batches, desc="embedding", unit="batch", disable=not progress):
                out[rows] = self.forward(self.collate(features, rows)).cpu().numpy()
        self.model.train(was_training)
        logger.debug("embedded %d texts in %.1f s", len(texts), time.perf_counter() - t0)
        return out

    def settings(self) -> dict[str, Any]:
        """What ``xlnel_encoder.json`` records."""
        return {"pooling": self.pooling, "prefix": self.prefix, "max_length": self.max_length}

    def save(self, directory: str | Path, extra: dict[str, Any] | None = None) -> None:
        """Write a standard transformers folder plus ``xlnel_encoder.json``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        with no_progress_bars():
            self.model.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)
        meta = {"xlnel_version": __version__, **self.settings(),
                "base_model": self.model_name, **(extra or {})}
        (directory / ENCODER_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False),
                                              encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, device: str = "auto",
             batch_size: int = 128) -> EntityEncoder:
        """Read an encoder folder (settings from its ``xlnel_encoder.json``)."""
        if not Path(directory).is_dir():
            raise FileNotFoundError(f"encoder folder not found: {directory}")
        return cls(str(directory), device=device, batch_size=batch_size)

    def fingerprint(self) -> str:
        """A key that changes when the weights or the embedding settings change."""
        parts = [self.source, json.dumps(self.settings(), sort_keys=True)]
        folder = Path(self.source)
        if folder.is_dir():
            for f in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
                stat = f.stat()
                parts.append(f"{f.name}:{stat.st_size}:{stat.st_mtime_ns}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def cached_encode(encoder: EntityEncoder, texts: Sequence[str], progress: bool = False,
                  root: Path | None = None) -> np.ndarray:
    """:meth:`EntityEncoder.encode` with the result kept under ``cache_dir()/embeddings``.

    The key covers the encoder's weights and settings and the texts, so a dictionary of tens
    of thousands of names is embedded once per model on CPU.
    """
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8"))
    digest.update(encoder.fingerprint().encode())
    folder = (root or cache_dir()) / "embeddings"
    path = folder / f"{digest.hexdigest()[:32]}.npy"
    if path.is_file():
        vectors = np.load(path, allow_pickle=False)
        if vectors.shape == (len(texts), encoder.dim):
            logger.info("embeddings of %d texts read from %s", len(texts), path)
            return vectors
    vectors = encoder.encode(texts, progress=progress)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{time.time_ns()}.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors
