"""``xlnel.gbdt.v1``: a gradient-boosted classifier on match features (the MDTEL-style filter).

It trains in seconds on a CPU, so it serves the embedded default and fast sweeps. Priors are
learnt out of fold on the training documents; the decision threshold is chosen on out-of-fold
predictions too, never on scores of documents the model was fitted on.

Option ``provenance`` (off by default; on in the pipelines over a built dictionary) adds the
source and builder score of each candidate's dictionary entry to the features
(:data:`~xlnel.filtering.entry_features.PROVENANCE_FEATURES`), so generated names are told from
knowledge-base and annotation names; option ``concepts`` adds what the training documents say
about the candidate's concept (:data:`~xlnel.filtering.entry_features.CONCEPT_FEATURES`); option
``name_prior`` (``all`` or ``best``) says which candidates a name's prior counts (see
:mod:`xlnel.filtering.features`); option ``lexical`` adds the priors of the span's last word and
ending and whether the document defines it as an abbreviation
(:data:`~xlnel.filtering.lexical_features.LEXICAL_FEATURES`); option ``ngrams`` adds the mention
and name priors predicted from character n-grams, for texts the training documents never
showed (:mod:`xlnel.filtering.ngram_priors`, saved as ``ngram_priors.npz``); option ``kinds``
adds whether the candidate's name stands for a concept of a kind the training documents
annotate (:mod:`xlnel.filtering.concept_kinds`, saved as ``kind_prior.npz``); option ``edits``
adds the prior of the edit between the span and its name (:mod:`xlnel.filtering.edit_features`);
option ``tagger`` adds the marginals of a CRF that tags the document's words as mention
beginnings, insides and outsides (:mod:`xlnel.filtering.span_tagger`, saved as
``span_tagger.crfsuite``). The saved ``filter.json`` lists the features; a filter saved without
an option loads with it off.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from xlnel.config import FilterConfig
from xlnel.errors import ArtifactError
from xlnel.filtering._trees import TreeEnsemble
from xlnel.filtering.base import CandidateFilter, register_filter
from xlnel.filtering.encoder_features import EmbeddingStore, EncoderFeatures
from xlnel.filtering.features import FeatureExtractor, Priors, count_priors
from xlnel.filtering.gbdt_options import parse_options
from xlnel.filtering.labels import label_candidates
from xlnel.filtering.ngram_priors import load_ngram_priors, save_ngram_priors
from xlnel.filtering.span_tagger import TAGGER_FEATURES, SpanTagger
from xlnel.linkers.decide import choose_threshold
from xlnel.stopwords import load_stopwords
from xlnel.types import Candidate, Document
from xlnel.version import __version__

logger = logging.getLogger(__name__)

_TREES = "trees.npz"
_PCA = "encoder_pca.npz"
_ENCODER = "encoder"  # a copy of a local encoder folder
_NGRAMS = "ngram_priors.npz"
_KINDS = "kind_prior.npz"
_TAGGER = "span_tagger.crfsuite"

#: Options a saved filter may not list, with the value its features were computed with.
_ABSENT = {"provenance": False, "concepts": False, "name_prior": "all", "lexical": False,
           "ngrams": False, "kinds": False, "tagger": False, "edits": False}
def _span_tops(candidates: Sequence[Candidate]) -> tuple[np.ndarray, np.ndarray]:
    """Index of each span's best-matching candidate, and for every candidate the position of
    its span's best candidate among those indices."""
    best: dict[tuple[int, int], int] = {}
    for i, c in enumerate(candidates):
        key = (c.span.start, c.span.end)
        j = best.get(key)
        if j is None or c.score > candidates[j].score:
            best[key] = i
    tops = np.fromiter(best.values(), dtype=np.int64, count=len(best))
    where = {key: k for k, key in enumerate(best)}
    owner = np.fromiter((where[(c.span.start, c.span.end)] for c in candidates),
                        dtype=np.int64, count=len(candidates))
    return tops, owner


