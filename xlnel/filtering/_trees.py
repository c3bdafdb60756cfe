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

Prediction hands each tree's checked arrays to scikit-learn's compiled tree walker (the one
``predict_proba`` runs); where a scikit-learn version lacks that internal interface, a numpy walk
gives the same values, several times slower.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from xlnel.errors import ArtifactError
from xlnel.io._atomic import atomic_path

__all__ = ["TREES_FORMAT", "TreeEnsemble"]

logger = logging.getLogger(__name__)

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

    @classmethod
    def average(cls, ensembles: Sequence[TreeEnsemble]) -> TreeEnsemble:
        """One ensemble whose raw score is the mean of the raw scores (log-odds) of
        ``ensembles``: their trees end to end, each leaf value divided by their number.

        Raises:
            ValueError: If ``ensembles`` is empty or they expect different numbers of features.
        """
        if not ensembles:
            raise ValueError("no ensembles to average")
        if len({e.n_features for e in ensembles}) != 1:
            raise ValueError("cannot average ensembles of different feature counts")
        if len(ensembles) == 1:
            return ensembles[0]
        n = len(ensembles)
        offsets = np.cumsum([0] + [len(e.feature) for e in ensembles[:-1]]).tolist()

        def joined(name: str, shift: bool = False) -> np.ndarray:
            return np.concatenate([getattr(e, name) + (o if shift else 0)
                                   for e, o in zip(ensembles, offsets, strict=True)])

        return cls(feature=joined("feature"), threshold=joined("threshold"),
                   missing_left=joined("missing_left"), left=joined("left", True),
                   right=joined("right", True), is_leaf=joined("is_leaf"),
                   value=joined("value") / n, tree_starts=joined("tree_starts", True),
                   baseline=float(np.mean([e.baseline for e in ensembles])),
                   n_features=ensembles[0].n_features)

    def raw_predict(self, x: np.ndarray) -> np.ndarray:
        """Raw scores (log-odds) of the rows of ``x``.

        Raises:
            ValueError: When ``x`` does not have :attr:`n_features` columns.
        """
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(f"expected rows of {self.n_features} features, got shape {x.shape}")
        n = x.shape[0]
        raw = np.full(n, self.baseline, dtype=np.float64)
        if n == 0 or len(self.tree_starts) == 0:
            return raw
        walkers = self._compiled
        if walkers is not None:
            predictors, no_categories, feature_map, threads = walkers
            n_threads = threads()  # as scikit-learn: OpenMP's limit now (xlnel threads)
            for predictor in predictors:  # tree by tree, as scikit-learn adds them
                raw += predictor.predict(x, no_categories, feature_map, n_threads)
            return raw
        return self._numpy_predict(x, raw)

    def _numpy_predict(self, x: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """:meth:`raw_predict` by numpy: all (row, tree) walks a level at a time, those that
        reached a leaf dropped."""
        n, trees = x.shape[0], len(self.tree_starts)
        node = np.tile(self.tree_starts, n)  # row-major: (row i, tree t) at i * trees + t
        rows = np.repeat(np.arange(n), trees)
        active = np.flatnonzero(~self.is_leaf[node])
        while active.size:
            at = node[active]
            values = x[rows[active], self.feature[at]]
            go_left = np.where(np.isnan(values), self.missing_left[at],
                               values <= self.threshold[at])
            node[active] = nxt = np.where(go_left, self.left[at], self.right[at])
            active = active[~self.is_leaf[nxt]]
        leaf_values = self.value[node].reshape(n, trees)
        for t in range(trees):  # tree by tree, as scikit-learn adds them
            raw += leaf_values[:, t]
        return raw

    @cached_property
    def _compiled(self) -> tuple[list[Any], np.ndarray, np.ndarray, Callable[[], int]] | None:
        """scikit-learn's tree predictors built from the (checked) node arrays, with the
        arguments of their ``predict`` (the thread count as a function: it is read at each
        call); ``None`` where its internals differ."""
        try:
            from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE
            from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
            from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

            ends = [*self.tree_starts[1:].tolist(), len(self.feature)]
            no_bitsets = np.zeros((0, 8), dtype=np.uint32)
            predictors = []
            for start, end in zip(self.tree_starts.tolist(), ends, strict=True):
                part = slice(start, end)
                leaf = self.is_leaf[part]
                nodes = np.zeros(end - start, dtype=PREDICTOR_RECORD_DTYPE)
                nodes["value"] = self.value[part]
                nodes["feature_idx"] = np.where(leaf, 0, self.feature[part])
                nodes["num_threshold"] = self.threshold[part]
                nodes["missing_go_to_left"] = self.missing_left[part]
                # children as indices within the tree (load checked they lie inside it)
                nodes["left"] = np.where(leaf, 0, self.left[part] - start)
                nodes["right"] = np.where(leaf, 0, self.right[part] - start)
                nodes["is_leaf"] = leaf
                predictors.append(TreePredictor(nodes, no_bitsets, no_bitsets))
            return (predictors, no_bitsets, np.zeros(self.n_features, dtype=np.uint32),
                    _openmp_effective_n_threads)
        except (ImportError, AttributeError, TypeError, ValueError) as e:
            logger.debug("scikit-learn's tree predictor is unavailable (%s); numpy walk", e)
            return None

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
        starts = self.tree_starts
        # Trees end to end from node 0, each non-empty: every node belongs to one tree.
        starts_ok = (starts.ndim == 1 and len(starts) > 0 and int(starts[0]) == 0
                     and bool(np.all(np.diff(starts) > 0)) and int(starts[-1]) < n)
        if not starts_ok:
            raise ArtifactError(f"{path}: the node arrays do not form valid trees")
        inner = np.flatnonzero(~self.is_leaf)
        # the end of the tree holding each inner node
        end = np.append(starts[1:], n)[np.searchsorted(starts, inner, side="right") - 1]
        # Children after their parent and inside its tree: every walk down a tree ends at one
        # of its leaves (the compiled walker reads a tree's nodes without bounds checks).
        bad = ((self.left[inner] <= inner) | (self.right[inner] <= inner)
               | (self.left[inner] >= end) | (self.right[inner] >= end)
               | (self.feature[inner] < 0) | (self.feature[inner] >= self.n_features))
        if bad.any():
            raise ArtifactError(f"{path}: the node arrays do not form valid trees")

