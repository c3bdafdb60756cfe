"""Out-of-fold predictions for the accuracy benchmarks: k-fold cross-validation by document.

Each fold builds the dictionary, applies DFT to the training folds only, generates candidates of
the filter's documents and of the held-out fold, fits the filter and scores the held-out fold.
Candidates do not depend on the filter, so they are cached per fold (under ``XLNEL_CACHE`` or
``/tmp``) and filter variants only refit and rescore.

Decisions use the config's ``linker.overlap`` with ``linker.propagate`` off: that is the base
the accuracy variants (propagation among them) are measured against.

Camoni communities are cross-validated over all visible posts; BC5CDR trains on ``train`` and is
scored on ``dev`` (one "fold"), as its literature figures are. The documents of the config's
``data.extra_train`` files join every fold's training documents, as in ``xlnel train`` (the
shipped Camoni configs name the other two communities' posts): they are never held out, and
the override ``{"data.extra_train": []}`` trains each fold on its corpus's own documents only.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xlnel.config import PipelineConfig, load_config
from xlnel.dictionary.dft import fine_tune_dictionary
from xlnel.dictionary.dictionary import Dictionary
from xlnel.filtering.base import CandidateFilter, filter_class
from xlnel.io import read_documents, read_jsonl, write_jsonl
from xlnel.io.candidates import read_candidates, read_scores, write_candidates, write_scores
from xlnel.linkers.decide import decide
from xlnel.pipeline import build_dictionary, fit_generator, generate_candidates
from xlnel.training.steps import extra_training_documents
from xlnel.types import Candidate, Document

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {"diabetes": "configs/camoni-diabetes.yaml",
           "sclerosis": "configs/camoni-sclerosis.yaml",
           "depression": "configs/camoni-depression.yaml",
           "bc5cdr": "configs/bc5cdr.yaml"}
FOLDS, SEED = 5, 0


@dataclass
class Fold:
    """One fold's documents and candidates (the dictionary after DFT on its training part)."""

    filter_docs: list[Document]
    filter_cands: list[list[Candidate]]
    test_docs: list[Document]
    test_cands: list[list[Candidate]]
    dft_docs: list[Document]


def corpus_config(corpus: str, overrides: dict[str, Any] | None = None) -> PipelineConfig:
    """The shipped config of ``corpus`` with dotted-key ``overrides``."""
    return load_config(ROOT / CORPORA[corpus], overrides or {})


def fold_documents(corpus: str, overrides: dict[str, Any] | None = None
                   ) -> list[tuple[list[Document], list[Document]]]:
    """(training, held-out) documents of each fold: 5 seeded folds by document for Camoni,
    BC5CDR train and dev for BC5CDR; the ``data.extra_train`` documents end every training
    part."""
    cfg = corpus_config(corpus, overrides)
    assert cfg.data.train is not None
    docs = read_documents(ROOT / cfg.data.train)
    if cfg.data.test:
        splits = [(docs, read_documents(ROOT / cfg.data.test))]
    else:
        order = list(range(len(docs)))
        random.Random(SEED).shuffle(order)
        fold_of = {doc: pos % FOLDS for pos, doc in enumerate(order)}
        splits = [([d for i, d in enumerate(docs) if fold_of[i] != k],
                   [d for i, d in enumerate(docs) if fold_of[i] == k]) for k in range(FOLDS)]
    taken = {d.id for _, test in splits for d in test} | {d.id for d in docs}
    extra = extra_training_documents([str(ROOT / p) for p in cfg.data.extra_train], taken)
    return [(train + extra, test) for train, test in splits]


def _cache_dir() -> Path:
    return Path(os.environ.get("XLNEL_CACHE", "/tmp")) / "xlnel-oof"


def _fold_key(cfg: PipelineConfig, corpus: str, k: int) -> str:
    c = cfg.model_dump(mode="json")
    # pruning and cross-fitting off do not enter the key: runs without them share their folds
    dft = {key: v for key, v in c["dft"].items()
           if not (key in ("prune", "crossfit") and v == 0)}
    parts = [corpus, k, FOLDS, SEED, c["lang"], c["data"], c["dictionary"], dft,
             c["candidates"]]
    if cfg.dictionary.extra:  # extra dictionary files are keyed by content, not only by path
        parts.append([hashlib.sha256((ROOT / p).read_bytes()).hexdigest()
                      for p in cfg.dictionary.extra])
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def folds(corpus: str, overrides: dict[str, Any] | None = None) -> list[Fold]:
    """Every fold of ``corpus`` with its candidates (cached)."""
    cfg = corpus_config(corpus, overrides)
    if cfg.dft.crossfit:
        raise ValueError("dft.crossfit is measured through the training recipe "
                         "(benchmarks/crossfit_cv.py), not these folds")
    out = []
    base: Dictionary | None = None
    for k, (train, test) in enumerate(fold_documents(corpus, overrides)):
        path = _cache_dir() / f"{corpus}-{_fold_key(cfg, corpus, k)}"
        if (path / "done").is_file():
            out.append(_read_fold(path))
            continue
        if base is None:
            base = build_dictionary(cfg)
        dictionary = Dictionary(base)
        filter_docs, _ = fine_tune_dictionary(dictionary, train, cfg.dft.R, cfg.dft.seed,
                                              cfg.dft.unlinked, cfg.dft.prune)
        ids = {d.id for d in filter_docs}
        generator = fit_generator(cfg, dictionary)
        fold = Fold(filter_docs, generate_candidates(generator, None, filter_docs), test,
                    generate_candidates(generator, None, test),
                    [d for d in train if d.id not in ids])
        _write_fold(path, fold)
        out.append(fold)
    return out


