from __future__ import annotations

import numpy as np
import pytest

from xlnel.errors import ArtifactError
from xlnel.filtering.ngram_priors import (
    N_FEATURES,
    NgramPrior,
    load_ngram_priors,
    save_ngram_priors,
)

# drug-like names were gold, everyday words never were; the unseen texts share their letters
TABLE = {"pentobarbital": [5, 5], "phenobarbital": [3, 3], "butalbital": [2, 2],
         "hypertension": [40, 42], "hypotension": [10, 10], "patients": [0, 300],
         "treatment": [0, 80], "patient group": [0, 20], "rats": [0, 100], "time": [0, 50]}


def test_unseen_texts_take_the_prior_of_their_letters():
    model = NgramPrior.fit(TABLE)
    secobarbital, outpatients = model.predict(["secobarbital", "outpatients"])
    assert secobarbital > 0.5 > outpatients
    assert model.predict(["hypertensive"])[0] > model.predict(["treatments"])[0]


def test_each_text_weighs_one_however_often_it_was_seen():
    # "patients" seen 300 times does not outweigh "pentobarbital" seen 5 times: the model is
    # fitted to shares, so a text seen 1,000 times more with the same share changes nothing
    model = NgramPrior.fit(TABLE)
    heavier = NgramPrior.fit({**TABLE, "patients": [0, 300_000]})
    np.testing.assert_allclose(model.coef, heavier.coef, atol=1e-5)


@pytest.mark.parametrize(("table", "expected"), [
    ({}, 0.1 / 1.1),  # no text: the priors' smoothed rate of an unseen key
    ({"a": [0, 3], "b": [0, 1]}, 1e-4),  # never gold: the floor
    ({"a": [2, 2]}, 1 - 1e-4),  # always gold: the ceiling
    ({"a": [0, 0]}, 0.1 / 1.1),  # seen nowhere counts as no text
])
def test_a_table_of_one_kind_gives_a_constant_model(table, expected):
    model = NgramPrior.fit(table)
    assert not model.coef.any()
    assert model.predict(["anything", "else"]) == pytest.approx([expected, expected])


def test_predict_of_nothing_is_empty():
    assert NgramPrior.fit(TABLE).predict([]).shape == (0,)


def test_wrong_weight_count_is_refused():
    with pytest.raises(ValueError, match=str(N_FEATURES)):
        NgramPrior(np.zeros(3), 0.0)


def test_save_load_round_trip(tmp_path):
    models = (NgramPrior.fit(TABLE), NgramPrior.fit({"x": [1, 4], "y": [0, 2]}))
    save_ngram_priors(models, tmp_path / "n.npz")
    loaded = load_ngram_priors(tmp_path / "n.npz")
    texts = ["secobarbital", "patients", "x"]
    for a, b in zip(models, loaded, strict=True):
        np.testing.assert_allclose(a.predict(texts), b.predict(texts), rtol=1e-6)


def test_load_refuses_missing_and_misshapen_files(tmp_path):
    with pytest.raises(ArtifactError, match="lacks n.npz"):
        load_ngram_priors(tmp_path / "n.npz")
    np.savez(tmp_path / "n.npz", coef=np.zeros((1, 5)), intercept=np.zeros(1))
    with pytest.raises(ArtifactError, match="retrain"):
        load_ngram_priors(tmp_path / "n.npz")
