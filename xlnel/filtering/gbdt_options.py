"""The options of ``xlnel.gbdt.v1`` (``filter.options``), each checked for type and range
before a filter is built (:func:`parse_options`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from xlnel.config import validate_options
from xlnel.numbers import SEED_LIMIT as _SEED_LIMIT
from xlnel.numbers import Float, Int

__all__ = ["GbdtOptions", "parse_options"]



class GbdtOptions(BaseModel):
    """Settings of ``xlnel.gbdt.v1`` (see :mod:`xlnel.filtering.gbdt` for the feature options).

    Attributes:
        folds: Folds of the out-of-fold priors and threshold choice (at least 2: with one, no
            score is out of fold).
        max_iter: Boosting iterations (at least 1).
        learning_rate: Boosting learning rate (above 0).
        max_leaf_nodes: Leaves per tree (at least 2).
        l2_regularization: L2 penalty of the leaf values (0 or more).
        seed: Seed of the trees and the negative draws (0 to 2**32 - 1).
        bag: Models averaged, seeded ``seed`` to ``seed + bag - 1`` (at least 1; the last seed
            must stay below 2**32, numpy's limit).
        negatives: Share of the negative rows each model is fitted on, in (0, 1].
        unit: Training rows: ``pair`` every candidate, ``span`` each span's best one,
            ``auto`` by ``filter.select_level``.
        window: Words of context on each side of the span (0 or more).
        extended, provenance, concepts, lexical, ngrams, kinds, edits, tagger: Feature groups.
        name_prior: Which candidates the name prior counts, ``all`` or ``best``.
        encoder: Model name, hub id or folder of frozen-encoder columns; ``None`` = none. A
            local folder is copied into the saved filter (``encoder/``, safetensors).
        encoder_pca: Components the encoder columns are reduced to (0: all).
        encoder_context_words: Most words of an encoder's context piece (at least 1).
    """

    model_config = ConfigDict(extra="forbid")

    folds: Int = Field(default=5, ge=2)
    max_iter: Int = Field(default=300, ge=1)
    learning_rate: Float = Field(default=0.08, gt=0.0)
    max_leaf_nodes: Int = Field(default=31, ge=2)
    l2_regularization: Float = Field(default=1.0, ge=0.0)
    seed: Int = Field(default=0, ge=0, lt=_SEED_LIMIT)
    bag: Int = Field(default=1, ge=1)
    negatives: Float = Field(default=1.0, gt=0.0, le=1.0)
    unit: Literal["auto", "span", "pair"] = "auto"
    window: Int = Field(default=0, ge=0)
    extended: bool = False
    provenance: bool = False
    concepts: bool = False
    name_prior: Literal["all", "best"] = "all"
    lexical: bool = False
    ngrams: bool = False
    kinds: bool = False
    edits: bool = False
    tagger: bool = False
    encoder: str | None = None
    encoder_pca: Int = Field(default=0, ge=0)
    encoder_context_words: Int = Field(default=24, ge=1)

    @field_validator("bag")
    @classmethod
    def _bag_seeds_in_range(cls, bag: int, info: ValidationInfo) -> int:
        # the bagged models take seeds seed..seed+bag-1, each passed to numpy and sklearn,
        # which refuse seeds of 2**32 and above; checked here, before any training
        seed = info.data.get("seed")  # absent when the seed itself was refused
        if seed is not None and seed + bag - 1 >= _SEED_LIMIT:
            raise ValueError(f"the bagged models are seeded seed to seed + bag - 1, which must "
                             f"stay below 2**32 ({_SEED_LIMIT}); with seed {seed} bag may be at "
                             f"most {_SEED_LIMIT - seed}, or lower the seed to at most "
                             f"{_SEED_LIMIT - bag}")
        return bag


def parse_options(options: dict[str, Any], name: str) -> dict[str, Any]:
    """``filter.options`` of the filter ``name`` checked, with every default filled in.

    Raises:
        ConfigError: Naming an unknown key with the allowed ones, or a bad value with its key
            (``filter.options.folds``), the value and what is allowed.
    """
    return validate_options(GbdtOptions, options, "filter.options", name).model_dump()