@dataclass
class OutOfFold:
    """Held-out documents of every fold with their candidates, scores and predictions."""

    gold: list[Document]
    candidates: list[list[Candidate]]
    scores: list[np.ndarray]
    thresholds: list[float]
    pred: list[Document]
    #: Per fold: the filter's out-of-fold scores of its own training candidates.
    train_scores: list[list[np.ndarray]]


def out_of_fold(corpus: str, fold_list: Sequence[Fold], overrides: dict[str, Any] | None = None,
                make_filter: Callable[[PipelineConfig], CandidateFilter] | None = None
                ) -> OutOfFold:
    """Fit the config's filter on each fold and decide on its held-out documents."""
    cfg = corpus_config(corpus, overrides)
    oof = OutOfFold([], [], [], [], [], [])
    for fold in fold_list:
        filt = (make_filter(cfg) if make_filter is not None
                else filter_class(cfg.filter.name)(cfg.filter, cfg.lang))
        filt.fit(fold.filter_docs, fold.filter_cands)
        scores = filt.score_batch(fold.test_docs, fold.test_cands)
        oof.gold += fold.test_docs
        oof.candidates += fold.test_cands
        oof.scores += scores
        oof.thresholds += [filt.threshold] * len(fold.test_docs)
        oof.train_scores.append(list(getattr(filt, "oof_scores", [])))
        oof.pred += [decide(d, c, s, filt.threshold, cfg.linker.overlap)
                     for d, c, s in zip(fold.test_docs, fold.test_cands, scores, strict=True)]
    return oof


def cache_path(corpus: str, name: str, key: str) -> Path:
    """Where :func:`cached` keeps the run of ``corpus``, ``name`` and ``key``; the corpus's
    shipped config is part of the key, so editing it never reads a run made before."""
    shipped = json.dumps(corpus_config(corpus).model_dump(mode="json"), sort_keys=True)
    digest = hashlib.sha256(f"{corpus}|{name}|{key}|{shipped}".encode()).hexdigest()[:16]
    return _cache_dir() / f"variant-{corpus}-{name}-{digest}"


def cached(corpus: str, name: str, key: str, run: Callable[[str], OutOfFold]) -> OutOfFold:
    """``run(corpus)``, cached on disk by corpus, variant name and ``key``."""
    path = cache_path(corpus, name, key)
    if (path / "done").is_file():
        return _read_out_of_fold(path)
    result = run(corpus)
    _write_out_of_fold(path, result)
    return result


# The caches hold data only (JSON lines and npz read without pickle), never pickled objects.
def _write_fold(path: Path, fold: Fold) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for name in ("filter_docs", "test_docs", "dft_docs"):
        write_jsonl(path / f"{name}.jsonl", getattr(fold, name))
    write_candidates(path / "filter_cands.jsonl", fold.filter_cands)
    write_candidates(path / "test_cands.jsonl", fold.test_cands)
    (path / "done").write_text("", encoding="utf-8")


def _read_fold(path: Path) -> Fold:
    return Fold(read_jsonl(path / "filter_docs.jsonl"),
                read_candidates(path / "filter_cands.jsonl"),
                read_jsonl(path / "test_docs.jsonl"), read_candidates(path / "test_cands.jsonl"),
                read_jsonl(path / "dft_docs.jsonl"))


def _write_out_of_fold(path: Path, oof: OutOfFold) -> None:
    path.mkdir(parents=True, exist_ok=True)
    write_jsonl(path / "gold.jsonl", oof.gold)
    write_jsonl(path / "pred.jsonl", oof.pred)
    write_candidates(path / "candidates.jsonl", oof.candidates)
    write_scores(path / "scores.npz", oof.scores)
    for k, fold_scores in enumerate(oof.train_scores):
        write_scores(path / f"train_scores_{k}.npz", fold_scores)
    (path / "meta.json").write_text(json.dumps({"thresholds": oof.thresholds,
                                                "folds": len(oof.train_scores)}),
                                    encoding="utf-8")
    (path / "done").write_text("", encoding="utf-8")


def _read_out_of_fold(path: Path) -> OutOfFold:
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    return OutOfFold(read_jsonl(path / "gold.jsonl"), read_candidates(path / "candidates.jsonl"),
                     read_scores(path / "scores.npz"), [float(t) for t in meta["thresholds"]],
                     read_jsonl(path / "pred.jsonl"),
                     [read_scores(path / f"train_scores_{k}.npz")
                      for k in range(meta["folds"])])


def shipped(corpus: str) -> OutOfFold:
    """Out-of-fold predictions of the shipped config (cached)."""
    return cached(corpus, "shipped", "", lambda c: out_of_fold(c, folds(c)))
