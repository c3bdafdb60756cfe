"""The options of ``xlnel.cross_encoder.v1`` (``filter.options``): what a config may set, each
with its meaning (docs/configuration.md's option reference is generated from them), the ones
a trained filter still takes from the config when it is loaded, and the cascade prefilter's
config they give."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from xlnel.config import FilterConfig, validate_options
from xlnel.errors import ConfigError
from xlnel.numbers import Float, Int

__all__ = ["INFERENCE_OPTIONS", "CrossEncoderOptions", "parse_options", "prefilter_config"]

INFERENCE_OPTIONS = frozenset({"device", "quantize", "inference_batch_size", "inference_dtype"})
"""Options that a loaded filter takes from the config; the others stay as trained."""


class CrossEncoderOptions(BaseModel):
    """Settings of ``xlnel.cross_encoder.v1`` (``filter.options`` in the pipeline config).

    Attributes:
        model: Registered model name, Hugging Face id or local folder of the encoder.
        window: Words of context on each side of the span.
        mark_span: Put ``[`` and ``]`` around the span inside the window. Without them the
            model cannot tell apart spans that differ only by a stripped Hebrew prefix or by a
            word at the window's edge (they get the same window).
        lr: Peak learning rate of AdamW.
        epochs: Most training epochs (early stopping may end sooner).
        batch_size: Pairs per training step (before gradient accumulation).
        max_length: Longest tokenised pair; longer ones are truncated. At most what the model
            reads (refused otherwise).
        warmup_ratio: Share of the steps with a linearly rising learning rate.
        weight_decay: AdamW weight decay (not applied to biases and layer norms).
        seed: Seed of the dev split, negative sampling, head initialisation and shuffling.
        device: ``cpu``, ``cuda`` or ``auto``.
        freeze_embeddings: Keep the embedding layer fixed; ``None`` = only on CPU.
        train_layers: Train only the top N transformer layers and the head; the embeddings
            and lower layers stay fixed (about half the cost of a CPU step). ``None`` = all
            layers.
        grad_accum: Steps whose gradients are summed before each update.
        top_k_per_span: Names per span, best matcher scores first, read by the transformer;
            ``None`` = all.
        neg_ratio: Most negatives per positive in an epoch, sampled afresh each epoch;
            ``None`` = all negatives.
        dev_fraction: Share of the training documents (by document) held out for early
            stopping and the threshold; 0 = no dev set (threshold chosen on training data), as
            when the held-out documents hold no gold mention (a warning says so).
        patience: Epochs without dev improvement before training stops.
        quantize: Score with int8 dynamically quantised linear layers (CPU only).
        inference_batch_size: Pairs per forward pass when scoring.
        inference_dtype: Number format of the forward pass when scoring: ``float32``, or
            ``bfloat16`` / ``float16`` (mixed precision by ``torch.autocast``, meant for GPUs
            with tensor cores; probabilities differ slightly from float32). With e5-small on
            an H200 its gain was within the spread between runs (docs/benchmarks.md).
            Training always runs in float32.
        prefilter: Registered name of a cheap filter trained first (``xlnel.gbdt.v1``); the
            transformer reads only candidates it scores at least the cut. ``None`` = no
            cascade: the transformer reads every candidate (within ``top_k_per_span``).
        prefilter_recall: Share of the positive training candidates the cut keeps, measured
            on the prefilter's out-of-fold scores.
        prefilter_options: The prefilter's own ``filter.options`` (for the GBDT, its features
            chosen for the corpus, such as ``concepts: true``); empty = its defaults.
        combine: The final score of a cascade: ``cross_encoder`` (the transformer's
            probability; 0 for candidates the prefilter drops), ``mean`` (of both filters'
            probabilities) or ``auto`` (the better of the two by F1 on the dev split).
    """

    model_config = ConfigDict(extra="forbid")

    model: str = "multilingual-e5-small"
    window: Int = Field(2, ge=0)
    mark_span: bool = True
    lr: Float = Field(2e-5, gt=0)
    epochs: Int = Field(3, ge=1)
    batch_size: Int = Field(32, ge=1)
    max_length: Int = Field(64, ge=8)
    warmup_ratio: Float = Field(0.1, ge=0.0, lt=1.0)
    weight_decay: Float = Field(0.01, ge=0.0)
    seed: Int = Field(0, ge=0, lt=2**32)
    device: Literal["cpu", "cuda", "auto"] = "auto"
    freeze_embeddings: bool | None = None
    train_layers: Int | None = Field(None, ge=0)
    grad_accum: Int = Field(1, ge=1)
    top_k_per_span: Int | None = Field(5, ge=1)
    neg_ratio: Float | None = Field(4.0, gt=0)
    dev_fraction: Float = Field(0.2, ge=0.0, lt=1.0)
    patience: Int = Field(1, ge=1)
    quantize: bool = False
    inference_batch_size: Int = Field(128, ge=1)
    inference_dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    prefilter: str | None = None
    prefilter_recall: Float = Field(0.98, gt=0.0, le=1.0)
    prefilter_options: dict[str, Any] = Field(default_factory=dict)
    combine: Literal["auto", "cross_encoder", "mean"] = "auto"


def parse_options(options: dict[str, Any]) -> CrossEncoderOptions:
    """Validate ``filter.options`` for the cross-encoder.

    Raises:
        ConfigError: Naming the bad key, its value and what is allowed.
    """
    parsed = validate_options(CrossEncoderOptions, options, "filter.options", "cross-encoder")
    if parsed.quantize and parsed.inference_dtype != "float32":
        raise ConfigError(f"filter.options: quantize (int8) cannot be combined with "
                          f"inference_dtype={parsed.inference_dtype}; choose one")
    return parsed


def prefilter_config(options: CrossEncoderOptions,
                     select_level: Literal["span", "concept"], lang: str) -> FilterConfig | None:
    """The cascade prefilter's config (``None`` without one), checked by building the
    prefilter once.

    Raises:
        ConfigError: An unknown prefilter, options it refuses (named under
            ``filter.options.prefilter_options``), or options without a prefilter.
    """
    from xlnel.filtering.base import filter_class

    name = options.prefilter
    if name is None:
        if options.prefilter_options:
            raise ConfigError("filter.options.prefilter_options: set without a prefilter")
        return None
    config = FilterConfig(name=name, select_level=select_level,
                          options=dict(options.prefilter_options))
    cls = filter_class(name)
    try:
        cls(config, lang)
    except (ConfigError, ValueError) as e:
        raise ConfigError(f"filter.options.prefilter_options: {e}") from e
    return config