@register_filter
class GradientBoostingFilter(CandidateFilter):
    """Histogram gradient boosting on string, shape, context and prior features."""

    registered_name = "xlnel.gbdt.v1"

    def __init__(self, config: FilterConfig, lang: str) -> None:
        super().__init__(config, lang)
        self.options = parse_options(config.options, self.registered_name)
        # At span level every name proposed at a gold span is a positive, fuzzy misses too; one
        # row per span (its best-matching name) gives the classifier clean labels.
        self.per_span = (self.options["unit"] == "span" or
                         (self.options["unit"] == "auto" and config.select_level == "span"))
        self.extractor = FeatureExtractor(lang, load_stopwords(lang), int(self.options["window"]),
                                          bool(self.options["extended"]),
                                          bool(self.options["provenance"]),
                                          bool(self.options["concepts"]),
                                          str(self.options["name_prior"]),
                                          bool(self.options["lexical"]),
                                          bool(self.options["ngrams"]),
                                          bool(self.options["kinds"]),
                                          bool(self.options["edits"]))
        #: Frozen-encoder columns (option ``encoder``: a model name, hub id or folder).
        self.encoder_features: EncoderFeatures | None = None
        if self.options["encoder"]:
            self.encoder_features = EncoderFeatures(
                EmbeddingStore(str(self.options["encoder"])), int(self.options["encoder_pca"]),
                int(self.options["encoder_context_words"]))
        #: The CRF of option ``tagger`` fitted on all training documents (set by :meth:`fit`).
        self.span_tagger: SpanTagger | None = None
        self.priors = Priors()
        #: The fitted trees, as plain arrays (saved without pickle, see :mod:`._trees`).
        self.model: TreeEnsemble | None = None
        #: Out-of-fold scores of the training candidates (set by :meth:`fit`): each document
        #: scored by a model that did not see it, as a cascade's next stage needs them.
        self.oof_scores: list[np.ndarray] = []
        #: The fold of each training document under which :attr:`oof_scores` were computed.
        self.oof_folds: list[int] = []

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Names of the feature columns: the extractor's, the encoder's, then the tagger's."""
        extra = self.encoder_features.feature_names if self.encoder_features else ()
        tagger = TAGGER_FEATURES if self.options["tagger"] else ()
        return self.extractor.feature_names + extra + tagger

    def _features(self, document: Document, candidates: Sequence[Candidate],
                  priors: Priors, tagger: SpanTagger | None = None,
                  tagger_attributes: Any = None) -> np.ndarray:
        """Feature rows of a document's candidates; ``tagger`` (option ``tagger``) defaults
        to the one fitted on all training documents, ``tagger_attributes`` are the document's
        :meth:`SpanTagger.attributes` when already computed."""
        parts = [self.extractor.transform(document, candidates, priors)]
        if self.encoder_features is not None:
            parts.append(self.encoder_features.transform(document, candidates))
        if self.options["tagger"]:
            tagger = tagger or self.span_tagger
            if tagger is None:
                raise RuntimeError("the filter's span tagger is not fitted")
            parts.append(tagger.columns(document, candidates, tagger_attributes))
        return parts[0] if len(parts) == 1 else np.hstack(parts)

    def _fit_trees(self, x: np.ndarray, y: np.ndarray) -> TreeEnsemble:
        """Trees fitted on rows ``x`` with labels ``y``.

        With option ``bag`` n, the average (of log-odds) of n models seeded ``seed`` to
        ``seed + n - 1``; with option ``negatives`` s < 1, each model is fitted on every
        positive row and a share s of the negative rows, drawn by its seed, each weighing 1/s
        (so the models see the classes in their proportions, and differ in their negatives).
        """
        o = self.options
        share = float(o["negatives"])
        models = []
        for i in range(int(o["bag"])):
            seed = int(o["seed"]) + i
            rows, weight = np.arange(len(y)), None
            if share < 1.0:
                negative = ~y.astype(bool)
                keep = ~negative | (np.random.default_rng(seed).random(len(y)) < share)
                if negative.any() and not keep[negative].any():
                    keep[np.flatnonzero(negative)[0]] = True  # a draw without one: both classes
                rows = np.flatnonzero(keep)
                weight = np.where(y[rows], 1.0, 1.0 / share)
            model = HistGradientBoostingClassifier(
                max_iter=int(o["max_iter"]), learning_rate=float(o["learning_rate"]),
                max_leaf_nodes=int(o["max_leaf_nodes"]),
                l2_regularization=float(o["l2_regularization"]), random_state=seed)
            models.append(TreeEnsemble.from_sklearn(model.fit(x[rows], y[rows],
                                                              sample_weight=weight)))
        return TreeEnsemble.average(models)

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
        if self.encoder_features is not None:
            self.encoder_features.fit(documents, candidates)
        folds = min(int(self.options["folds"]), len(documents))
        fold_of = np.arange(len(documents)) % folds
        # the CRF's word attributes depend on a document and its candidates only: computed
        # once for every fold's tagger, the final one and the out-of-fold columns
        attributes = (SpanTagger.attributes(documents, candidates) if self.options["tagger"]
                      else [None] * len(documents))
        oof_x = self._out_of_fold_features(documents, candidates, labels, fold_of, attributes)
        oof_scores = self._cross_val_scores(oof_x, labels, candidates, fold_of)
        self.oof_scores = oof_scores
        self.oof_folds = [int(f) for f in fold_of]
        if self.config.threshold is None:
            self.threshold, f1 = choose_threshold(documents, candidates, oof_scores, level)
            logger.info("filter threshold %.3f (out-of-fold %s F1 %.4f)", self.threshold,
                        level, f1)
        self.priors = count_priors(self.extractor, documents, candidates, labels)
        if self.options["tagger"]:
            self.span_tagger = SpanTagger().fit(documents, candidates, attributes)
        xs, ys = self._rows(oof_x, labels, candidates)
        # Scored from here on by the same code as after loading, so fit and load agree.
        self.model = self._fit_trees(np.concatenate(xs), np.concatenate(ys))
        return self

    def _rows(self, xs: Sequence[np.ndarray], labels: Sequence[np.ndarray],
              candidates: Sequence[Sequence[Candidate]]
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Training rows: all candidates, or each span's best-matching one."""
        if not self.per_span:
            return list(xs), list(labels)
        tops = [_span_tops(c)[0] for c in candidates]
        return [x[t] for x, t in zip(xs, tops, strict=True)], \
            [y[t] for y, t in zip(labels, tops, strict=True)]

    def _predict(self, model: TreeEnsemble, x: np.ndarray,
                 candidates: Sequence[Candidate]) -> np.ndarray:
        """Per-candidate scores; per span, every candidate gets its span's score."""
        if not self.per_span or len(candidates) == 0:
            return _positive_proba(model, x)
        tops, owner = _span_tops(candidates)
        return _positive_proba(model, x[tops])[owner]

    def _out_of_fold_features(self, documents: Sequence[Document],
                              candidates: Sequence[Sequence[Candidate]],
                              labels: list[np.ndarray], fold_of: np.ndarray,
                              attributes: Sequence[Any]) -> list[np.ndarray]:
        """Each document's feature rows from the priors and tagger of the other folds
        (``attributes``: the documents' :meth:`SpanTagger.attributes`, ``None`` each without
        option ``tagger``)."""
        xs: list[np.ndarray] = [np.zeros((0, len(self.feature_names)))] * len(documents)
        for f in np.unique(fold_of):
            inside = [int(i) for i in np.flatnonzero(fold_of == f)]
            outside = [int(i) for i in np.flatnonzero(fold_of != f)]
            other_docs = [documents[i] for i in outside]
            other_cands = [candidates[i] for i in outside]
            priors = count_priors(self.extractor, other_docs, other_cands,
                                  [labels[i] for i in outside])
            # The tagger of a fold, like its priors, never saw the fold's documents; a fold
            # whose other documents hold no entity gets zero tagger features.
            tagger = None
            if self.options["tagger"]:
                tagger = (SpanTagger().fit(other_docs, other_cands,
                                           [attributes[i] for i in outside])
                          if any(d.entities for d in other_docs) else SpanTagger.blank())
            for i in inside:
                xs[i] = self._features(documents[i], candidates[i], priors, tagger,
                                       attributes[i])
        return xs

    def _cross_val_scores(self, xs: list[np.ndarray], labels: list[np.ndarray],
                          candidates: Sequence[Sequence[Candidate]],
                          fold_of: np.ndarray) -> list[np.ndarray]:
        scores: list[np.ndarray] = [np.zeros(0)] * len(xs)
        rows_x, rows_y = self._rows(xs, labels, candidates)
        for f in np.unique(fold_of):
            train = np.flatnonzero(fold_of != f)
            y = np.concatenate([rows_y[i] for i in train] or [np.zeros(0, dtype=bool)])
            held_out = [int(i) for i in np.flatnonzero(fold_of == f)]
            if len(train) == 0 or y.all() or not y.any():
                for k in held_out:
                    scores[k] = np.full(len(labels[k]), float(y.mean()) if y.size else 0.0)
                continue
            model = self._fit_trees(np.concatenate([rows_x[i] for i in train]), y)
            for k in held_out:
                scores[k] = self._predict(model, xs[k], candidates[k])
        return scores

    def score_batch(self, documents: Sequence[Document],
                    candidates: Sequence[Sequence[Candidate]],
                    progress: bool = False) -> list[np.ndarray]:
        """Probability that each candidate is a real mention of its concept."""
        if self.model is None:
            raise RuntimeError("the filter is not fitted; train a pipeline first")
        model = self.model
        if self.encoder_features is not None:
            self.encoder_features.prepare(documents, candidates)
        return [self._predict(model, self._features(d, c, self.priors), c)
                for d, c in zip(documents, candidates, strict=True)]

    def save(self, directory: Path) -> None:
        """Write the trees (``trees.npz``, plain arrays), priors (JSON) and threshold, and a
        copy of an encoder read from a local folder (``encoder/``, safetensors)."""
        if self.model is None:
            raise RuntimeError("cannot save an unfitted filter")
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save(directory / _TREES)
        (directory / "priors.json").write_text(
            json.dumps(self.priors.tables(), ensure_ascii=False), encoding="utf-8")
        if self.encoder_features is not None:
            self.encoder_features.save(directory / _PCA)
            if (directory / _ENCODER).is_dir() and not self._reads_copy(directory):
                shutil.rmtree(directory / _ENCODER)
            self.encoder_features.store.save_encoder(directory / _ENCODER)
        if self.extractor.ngrams:
            save_ngram_priors(self.extractor.ngram_models(self.priors), directory / _NGRAMS)
        if self.extractor.kinds:
            save_ngram_priors([self.extractor.kind_model(self.priors)], directory / _KINDS)
        if self.span_tagger is not None:
            self.span_tagger.save(directory / _TAGGER)
        meta = {"xlnel_version": __version__, "filter": self.registered_name,
                "threshold": self.threshold, "options": self.options,
                "features": list(self.feature_names)}
        (directory / "filter.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

    def _reads_copy(self, directory: Path) -> bool:
        """Whether the encoder features read the encoder copy saved in ``directory``."""
        assert self.encoder_features is not None
        model = Path(self.encoder_features.store.model)
        return model.is_dir() and model.resolve() == (directory / _ENCODER).resolve()

    @classmethod
    def load(cls, directory: Path, config: FilterConfig, lang: str) -> GradientBoostingFilter:
        """Read a filter written by :meth:`save`.

        Never unpickles: a ``model.joblib`` (a pickled scikit-learn model) is refused, not
        read, since unpickling a file can run any code.

        Raises:
            ArtifactError: If a file is missing, the filter is a pickled model, or the features
                differ from this version's.
        """
        if (directory / "model.joblib").exists() and not (directory / _TREES).is_file():
            raise ArtifactError(
                f"the filter in {directory} is a pickled model.joblib, which xlnel does not "
                "load (unpickling a file can run any code); retrain the pipeline with this "
                "xlnel version")
        for name in (_TREES, "priors.json", "filter.json"):
            if not (directory / name).is_file():
                raise ArtifactError(f"saved filter in {directory} lacks {name}")
        meta = json.loads((directory / "filter.json").read_text(encoding="utf-8"))
        f = cls(_with_absent_options(config, meta.get("options", {})), lang)
        if meta.get("features") != list(f.feature_names):
            raise ArtifactError(f"filter in {directory} was trained with other features "
                                f"(xlnel {meta.get('xlnel_version')}); retrain it")
        f.model = TreeEnsemble.load(directory / _TREES)
        if f.model.n_features != len(f.feature_names):
            raise ArtifactError(f"{directory / _TREES} expects {f.model.n_features} features, "
                                f"not {len(f.feature_names)}; retrain it")
        if f.encoder_features is not None:
            f.encoder_features.load(directory / _PCA)
            if (directory / _ENCODER).is_dir():
                f.encoder_features.store = EmbeddingStore(str(directory / _ENCODER),
                                                          safetensors_only=True)
        raw = json.loads((directory / "priors.json").read_text(encoding="utf-8"))
        f.priors = Priors.from_tables(raw)
        if f.extractor.ngrams:
            f.extractor.set_ngram_models(f.priors, load_ngram_priors(directory / _NGRAMS))
        if f.extractor.kinds:
            f.extractor.set_kind_model(f.priors, load_ngram_priors(directory / _KINDS, 1,
                                                                   "kinds")[0])
        if f.options["tagger"]:
            f.span_tagger = SpanTagger.load(directory / _TAGGER)
        f.threshold = meta["threshold"] if config.threshold is None else config.threshold
        return f


def _with_absent_options(config: FilterConfig, saved: dict[str, Any]) -> FilterConfig:
    """``config`` with the value each option in :data:`_ABSENT` had for a filter whose saved
    options lack it (unless ``config`` sets it), so its feature columns are rebuilt."""
    absent = {k: v for k, v in _ABSENT.items() if k not in saved and k not in config.options}
    if not absent:
        return config
    return config.model_copy(update={"options": {**config.options, **absent}})


def _positive_proba(model: TreeEnsemble, x: np.ndarray) -> np.ndarray:
    return model.predict_positive(x) if len(x) else np.zeros(0)
