"""The seeds a pipeline config's stages draw with, and the top-level ``seed`` as their default.

A stage seed is one that a stage of the config reads while it trains:

- ``dft.seed``: the by-document DFT split and the cross-fitting folds;
- ``filter.options.seed``: a filter that takes one (``xlnel.gbdt.v1``, ``xlnel.cross_encoder.v1``);
- ``filter.options.prefilter_options.seed``: a cascade's prefilter that takes one;
- ``ner.options.seed``: a tagger that takes one and is trained (not one reused through
  ``ner.pretrained``).

As spaCy's ``[system] seed`` seeds a whole run, a config's top-level ``seed``, when it gives
one, is the value of every stage seed it leaves out when it trains (:func:`with_stage_seeds`,
applied by :class:`xlnel.training.TrainingRun`, so by ``xlnel train`` and ``xlnel
experiment``), and ``xlnel experiment --seeds`` sets every stage seed of a cell to the cell's
seed. ``data.split_seed`` and ``data.subset_seed`` are not stage seeds: they choose the
documents (the test documents among them), which the replicates of an experiment share.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from xlnel.config import PipelineConfig
from xlnel.filtering.base import filter_class
from xlnel.ner.base import tagger_class

__all__ = ["STAGE_SEED_KEYS", "stage_seed_keys", "stage_seeds", "with_stage_seeds"]

STAGE_SEED_KEYS = ("dft.seed", "filter.options.seed", "filter.options.prefilter_options.seed",
                   "ner.options.seed")
"""Every dotted key that may be a stage seed, in the order :func:`stage_seed_keys` gives them."""


def _options(stage: object) -> Any:
    return getattr(stage, "options", None)


def _seed_of(options: Any) -> int | None:
    """The seed a stage's validated options hold (a mapping or a model), ``None`` if none."""
    if isinstance(options, Mapping):
        return None if options.get("seed") is None else int(options["seed"])
    seed = getattr(options, "seed", None)
    return None if seed is None else int(seed)


def stage_seeds(config: PipelineConfig) -> dict[str, int]:
    """The stage seeds of ``config`` (see the module docstring) with the values its stages
    draw with, defaults filled in, by dotted key.

    Raises:
        ConfigError: If a stage's name is unknown or its options are invalid.
    """
    seeds = {"dft.seed": config.dft.seed}
    filt = filter_class(config.filter.name)(config.filter, config.lang)
    if (seed := _seed_of(_options(filt))) is not None:
        seeds["filter.options.seed"] = seed
    pre = getattr(filt, "prefilter_config", None)
    if pre is not None:
        prefilter = filter_class(pre.name)(pre, config.lang)
        if (seed := _seed_of(_options(prefilter))) is not None:
            seeds["filter.options.prefilter_options.seed"] = seed
    if config.ner.name is not None and config.ner.pretrained is None:
        tagger = tagger_class(config.ner.name)(config.ner, config.lang)
        if (seed := _seed_of(_options(tagger))) is not None:
            seeds["ner.options.seed"] = seed
    return seeds


def stage_seed_keys(config: PipelineConfig) -> list[str]:
    """The dotted keys of ``config``'s stage seeds (see :func:`stage_seeds`)."""
    return list(stage_seeds(config))


def with_stage_seeds(config: PipelineConfig) -> PipelineConfig:
    """``config`` with every stage seed it leaves out set to its top-level ``seed``; ``config``
    itself when it gives no top-level seed (each stage then keeps its own default) or gives
    every stage seed.

    A seed counts as given when the config's files or overrides set it (pydantic's
    ``model_fields_set``, a key of an ``options`` mapping); a config read back from a saved
    pipeline gives all of them.

    Raises:
        ConfigError: As :func:`stage_seeds`.
    """
    if "seed" not in config.model_fields_set:
        return config
    seed, update = config.seed, {}
    for key in stage_seed_keys(config):
        if key == "dft.seed" and "seed" not in config.dft.model_fields_set:
            update["dft"] = config.dft.model_copy(update={"seed": seed})
        elif key == "filter.options.seed" and "seed" not in config.filter.options:
            update["filter"] = _with_option(config.filter, ("seed",), seed)
        elif key == "filter.options.prefilter_options.seed" and "seed" not in \
                (config.filter.options.get("prefilter_options") or {}):
            section = update.get("filter", config.filter)
            update["filter"] = _with_option(section, ("prefilter_options", "seed"), seed)
        elif key == "ner.options.seed" and "seed" not in config.ner.options:
            update["ner"] = _with_option(config.ner, ("seed",), seed)
    return config.model_copy(update=update) if update else config


def _with_option(section: Any, path: tuple[str, ...], value: int) -> Any:
    """A copy of a config section whose ``options`` mapping holds ``value`` at ``path``."""
    options = copy.deepcopy(section.options)
    node = options
    for part in path[:-1]:
        if not isinstance(node.get(part), dict):  # absent or null: a mapping of its own
            node[part] = {}
        node = node[part]
    node[path[-1]] = value
    return section.model_copy(update={"options": options})
