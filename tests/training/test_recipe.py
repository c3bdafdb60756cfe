from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlnel.config import load_config
from xlnel.training import train


@pytest.mark.parametrize("overrides, seeds, note", [
    ({"seed": 5}, {"dft.seed": 5, "filter.options.seed": 5},
     "the top-level seed 5 where the config gives none"),
    ({"seed": 5, "dft.seed": 1}, {"dft.seed": 1, "filter.options.seed": 5},
     "the top-level seed 5 where the config gives none"),
    ({}, {"dft.seed": 0, "filter.options.seed": 0}, "no top-level seed"),
])
def test_train_says_which_seeds_the_stages_drew_with(tmp_path: Path, tiny_config: Path,
                                                     caplog: pytest.LogCaptureFixture,
                                                     overrides: dict[str, int],
                                                     seeds: dict[str, int], note: str) -> None:
    with caplog.at_level(logging.INFO, logger="xlnel.training.recipe"):
        report = train(load_config(tiny_config, overrides), tmp_path / "pipe")
    assert report["seeds"] == seeds
    expected = ", ".join(f"{k}={v}" for k, v in seeds.items())
    assert f"stage seeds: {expected} (" in caplog.text
    assert note in caplog.text
