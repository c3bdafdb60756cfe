"""A fitted histogram gradient-boosting classifier as plain arrays, with its own predict.

scikit-learn models are saved with pickle (joblib), and unpickling a file runs whatever code the
file names: a pipeline folder from someone else could run a shell command on ``xlnel link``.
:class:`TreeEnsemble` keeps only what prediction needs — per node the feature, threshold,
missing-value direction, children and leaf value, and the baseline — in an ``.npz`` file read
with ``allow_pickle=False``, and predicts with numpy exactly as
:meth:`sklearn.ensemble.HistGradientBoostingClassifier.predict_proba` does (same comparisons,
same order of the float64 additions, the same logistic function). The binning of the features
is not needed: scikit-learn keeps each split's threshold in feature units as well
(``num_threshold``), and that is what it compares raw feature values with when predicting.
Categorical splits are not supported (the filter's features are all numeric).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from xlnel.errors import ArtifactError
from xlnel.io._atomic import atomic_path

__all__ = ["TREES_FORMAT", "TreeEnsemble"]

#: Written into the ``.npz`` file; a file of another format is refused.
TREES_FORMAT = 1

_INT_FIELDS = ("feature", "left", "right", "tree_starts")
_BOOL_FIELDS = ("missing_left", "is_leaf")
_FLOAT_FIELDS = ("threshold", "value")


@dataclass(frozen=True)
class TreeEnsemble:
    """Binary-classification trees: node arrays of all trees, end to end.

    Attributes:
        feature: Feature index tested at each node.
        threshold: A value ``<= threshold`` goes left.
        missing_left: A missing value (NaN) goes left.
        left: Index (into these arrays) of the left child.
        right: Index of the right child.
        is_leaf: The node is a leaf.
        value: The leaf's raw value.
        tree_starts: Index of each tree's root, in boosting order.
        baseline: Raw prediction before the first tree.
        n_features: Columns the trees expect.
    """

    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    is_leaf: np.ndarray
    value: np.ndarray
    tree_starts: np.ndarray
    baseline: float
    n_features: int

    @classmethod
    def from_sklearn(cls, model: Any) -> TreeEnsemble:
        """The trees of a fitted binary ``HistGradientBoostingClassifier`` on numeric features.

        Raises:
            ValueError: For more than two classes or categorical splits.
        """
        if model.n_trees_per_iteration_ != 1:
            raise ValueError("only binary classifiers can be exported as trees")
        nodes = [predictors[0].nodes for predictors in model._predictors]
        if any(n["is_categorical"].any() for n in nodes):
            raise ValueError("categorical splits cannot be exported as trees")
        sizes = np.array([len(n) for n in nodes], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        offset = np.repeat(starts, sizes)
        if not nodes:
            raise ValueError("the classifier has no trees")
        allnodes = np.concatenate(nodes)
        return cls(
            feature=allnodes["feature_idx"].astype(np.int64),
            threshold=allnodes["num_threshold"].astype(np.float64),
            missing_left=allnodes["missing_go_to_left"].astype(bool),
            left=allnodes["left"].astype(np.int64) + offset,
            right=allnodes["right"].astype(np.int64) + offset,
            is_leaf=allnodes["is_leaf"].astype(bool),
            value=allnodes["value"].astype(np.float64),
            tree_starts=starts,
            baseline=float(np.asarray(model._baseline_prediction).ravel()[0]),
            n_features=int(model.n_features_in_),
        )

    def raw_predict(self, x: np.ndarray) -> np.ndarray:
        """Raw scores (log-odds) of the rows of ``x``.

        Raises:
            ValueError: When ``x`` does not have :attr:`n_features` columns.
        """
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(f"expected rows of {self.n_features} features, got shape {x.shape}")
        n = x.shape[0]
        raw = np.full(n, self.baseline, dtype=np.float64)
        if n == 0 or len(self.tree_starts) == 0:
            return raw
        rows = np.arange(n)[:, None]
        node = np.broadcast_to(self.tree_starts, (n, len(self.tree_starts))).copy()
        while True:
            inner = ~self.is_leaf[node]
            if not inner.any():
                break
            values = x[rows, self.feature[node]]
            go_left = np.where(np.isnan(values), self.missing_left[node],
                               values <= self.threshold[node])
            node = np.where(inner, np.where(go_left, self.left[node], self.right[node]), node)
        leaf_values = self.value[node]
        for t in range(leaf_values.shape[1]):  # tree by tree, as scikit-learn adds them
            raw += leaf_values[:, t]
        return raw

    def predict_positive(self, x: np.ndarray) -> np.ndarray:
        """Probability of the positive class for each row of ``x``."""
        return np.asarray(expit(self.raw_predict(x)), dtype=np.float64)

    def save(self, path: Path) -> None:
        """Write the arrays to ``path`` (``.npz``, no pickled objects), atomically."""
        arrays = {name: getattr(self, name) for name in (*_INT_FIELDS, *_BOOL_FIELDS,
                                                         *_FLOAT_FIELDS)}
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez(f, baseline=np.float64(self.baseline), n_features=np.int64(self.n_features),
                     format=np.int64(TREES_FORMAT), **arrays)

    @classmethod
    def load(cls, path: Path) -> TreeEnsemble:
        """Read trees written by :meth:`save`, checking that they form valid trees.

        Raises:
            ArtifactError: If the file is missing, of another format, or its arrays are not
                well-formed trees (a child index out of range or not after its parent).
        """
        if not path.is_file():
            raise ArtifactError(f"no trees file {path}")
        try:
            with np.load(path, allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        except (ValueError, OSError) as e:
            raise ArtifactError(f"{path} is not a trees file: {e}") from None
        found = int(data.get("format", -1))
        if found != TREES_FORMAT:
            raise ArtifactError(f"{path} holds trees of format {found}; this xlnel reads format "
                                f"{TREES_FORMAT}: retrain the pipeline")
        try:
            trees = cls(**{k: data[k].astype(np.int64) for k in _INT_FIELDS},
                        **{k: data[k].astype(bool) for k in _BOOL_FIELDS},
                        **{k: data[k].astype(np.float64) for k in _FLOAT_FIELDS},
                        baseline=float(data["baseline"]), n_features=int(data["n_features"]))
        except KeyError as e:
            raise ArtifactError(f"{path} lacks the array {e}") from None
        trees._check(path)
        return trees

    def _check(self, path: Path) -> None:
        n = len(self.feature)
        arrays = (self.threshold, self.missing_left, self.left, self.right, self.is_leaf,
                  self.value)
        if any(a.ndim != 1 or len(a) != n for a in (self.feature, *arrays)):
            raise ArtifactError(f"{path}: node arrays differ in length")
        inner = np.flatnonzero(~self.is_leaf)
        index = np.arange(n)
        # Children after their parent: every walk down a tree ends at a leaf.
        bad = ((self.left[inner] <= index[inner]) | (self.right[inner] <= index[inner])
               | (self.left[inner] >= n) | (self.right[inner] >= n)
               | (self.feature[inner] < 0) | (self.feature[inner] >= self.n_features))
        starts_ok = bool(np.all((self.tree_starts >= 0) & (self.tree_starts < n)))
        if bad.any() or not starts_ok or self.tree_starts.ndim != 1:
            raise ArtifactError(f"{path}: the node arrays do not form valid trees")

