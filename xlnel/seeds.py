"""The seeds a pipeline config's stages draw with, and the top-level ``seed`` as their default.

A stage seed is one that a stage of the config reads while it trains:

- ``dft.seed``: the by-document DFT split and the cross-fitting folds;
- ``filter.options.seed``: a filter that takes one (``xlnel.gbdt.v1``, ``xlnel.cross_encoder.v1``);
- ``filter.options.prefilter_options.seed``: a cascade's prefilter that takes one;
- ``ner.options.seed``: a tagger that takes one and is trained (not one reused through
  ``ner.pretrained``).

As spaCy's ``[system] seed`` seeds a whole run, a config's top-level ``seed``, when it gives
one, is the value of every stage seed it leaves out (:func:`default_stage_seeds`), and ``xlnel
experiment --seeds`` sets every stage seed of a cell to the cell's seed. ``data.split_seed`` and
``data.subset_seed`` are not stage seeds: they choose the documents (the test documents among
them), which the replicates of an experiment share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xlnel.config import PipelineConfig

__all__ = ["SEED_LIMIT", "STAGE_SEED_KEYS", "default_stage_seeds", "stage_seed_keys",
           "stage_seeds"]

SEED_LIMIT = 2**32
"""Seeds of numpy's and sklearn's random generators lie below this."""

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
    # the stage classes are looked up by name only here: their modules import the config
    from xlnel.filtering.base import filter_class
    from xlnel.ner.base import tagger_class

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


def _given(raw: Mapping[str, Any], dotted: str) -> bool:
    """Whether the raw config mapping ``raw`` sets the dotted key (to anything but null)."""
    node: Any = raw
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or node.get(part) is None:
            return False
        node = node[part]
    return True


def default_stage_seeds(config: PipelineConfig, raw: Mapping[str, Any]) -> dict[str, int]:
    """Overrides setting every stage seed that the raw config ``raw`` (includes and overrides
    applied) leaves out to its top-level ``seed``; none when ``raw`` gives no top-level seed,
    so a config without one keeps every stage's own default.

    Raises:
        ConfigError: As :func:`stage_seeds`.
    """
    if not _given(raw, "seed"):
        return {}
    return {key: config.seed for key in stage_seed_keys(config) if not _given(raw, key)}
