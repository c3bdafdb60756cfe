"""``xlnel.gbdt.v1``: a gradient-boosted classifier on match features (the MDTEL-style filter).

It trains in seconds on a CPU, so it serves the embedded default and fast sweeps. Priors are
learnt out of fold on the training documents; the decision threshold is chosen on out-of-fold
predictions too, never on scores of documents the model was fitted on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import joblib
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from xlnel import __version__
from xlnel.candidates.stopwords import load_stopwords
from xlnel.config import FilterConfig
from xlnel.errors import ArtifactError
from xlnel.filtering.base import CandidateFilter, register_filter
from xlnel.filtering.features import FEATURE_NAMES, FeatureExtractor, Priors, count_priors
from xlnel.filtering.labels import label_candidates
from xlnel.linkers.decide import choose_threshold
from xlnel.types import Candidate, Document

logger = logging.getLogger(__name__)

_DEFAULTS = {"folds": 5, "max_iter": 300, "learning_rate": 0.08, "max_leaf_nodes": 31,
             "l2_regularization": 1.0, "seed": 0}


@register_filter
class GradientBoostingFilter(CandidateFilter):
    """Histogram gradient boosting on string, shape, context and prior features."""

    registered_name = "xlnel.gbdt.v1"

    def __init__(self, config: FilterConfig, lang: str) -> None:
        super().__init__(config, lang)
        unknown = set(config.options) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"unknown option(s) for {self.registered_name}: "
                             f"{', '.join(sorted(unknown))}; allowed: {', '.join(_DEFAULTS)}")
        self.options = {**_DEFAULTS, **config.options}
        self.extractor = FeatureExtractor(lang, load_stopwords(lang))
        self.priors = Priors()
        self.model: HistGradientBoostingClassifier | None = None

    def _new_model(self) -> HistGradientBoostingClassifier:
        o = self.options
        return HistGradientBoostingClassifier(
            max_iter=int(o["max_iter"]), learning_rate=float(o["learning_rate"]),
            max_leaf_nodes=int(o["max_leaf_nodes"]),
            l2_regularization=float(o["l2_regularization"]), random_state=int(o["seed"]))

    def fit(self, documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
            progress: bool = False) -> GradientBoostingFilter:
        """Fit on out-of-fold priors, pick the threshold on out-of-fold scores, refit on all.

        Raises:
            ValueError: If the candidates hold no positive or no negative example.
        """
        level = self.config.select_level
        labels = [label_candidates(d, c, level) for d, c in zip(documents, candidates,
                                                                strict=True)]
        y_all = np.concatenate(labels or [np.zeros(0, dtype=bool)])
        if y_all.sum() == 0 or y_all.sum() == y_all.size:
            raise ValueError(f"cannot train {self.registered_name}: {int(y_all.sum())} positive "
                             f"of {y_all.size} candidates; the filter needs both kinds")
        logger.info("filter training: %d candidates, %d positive (1:%.1f)", y_all.size,
                    int(y_all.sum()), (y_all.size - y_all.sum()) / y_all.sum())
        folds = min(int(self.options["folds"]), len(documents))
        fold_of = np.arange(len(documents)) % folds
        oof_x = self._out_of_fold_features(documents, candidates, labels, fold_of)
        oof_scores = self._cross_val_scores(oof_x, labels, fold_of)
        if self.config.threshold is None:
            self.threshold, f1 = choose_threshold(documents, candidates, oof_scores, level)
            logger.info("filter threshold %.3f (out-of-fold %s F1 %.4f)", self.threshold,
                        level, f1)
        self.priors = count_priors(self.extractor, documents, candidates, labels)
        self.model = self._new_model().fit(np.concatenate(oof_x), y_all)
        return self

    def _out_of_fold_features(self, documents: Sequence[Document],
                              candidates: Sequence[Sequence[Candidate]],
                              labels: list[np.ndarray], fold_of: np.ndarray) -> list[np.ndarray]:
        xs: list[np.ndarray] = [np.zeros((0, len(FEATURE_NAMES)))] * len(documents)
        for f in np.unique(fold_of):
            inside = [int(i) for i in np.flatnonzero(fold_of == f)]
            outside = [int(i) for i in np.flatnonzero(fold_of != f)]
            priors = count_priors(self.extractor, [documents[i] for i in outside],
                                  [candidates[i] for i in outside], [labels[i] for i in outside])
            for i in inside:
                xs[i] = self.extractor.transform(documents[i], candidates[i], priors)
        return xs

    def _cross_val_scores(self, xs: list[np.ndarray], labels: list[np.ndarray],
                          fold_of: np.ndarray) -> list[np.ndarray]:
        scores: list[np.ndarray] = [np.zeros(0)] * len(xs)
        for f in np.unique(fold_of):
            train = np.flatnonzero(fold_of != f)
            y = np.concatenate([labels[i] for i in train])
            if len(train) == 0 or y.all() or not y.any():
                for i in np.flatnonzero(fold_of == f):
                    scores[i] = np.full(len(labels[i]), float(y.mean()) if y.size else 0.0)
                continue
            model = self._new_model().fit(np.concatenate([xs[i] for i in train]), y)
            for i in np.flatnonzero(fold_of == f):
                scores[i] = _positive_proba(model, xs[i])
        return scores

    def score_batch(self, documents: Sequence[Document],
                    candidates: Sequence[Sequence[Candidate]],
                    progress: bool = False) -> list[np.ndarray]:
        """Probability that each candidate is a real mention of its concept."""
        if self.model is None:
            raise RuntimeError("the filter is not fitted; train a pipeline first")
        return [_positive_proba(self.model, self.extractor.transform(d, c, self.priors))
                for d, c in zip(documents, candidates, strict=True)]

    def save(self, directory: Path) -> None:
        """Write the model (joblib), priors (JSON) and threshold."""
        if self.model is None:
            raise RuntimeError("cannot save an unfitted filter")
        directory.mkdir(parents=True, exist_ok=True)
        joblib.dump(self.model, directory / "model.joblib")
        priors = {"mention": self.priors.mention, "name": self.priors.name,
                  "context": self.priors.context}
        (directory / "priors.json").write_text(json.dumps(priors, ensure_ascii=False),
                                               encoding="utf-8")
        meta = {"xlnel_version": __version__, "filter": self.registered_name,
                "threshold": self.threshold, "options": self.options,
                "features": list(FEATURE_NAMES)}
        (directory / "filter.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, config: FilterConfig, lang: str) -> GradientBoostingFilter:
        """Read a filter written by :meth:`save`.

        Raises:
            ArtifactError: If a file is missing or the features differ from this version's.
        """
        for name in ("model.joblib", "priors.json", "filter.json"):
            if not (directory / name).is_file():
                raise ArtifactError(f"saved filter in {directory} lacks {name}")
        meta = json.loads((directory / "filter.json").read_text(encoding="utf-8"))
        if meta.get("features") != list(FEATURE_NAMES):
            raise ArtifactError(f"filter in {directory} was trained with other features "
                                f"(xlnel {meta.get('xlnel_version')}); retrain it")
        f = cls(config, lang)
        f.model = joblib.load(directory / "model.joblib")
        raw = json.loads((directory / "priors.json").read_text(encoding="utf-8"))
        f.priors = Priors(raw["mention"], raw["name"], raw["context"])
        f.threshold = meta["threshold"] if config.threshold is None else config.threshold
        return f


def _positive_proba(model: HistGradientBoostingClassifier, x: np.ndarray) -> np.ndarray:
    if len(x) == 0:
        return np.zeros(0)
    return np.asarray(model.predict_proba(x)[:, 1], dtype=np.float64)
