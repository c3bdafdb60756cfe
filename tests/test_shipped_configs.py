from __future__ import annotations

from pathlib import Path

import pytest

from xlnel.candidates.base import generator_class
from xlnel.config import load_config
from xlnel.filtering.base import filter_class

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


def test_configs_are_shipped():
    assert len(CONFIGS) >= 4


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_validates_and_names_registered_stages(path):
    cfg = load_config(path)
    generator_class(cfg.candidates.generator)
    filter_class(cfg.filter.name)(cfg.filter, cfg.lang)  # options are validated on creation
    assert cfg.data.train is not None
