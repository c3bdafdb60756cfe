"""The top-level seed is the default of every stage seed a config leaves out when it trains, as
spaCy's ``[system] seed`` seeds a run; a config without one keeps the stages' own defaults."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from xlnel.config import dump_config, load_config
from xlnel.config_files import read_yaml, resolve_includes
from xlnel.errors import ConfigError
from xlnel.training.seeds import stage_seeds, with_stage_seeds

CASCADE = {"filter.name": "xlnel.cross_encoder.v1",
           "filter.options": {"prefilter": "xlnel.gbdt.v1"},
           "ner.name": "xlnel.crf_tagger.v1"}


def test_the_top_level_seed_seeds_every_stage(tiny_config: Path) -> None:
    config = with_stage_seeds(load_config(tiny_config, {**CASCADE, "seed": 5}))
    assert stage_seeds(config) == {"dft.seed": 5, "filter.options.seed": 5,
                                   "filter.options.prefilter_options.seed": 5,
                                   "ner.options.seed": 5}
    # the stages read them from their own sections
    assert config.dft.seed == config.filter.options["seed"] == config.ner.options["seed"] == 5


def test_a_stage_seed_given_explicitly_wins(tiny_config: Path) -> None:
    config = with_stage_seeds(load_config(tiny_config, {
        **CASCADE, "seed": 5, "dft.seed": 1, "filter.options.seed": 2, "ner.options.seed": 3}))
    assert stage_seeds(config) == {"dft.seed": 1, "filter.options.seed": 2,
                                   "filter.options.prefilter_options.seed": 5,
                                   "ner.options.seed": 3}


def test_without_a_top_level_seed_the_stages_keep_their_defaults(tiny_config: Path) -> None:
    config = with_stage_seeds(load_config(tiny_config, {**CASCADE, "dft.seed": 4}))
    assert stage_seeds(config) == {"dft.seed": 4, "filter.options.seed": 0,
                                   "filter.options.prefilter_options.seed": 0,
                                   "ner.options.seed": 0}
    assert "seed" not in config.filter.options and config.ner.options == {}


def test_only_stages_that_draw_get_a_seed(tiny_config: Path) -> None:
    config = with_stage_seeds(load_config(tiny_config, {
        "seed": 5, "filter.name": "xlnel.similarity.v1", "filter.options": {}}))
    assert stage_seeds(config) == {"dft.seed": 5} and config.filter.options == {}
    reused = with_stage_seeds(load_config(tiny_config, {
        "seed": 5, "ner.name": "xlnel.crf_tagger.v1", "ner.pretrained": "elsewhere"}))
    assert "ner.options.seed" not in stage_seeds(reused)  # loaded, not trained
    assert reused.ner.options == {}


def test_a_saved_config_loads_back_with_the_seeds_it_trained_with(tmp_path: Path, tiny_config: Path
                                                       ) -> None:
    for overrides in ({**CASCADE, "seed": 5}, CASCADE, {**CASCADE, "seed": 5, "dft.seed": 1}):
        config = with_stage_seeds(load_config(tiny_config, overrides))
        (tmp_path / "saved.yaml").write_text(dump_config(config), encoding="utf-8")
        saved = load_config(tmp_path / "saved.yaml")
        assert stage_seeds(saved) == stage_seeds(config)
        # trained again, a saved config draws as the pipeline did
        assert stage_seeds(with_stage_seeds(saved)) == stage_seeds(config)


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_a_top_level_seed_out_of_range_is_refused(tiny_config: Path, seed: int) -> None:
    with pytest.raises(ConfigError, match=rf"seed: .*(got {seed})"):
        load_config(tiny_config, {"seed": seed})


@pytest.mark.parametrize("path", sorted(glob.glob("configs/*.yaml") +
                                       glob.glob("configs/*/*.yaml")))
def test_shipped_configs_draw_as_their_stage_defaults(path: str) -> None:
    """No shipped config gives a top-level seed, and its stage seeds are the top-level
    default: the shipped pipelines draw as they did before the top-level seed seeded the
    stages, and giving seed: 0 changes no draw."""
    config = with_stage_seeds(load_config(path))
    assert config == load_config(path)  # no top-level seed: the config as it is
    raw = resolve_includes(read_yaml(Path(path)), Path(path).parent, path)
    assert "seed" not in raw
    assert set(stage_seeds(config).values()) == {config.seed} == {0}
    assert stage_seeds(with_stage_seeds(load_config(path, {"seed": 0}))) == stage_seeds(config)
