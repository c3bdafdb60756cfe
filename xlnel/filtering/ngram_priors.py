"""Priors that generalise to unseen texts through their character n-grams (option ``ngrams``).

The mention and name priors of :mod:`xlnel.filtering.features` are counts per exact text: a
span or a knowledge-base name the training documents never showed has none. Yet its letters
often tell what kind of thing it is: "thiopental" looks like the drugs the annotators linked,
"drowsiness" like the symptoms, "patients" or "rats" like the everyday words they never link,
although none of the three occurred in training. :class:`NgramPrior` learns that from a prior
table: a logistic regression on hashed character n-grams of each text, fitted to the share of
its occurrences that were gold (each text weighs one, however often it occurred, so frequent
words do not drown the rare terms). :data:`NGRAM_FEATURES` are its predictions for the span's
text (fitted on the mention table) and for the candidate's name (fitted on the name table).

The model is a hashing vectoriser, which has no state, and one weight vector, saved as plain
arrays beside the filter's priors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression

from xlnel.errors import ArtifactError

#: The columns, in order: the span text's and the candidate name's n-gram prior.
NGRAM_FEATURES = ("mention_ngram", "name_ngram")
#: The prior tables the two models are fitted on, in the order of :data:`NGRAM_FEATURES`.
NGRAM_TABLES = ("mention", "name")
#: Hashed feature space: large enough that the n-grams of a few hundred thousand short texts
#: rarely collide, small enough to save as a 1 MiB vector.
N_FEATURES = 2 ** 18
#: Character n-gram lengths, within word boundaries (so any script works).
NGRAM_RANGE = (2, 5)
#: Inverse regularisation strength of the logistic regression.
C = 1.0


def _vectorizer() -> HashingVectorizer:
    return HashingVectorizer(analyzer="char_wb", ngram_range=NGRAM_RANGE,
                             n_features=N_FEATURES, alternate_sign=False, norm="l2",
                             lowercase=False)


class NgramPrior:
    """A logistic regression on hashed character n-grams of normalised texts.

    Args:
        coef: One weight per hashed n-gram (length :data:`N_FEATURES`).
        intercept: The bias.

    Raises:
        ValueError: If ``coef`` has another length.
    """

    def __init__(self, coef: np.ndarray, intercept: float) -> None:
        coef = np.asarray(coef, dtype=np.float32).ravel()
        if coef.size != N_FEATURES:
            raise ValueError(f"an n-gram prior has {N_FEATURES} weights, got {coef.size}")
        self.coef = coef
        self.intercept = float(intercept)
        self._vectorizer = _vectorizer()

    @classmethod
    def fit(cls, table: Mapping[str, Sequence[int]]) -> NgramPrior:
        """Fit on a prior table (text -> [positive, seen]): each text is one example whose
        target is its share of positive occurrences (two rows weighted by that share and its
        complement). A table without both kinds gives a constant model at its mean share."""
        texts = [t for t, (_, seen) in table.items() if seen > 0 and t]
        if not texts:
            return cls(np.zeros(N_FEATURES), math.log(0.1 / 1.1) - math.log(1 - 0.1 / 1.1))
        share = np.array([table[t][0] / table[t][1] for t in texts], dtype=np.float64)
        if share.max() <= 0.0 or share.min() >= 1.0:
            mean = min(max(float(share.mean()), 1e-4), 1 - 1e-4)
            return cls(np.zeros(N_FEATURES), math.log(mean / (1 - mean)))
        x = _vectorizer().transform(texts)
        rows = np.concatenate([np.arange(len(texts))] * 2)
        y = np.concatenate([np.ones(len(texts)), np.zeros(len(texts))])
        weight = np.concatenate([share, 1.0 - share])
        keep = weight > 0
        model = LogisticRegression(C=C, max_iter=500)
        model.fit(x[rows[keep]], y[keep], sample_weight=weight[keep])
        return cls(model.coef_.ravel(), float(model.intercept_[0]))

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """The predicted share of gold occurrences of each normalised text."""
        if not len(texts):
            return np.zeros(0)
        logits = self._vectorizer.transform(list(texts)) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))


def save_ngram_priors(models: Sequence[NgramPrior], path: Path) -> None:
    """Write the models (in :data:`NGRAM_TABLES` order, or any models of this class) as plain
    arrays to an ``.npz``."""
    np.savez(path, coef=np.stack([m.coef for m in models]),
             intercept=np.array([m.intercept for m in models]))


def load_ngram_priors(path: Path, count: int = len(NGRAM_TABLES),
                      option: str = "ngrams") -> tuple[NgramPrior, ...]:
    """Read ``count`` models written by :func:`save_ngram_priors` (no pickle is loaded);
    ``option`` names the filter option that needs them, for the error.

    Raises:
        ArtifactError: If the file is missing or its arrays have other shapes.
    """
    if not path.is_file():
        raise ArtifactError(f"saved filter lacks {path.name} (option {option} is on)")
    with np.load(path, allow_pickle=False) as data:
        coef, intercept = data["coef"], data["intercept"]
    if coef.shape != (count, N_FEATURES) or intercept.shape != (count,):
        raise ArtifactError(f"{path} holds n-gram priors of shape {coef.shape}, expected "
                            f"({count}, {N_FEATURES}); retrain the pipeline")
    return tuple(NgramPrior(c, float(b)) for c, b in zip(coef, intercept, strict=True))
