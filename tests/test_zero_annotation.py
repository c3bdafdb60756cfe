"""benchmarks/zero_annotation.py: its configs lay ``pipeline.yaml`` over a corpus config, and
every variant is a valid config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.zero_annotation import PAIRS, VARIANTS, config_for
from xlnel.config import load_config
from xlnel.dictionary.adapt import write_pipeline_config


def test_variants_over_the_written_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # configs/data is read from the root
    pipeline = tmp_path / "pipeline.yaml"
    write_pipeline_config(pipeline, "he", tmp_path / "dictionary.tsv", tmp_path / "stop.txt")
    config = config_for("diabetes", pipeline, tmp_path)
    base = load_config(config)
    # the corpus config gives the data, pipeline.yaml the dictionary, stop words and filter
    assert base.data.train is not None and base.data.train.endswith("camoni/diabetes.jsonl")
    assert base.dictionary.kb == [] and base.dictionary.extra == [str(tmp_path / "dictionary.tsv")]
    assert base.filter.name == "xlnel.similarity.v1" and base.filter.threshold == 1.0
    assert base.dft.R == 0.0 and base.candidates.stopwords == str(tmp_path / "stop.txt")
    chosen = load_config(config, VARIANTS["adapt_chosen"])
    assert chosen.filter.threshold is None
    reference = load_config(config, VARIANTS["reference"])
    assert reference.dictionary.extra == [] and reference.dictionary.kb[0].startswith("names:")
    assert reference.filter.threshold == 1.0
    assert {v for _, v in PAIRS} | {b for b, _ in PAIRS} == set(VARIANTS)


def test_everyday_cut_chosen_on_the_other_folds() -> None:
    from benchmarks.zero_annotation_everyday import FOLDS, chosen

    n = 10
    # cut 5 is better on every post but post 0, where cut 0 finds one more mention
    low = np.tile([1, 2, 1], (n, 1))
    high = np.tile([1, 0, 1], (n, 1))
    low[0], high[0] = [3, 0, 0], [2, 0, 1]
    counts, picks = chosen({0: low, 5: high})
    assert picks == [5] * FOLDS  # chosen on the other folds, where 5 wins every time
    assert (counts == high).all()
    # a tie goes to the smaller cut
    assert chosen({0: high, 5: high})[1] == [0] * FOLDS
