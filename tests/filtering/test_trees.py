from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from xlnel.errors import ArtifactError
from xlnel.filtering._trees import TreeEnsemble


def _data(rng: np.random.Generator, n: int, missing: float) -> np.ndarray:
    x = rng.normal(size=(n, 6))
    x[:, 5] = rng.integers(0, 3, size=n)  # a few distinct values: thresholds between them
    x[rng.random(x.shape) < missing] = np.nan
    return x


@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_predict_equals_sklearn_predict_proba(tmp_path, missing):
    rng = np.random.default_rng(3)
    x = _data(rng, 2000, missing)
    y = (np.nan_to_num(x[:, 0]) + np.nan_to_num(x[:, 1]) ** 2 - x[:, 5] > 0.2)
    model = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=15, random_state=0)
    model.fit(x, y)
    trees = TreeEnsemble.from_sklearn(model)
    test = _data(rng, 3000, 0.2)  # NaN at predict time even where training had none
    test[:5] = np.nan
    expected = model.predict_proba(test)[:, 1]
    assert np.array_equal(trees.predict_positive(test), expected)
    trees.save(tmp_path / "t.npz")
    assert np.array_equal(TreeEnsemble.load(tmp_path / "t.npz").predict_positive(test), expected)
    assert trees.predict_positive(np.zeros((0, 6))).shape == (0,)


def test_load_refuses_cycles_and_pickles(tmp_path):
    rng = np.random.default_rng(0)
    x = _data(rng, 300, 0.0)
    model = HistGradientBoostingClassifier(max_iter=3, random_state=0).fit(x, x[:, 0] > 0)
    trees = TreeEnsemble.from_sklearn(model)
    arrays = {k: getattr(trees, k) for k in ("feature", "threshold", "missing_left", "left",
                                             "right", "is_leaf", "value", "tree_starts")}
    arrays["left"] = np.zeros_like(arrays["left"])  # every left child points to the root
    np.savez(tmp_path / "loop.npz", baseline=0.0, n_features=6, format=1, **arrays)
    with pytest.raises(ArtifactError, match="valid trees"):
        TreeEnsemble.load(tmp_path / "loop.npz")
    np.savez(tmp_path / "obj.npz", format=np.array([object()], dtype=object))
    with pytest.raises(ArtifactError, match="not a trees file"):
        TreeEnsemble.load(tmp_path / "obj.npz")
    np.savez(tmp_path / "old.npz", format=99)
    with pytest.raises(ArtifactError, match="format 99"):
        TreeEnsemble.load(tmp_path / "old.npz")


def test_compiled_and_numpy_walks_agree(monkeypatch):
    rng = np.random.default_rng(5)
    x = _data(rng, 1500, 0.1)
    model = HistGradientBoostingClassifier(max_iter=25, max_leaf_nodes=31, random_state=0)
    model.fit(x, np.nan_to_num(x[:, 0]) * np.nan_to_num(x[:, 2]) > 0.1)
    trees = TreeEnsemble.from_sklearn(model)
    test = _data(rng, 2500, 0.2)
    assert trees._compiled is not None  # scikit-learn's walker is what this version uses
    compiled = trees.raw_predict(test)
    walked = trees._numpy_predict(test, np.full(len(test), trees.baseline))
    assert np.array_equal(compiled, walked)
    # without scikit-learn's internals the numpy walk answers the same
    fallback = TreeEnsemble.from_sklearn(model)
    monkeypatch.setitem(fallback.__dict__, "_compiled", None)
    assert np.array_equal(fallback.raw_predict(test), compiled)


def test_load_refuses_a_child_in_another_tree(tmp_path):
    rng = np.random.default_rng(0)
    x = _data(rng, 300, 0.0)
    model = HistGradientBoostingClassifier(max_iter=3, random_state=0).fit(x, x[:, 0] > 0)
    trees = TreeEnsemble.from_sklearn(model)
    arrays = {k: getattr(trees, k).copy() for k in ("feature", "threshold", "missing_left",
                                                    "left", "right", "is_leaf", "value",
                                                    "tree_starts")}
    # the first tree's root sends its right branch into the last tree: still after the
    # parent, but a walk of the first tree would leave its nodes
    arrays["right"][0] = len(arrays["feature"]) - 1
    np.savez(tmp_path / "cross.npz", baseline=0.0, n_features=6, format=1, **arrays)
    with pytest.raises(ArtifactError, match="valid trees"):
        TreeEnsemble.load(tmp_path / "cross.npz")
    arrays = {k: getattr(trees, k) for k in arrays}
    np.savez(tmp_path / "starts.npz", baseline=0.0, n_features=6, format=1,
             **{**arrays, "tree_starts": arrays["tree_starts"][::-1]})
    with pytest.raises(ArtifactError, match="valid trees"):
        TreeEnsemble.load(tmp_path / "starts.npz")


def test_average_is_the_mean_of_the_raw_scores(tmp_path):
    rng = np.random.default_rng(7)
    x = _data(rng, 1200, 0.1)
    y = np.nan_to_num(x[:, 0]) - np.nan_to_num(x[:, 3]) > 0.3
    models = [TreeEnsemble.from_sklearn(HistGradientBoostingClassifier(
        max_iter=n, max_leaf_nodes=7, random_state=0).fit(x, y)) for n in (5, 12, 9)]
    mean = TreeEnsemble.average(models)
    test = _data(rng, 800, 0.2)
    expected = np.mean([m.raw_predict(test) for m in models], axis=0)
    np.testing.assert_allclose(mean.raw_predict(test), expected, rtol=0, atol=1e-12)
    mean.save(tmp_path / "mean.npz")  # the joined arrays still form valid trees
    np.testing.assert_array_equal(TreeEnsemble.load(tmp_path / "mean.npz").raw_predict(test),
                                  mean.raw_predict(test))
    assert TreeEnsemble.average(models[:1]) is models[0]
    with pytest.raises(ValueError, match="no ensembles"):
        TreeEnsemble.average([])
    other = TreeEnsemble.from_sklearn(HistGradientBoostingClassifier(max_iter=2).fit(x[:, :3], y))
    with pytest.raises(ValueError, match="feature counts"):
        TreeEnsemble.average([models[0], other])
