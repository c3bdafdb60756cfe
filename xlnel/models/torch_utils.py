"""Torch helpers shared by the trainable stages (cross-encoder filter, tagger, encoders): devices,
seeds, batching, prediction, int8.

Imported only by code paths that need torch, so the core package works without it.
"""

from __future__ import annotations

import copy
import logging
import random
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm import tqdm

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from xlnel.filtering._pair_encoder import EncodedPairs

logger = logging.getLogger(__name__)


def seed_everything(seed: int) -> None:
    """Seed python's, numpy's and torch's random generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def freeze_embeddings(model: PreTrainedModel) -> int:
    """Stop training the embedding layer; returns the number of parameters frozen.

    For multilingual encoders the embedding matrix is most of the model (e5-small: 96M of
    118M parameters), so freezing it makes a CPU step much cheaper and AdamW's state small.
    """
    base = getattr(model, model.base_model_prefix, None)
    module = getattr(base, "embeddings", None) or model.get_input_embeddings()
    frozen = 0
    for param in module.parameters():
        param.requires_grad_(False)
        frozen += param.numel()
    return frozen


def freeze_lower_layers(model: PreTrainedModel, trainable: int) -> int:
    """Freeze the embeddings and every transformer layer but the top ``trainable`` ones (the
    classification head stays trainable); returns the number of parameters frozen.

    On a CPU this roughly halves a training step (no backward pass through the frozen
    layers, whose activations autograd then does not keep) and leaves fewer weights to move.

    Raises:
        ValueError: If the model's layer stack cannot be found, or ``trainable`` exceeds it.
    """
    base = getattr(model, model.base_model_prefix, None)
    layers = None
    for path in (("encoder", "layer"), ("transformer", "layer"), ("encoder", "layers")):
        node: Any = base
        for name in path:
            node = getattr(node, name, None)
        if isinstance(node, torch.nn.ModuleList):
            layers = node
            break
    if layers is None:
        raise ValueError(f"cannot find the transformer layers of {type(model).__name__} to "
                         "freeze; leave train_layers unset for this model")
    if trainable > len(layers):
        raise ValueError(f"train_layers={trainable} but the model has {len(layers)} layers")
    frozen = freeze_embeddings(model)
    for layer in layers[:len(layers) - trainable]:
        for param in layer.parameters():
            param.requires_grad_(False)
            frozen += param.numel()
    return frozen


def trainable_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A CPU copy of the trainable parameters (frozen ones never change, so are not copied)."""
    return {name: p.detach().to("cpu", copy=True) for name, p in model.named_parameters()
            if p.requires_grad}


def restore_state(model: torch.nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Load parameters saved by :func:`trainable_state` back into ``model``."""
    missing = set(state) - {name for name, _ in model.named_parameters()}
    if missing:
        raise KeyError(f"saved parameters not in the model: {sorted(missing)[:5]}")
    model.load_state_dict(state, strict=False)


def to_device(batch: dict[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    """Tensors on ``device`` from a batch of int64 arrays (pinned and copied asynchronously
    when the device is a GPU)."""
    out: dict[str, torch.Tensor] = {}
    for key, array in batch.items():
        tensor = torch.from_numpy(array)
        out[key] = (tensor.pin_memory().to(device, non_blocking=True) if device.type == "cuda"
                    else tensor.to(device))
    return out


def positive_probability(logits: torch.Tensor) -> torch.Tensor:
    """P(positive) from one logit (sigmoid) or two class logits (softmax, class 1)."""
    if logits.shape[-1] == 1:
        return torch.sigmoid(logits[:, 0])
    return torch.softmax(logits, dim=-1)[:, 1]


def length_batches(lengths: Sequence[int], size: int) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length (shortest first), to cut padding."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for lo in range(0, len(order), size):
        yield order[lo:lo + size]


def predict(model: torch.nn.Module, pairs: EncodedPairs, pad_id: int, batch_size: int,
            device: torch.device, progress: bool = False, dtype: str = "float32") -> np.ndarray:
    """P(positive) of each tokenised pair: batched by length under ``torch.inference_mode``.

    The probabilities stay on the device until every batch has run, so a GPU is not made to
    wait for the host after each batch. ``dtype`` other than ``float32`` runs the forward pass
    under ``torch.autocast`` in that format.
    """
    if not len(pairs):
        return np.zeros(0, dtype=np.float64)
    was_training = model.training
    model.eval()
    batches = list(length_batches(pairs.lengths.tolist(), batch_size))
    probs: list[torch.Tensor] = []
    autocast = torch.autocast(device.type, dtype=getattr(torch, dtype),
                              enabled=dtype != "float32")
    with torch.inference_mode(), autocast:
        for idx in tqdm(batches, desc="cross-encoder", unit="batch", disable=not progress):
            logits = model(**to_device(pairs.batch(idx, pad_id), device)).logits.float()
            probs.append(positive_probability(logits))
    model.train(was_training)
    out = np.zeros(len(pairs), dtype=np.float64)
    out[np.concatenate(batches)] = torch.cat(probs).cpu().numpy()
    return out


def quantize_int8(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` with every ``nn.Linear`` dynamically quantised to int8 (CPU only)."""
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao, which is not a dependency.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        quantized: Any = torch.ao.quantization.quantize_dynamic(
            copy.deepcopy(model).to("cpu").eval(), {torch.nn.Linear}, dtype=torch.qint8)
    return quantized


def skips_weight_decay(name: str) -> bool:
    """Whether a parameter is a bias or a layer norm (no weight decay, as in BERT training)."""
    return "LayerNorm" in name or "layer_norm" in name or name.endswith("bias")


def adamw(model: torch.nn.Module, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    """AdamW over the trainable parameters, without decay on biases and layer norms."""
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if skips_weight_decay(name) else decay).append(param)
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=lr)


#: transformers' ``model_max_length`` of a tokenizer that was saved without one is a huge
#: stand-in (``int(1e30)``); anything this large tells nothing.
_UNKNOWN_LENGTH = 1_000_000
#: Model types whose position ids start after the padding id (RoBERTa's embeddings), so that
#: ``max_position_embeddings`` - (pad id + 1) positions are usable.
_PADDING_OFFSET_TYPES = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert"})


def token_limit(tokenizer: Any, config: Any) -> int | None:
    """Most tokens, special ones included, that a model reads in one sequence.

    The smaller of the tokenizer's ``model_max_length`` (what transformers truncates to) and
    the positions of the model's embeddings; ``None`` when neither is known.
    """
    limits = []
    saved = getattr(tokenizer, "model_max_length", None)
    if isinstance(saved, int) and 0 < saved < _UNKNOWN_LENGTH:
        limits.append(saved)
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        if getattr(config, "model_type", None) in _PADDING_OFFSET_TYPES:
            positions -= int(getattr(config, "pad_token_id", None) or 0) + 1
        limits.append(positions)
    return min(limits) if limits else None


def check_max_length(max_length: int, tokenizer: Any, config: Any, option: str,
                     model: str) -> None:
    """Refuse a ``max_length`` option longer than the model reads (:func:`token_limit`).

    A longer sequence would reach past the position embeddings and fail deep inside the
    model (``The expanded size of the tensor ... must match``) on the first long text.

    Raises:
        ConfigError: Naming the option, its value, the model and the most it may be.
    """
    from xlnel.errors import ConfigError

    limit = token_limit(tokenizer, config)
    if limit is not None and max_length > limit:
        raise ConfigError(f"{option}={max_length} is more than model {model!r} reads in one "
                          f"sequence; allowed: at most {limit} tokens")
