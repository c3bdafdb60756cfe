"""A cache of pipeline stage outputs, keyed by the part of the config that determines them.

Each stage's output lives in ``ROOT/STAGE/KEY/``, where KEY hashes the config subset the stage
depends on, the size and modification time of the input files it reads, the xlnel version and
the keys of the stages it consumes:

- ``dictionary`` (dictionary after DFT, documents left for the filter): ``lang``, ``data.*``,
  ``dictionary.*``, ``dft.*`` (``dft.seed`` only when 0 < R < 1) and the KB and corpus files
  (``data.folds`` and ``data.fold`` among them, so each cross-validation fold has its own);
- ``tagger`` (only with ``ner.name``): ``lang``, ``data.*``, ``ner.*``;
- ``generator`` (fitted matcher): dictionary + ``candidates.*``;
- ``candidates`` (of the filter's and the test documents): generator (+ tagger);
- ``filter`` (fitted filter): candidates + ``filter.*`` except ``filter.threshold``;
- ``scores`` (filter scores of the test candidates, chosen threshold): filter.

So a sweep over ``dft.R`` recomputes everything downstream of DFT (the KB is still read once per
process), and a sweep over ``filter.threshold`` or ``linker.overlap`` recomputes only the
decision. The filter is always fitted as if ``filter.threshold`` were open (it then chooses one);
a fixed ``filter.threshold`` is applied when the filter is used, which is what ``train`` gives
for filters whose training does not depend on the threshold (all shipped ones).

A stage folder is written under a temporary name and renamed into place when complete, so an
interrupted run never leaves a half-written entry. Artefacts use the stages' own ``save`` and
``load``; candidates are JSON lines and scores a numpy ``.npz``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from xlnel.artifacts import PIPELINE_FORMAT
from xlnel.candidates.base import CandidateGenerator, generator_class
from xlnel.config import PipelineConfig
from xlnel.dictionary.dft import DFTResult, fine_tune_dictionary
from xlnel.dictionary.dictionary import Dictionary
from xlnel.filtering.base import CandidateFilter, filter_class
from xlnel.io import atomic_path, atomic_write, read_documents
from xlnel.io._atomic import sigterm_as_interrupt
from xlnel.ner.base import SpanTagger, tagger_class
from xlnel.pipeline import (
    build_dictionary,
    fit_generator,
    fit_tagger,
    generate_candidates,
    load_training_documents,
)
from xlnel.types import Candidate, Document, Span
from xlnel.version import __version__

logger = logging.getLogger(__name__)

STAGES = ("dictionary", "tagger", "generator", "candidates", "filter", "scores")
"""The cached stages, upstream first."""


def file_fingerprint(path: str | None) -> dict[str, Any] | None:
    """Absolute path, size and modification time of an input file (``None`` if there is none)."""
    if path is None:
        return None
    p = Path(path)
    if not p.exists():
        return {"path": str(p)}
    st = p.stat()
    return {"path": str(p.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _kb_path(spec: str) -> str | None:
    """The file of a KB spec ``format:path`` or ``path`` (``None`` for a bundled KB)."""
    _, sep, rest = spec.partition(":")
    path = rest if sep else spec
    return path if Path(path).exists() else None


def stage_keys(config: PipelineConfig) -> dict[str, str]:
    """The cache key of every stage for ``config`` (see the module docstring)."""
    c = config.model_dump(mode="json")
    data = {"lang": c["lang"], "data": c["data"],
            "files": [file_fingerprint(config.data.train), file_fingerprint(config.data.test)]}
    kb = {"dictionary": c["dictionary"],
          "files": [file_fingerprint(_kb_path(s)) for s in config.dictionary.kb]
          + [file_fingerprint(p) for p in config.dictionary.extra]}
    dft = dict(c["dft"])
    if config.dft.R in (0.0, 1.0):  # the split takes none or all documents, whatever the seed
        dft["seed"] = 0
    keys: dict[str, str] = {}
    keys["dictionary"] = _hash("dictionary", data, kb, dft)
    keys["tagger"] = _hash("tagger", data, c["ner"]) if config.ner.name else ""
    keys["generator"] = _hash("generator", keys["dictionary"], c["lang"], c["candidates"])
    keys["candidates"] = _hash("candidates", keys["generator"], keys["tagger"])
    filt = {k: v for k, v in c["filter"].items() if k != "threshold"}
    keys["filter"] = _hash("filter", keys["candidates"], filt)
    keys["scores"] = _hash("scores", keys["filter"])
    return keys


def _hash(*parts: Any) -> str:
    # The pipeline format too: a stage written in another layout is not reused.
    text = json.dumps([__version__, PIPELINE_FORMAT, *parts], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


class StageCache:
    """Stage outputs under one root folder; ``None`` as root disables caching.

    Args:
        root: The cache folder (created on first write).
    """

    def __init__(self, root: str | Path | None) -> None:
        self.root = None if root is None else Path(root)

    def folder(self, stage: str, key: str) -> Path | None:
        """The complete folder of a cached stage output, or ``None`` on a miss."""
        if self.root is None:
            return None
        d = self.root / stage / key
        return d if (d / "done.json").is_file() else None

    def store(self, stage: str, key: str, write: Callable[[Path], None]) -> Path | None:
        """Write a stage output with ``write(folder)`` and move it into place atomically.

        Returns:
            The final folder, or ``None`` when caching is disabled (``write`` is not called).
        """
        if self.root is None:
            return None
        target = self.root / stage / key
        target.parent.mkdir(parents=True, exist_ok=True)
        # No clean-up of folders left by a killed store here: the cache is shared by processes
        # that may store the same stage at the same time.
        with sigterm_as_interrupt():
            tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{key}."))
            try:
                write(tmp)
                (tmp / "done.json").write_text(json.dumps({"xlnel_version": __version__}),
                                               encoding="utf-8")
                if target.exists():  # another run stored it meanwhile; keep theirs
                    shutil.rmtree(tmp)
                else:
                    os.rename(tmp, target)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        return target


def write_candidates(path: Path, candidates: Sequence[Sequence[Candidate]]) -> None:
    """Candidates per document as JSON lines of ``[start, end, text, prefix, cid, name, score]``."""
    with atomic_write(path) as f:
        for cands in candidates:
            rows = [[c.span.start, c.span.end, c.span.text, c.span.stripped_prefix,
                     c.concept_id, c.name, c.score] for c in cands]
            f.write(json.dumps(rows, ensure_ascii=False) + "\n")


def read_candidates(path: Path) -> list[list[Candidate]]:
    """Candidates written by :func:`write_candidates`."""
    out: list[list[Candidate]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            spans: dict[tuple[int, int, str], Span] = {}
            cands = []
            for start, end, text, prefix, cid, name, score in json.loads(line):
                span = spans.setdefault((start, end, prefix), Span(start, end, text, prefix))
                cands.append(Candidate(span, cid, name, float(score)))
            out.append(cands)
    return out


def write_scores(path: Path, scores: Sequence[np.ndarray]) -> None:
    """Score arrays of several documents in one ``.npz`` (read back by :func:`read_scores`)."""
    lengths = np.array([len(s) for s in scores], dtype=np.int64)
    flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in scores] or [np.zeros(0)])
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, lengths=lengths, scores=flat)


def read_scores(path: Path) -> list[np.ndarray]:
    """Score arrays written by :func:`write_scores` (no pickle)."""
    with np.load(path, allow_pickle=False) as z:
        bounds = np.concatenate([[0], np.cumsum(z["lengths"])])
        flat = z["scores"]
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


class TrainingData:
    """Documents and the base dictionary, read once per process and shared by the cells."""

    def __init__(self) -> None:
        self._docs: dict[str, tuple[list[Document], list[Document]]] = {}
        self._dicts: dict[str, Dictionary] = {}

    def documents(self, config: PipelineConfig) -> tuple[list[Document], list[Document]]:
        """(training documents, test documents).

        The test documents are the held-out fold with ``data.folds``, else ``data.test``,
        else the ``data.test_fraction`` split.
        """
        key = _hash(config.model_dump(mode="json")["data"],
                    file_fingerprint(config.data.train), file_fingerprint(config.data.test))
        if key not in self._docs:
            train, held_out = load_training_documents(config)
            test = held_out
            if config.data.test and config.data.folds is None:
                test = read_documents(config.data.test)
            if not test:
                raise ValueError("an experiment needs test documents: set data.test, "
                                 "data.test_fraction > 0 or data.folds in the config")
            self._docs[key] = (train, test)
        return self._docs[key]

    def base_dictionary(self, config: PipelineConfig) -> Dictionary:
        """A fresh copy of the dictionary before DFT (its KBs are read once)."""
        key = _hash(config.model_dump(mode="json")["dictionary"])
        if key not in self._dicts:
            self._dicts[key] = build_dictionary(config)
        return Dictionary(self._dicts[key])


class CellStages:
    """The stages of one experiment cell, each loaded from the cache or computed (and stored).

    Every stage is computed at most once and only when something downstream needs it, so a cell
    whose filter and scores are cached never rebuilds its dictionary. ``seconds`` and ``cached``
    record, per stage that ran, its wall time and whether it came from the cache.
    """

    def __init__(self, config: PipelineConfig, cache: StageCache, data: TrainingData,
                 progress: bool = False) -> None:
        self.config = config
        self.cache = cache
        self.data = data
        self.progress = progress
        self.keys = stage_keys(config)
        self.seconds: dict[str, float] = {}
        self.cached: dict[str, bool] = {}
        self._memo: dict[str, Any] = {}

    def _stage(self, name: str, load: Callable[[Path], Any], make: Callable[[], Any],
               save: Callable[[Any, Path], None]) -> Any:
        if name in self._memo:
            return self._memo[name]
        t0 = time.perf_counter()
        before = sum(self.seconds.values())
        folder = self.cache.folder(name, self.keys[name])
        if folder is not None:
            value = load(folder)
        else:
            value = make()
            self.cache.store(name, self.keys[name], lambda d: save(value, d))
        # Time spent in upstream stages called from make() is theirs, not this stage's.
        upstream = sum(self.seconds.values()) - before
        self.seconds[name] = round(time.perf_counter() - t0 - upstream, 3)
        self.cached[name] = folder is not None
        self._memo[name] = value
        return value

    def test_documents(self) -> list[Document]:
        """The documents the cell is scored on."""
        return self.data.documents(self.config)[1]

    def train_documents(self) -> list[Document]:
        """The documents the cell learns from (DFT share, tagger, filter)."""
        return self.data.documents(self.config)[0]

    def dictionary(self) -> tuple[Dictionary, list[Document], DFTResult]:
        """The dictionary after DFT, the documents left for the filter, and the DFT summary."""
        train = self.data.documents(self.config)[0]

        def make() -> tuple[Dictionary, list[Document], DFTResult]:
            d = self.data.base_dictionary(self.config)
            dft = self.config.dft
            rest, result = fine_tune_dictionary(d, train, dft.R, dft.seed, dft.unlinked)
            return d, rest, result

        def save(value: tuple[Dictionary, list[Document], DFTResult], d: Path) -> None:
            value[0].save(d / "dictionary.tsv")
            meta = {"filter_documents": [doc.id for doc in value[1]], "dft": asdict(value[2])}
            (d / "dft.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")

        def load(d: Path) -> tuple[Dictionary, list[Document], DFTResult]:
            meta = json.loads((d / "dft.json").read_text(encoding="utf-8"))
            ids = set(meta["filter_documents"])
            return (Dictionary.load(d / "dictionary.tsv"), [x for x in train if x.id in ids],
                    DFTResult(**meta["dft"]))

        value: tuple[Dictionary, list[Document], DFTResult] = self._stage(
            "dictionary", load, make, save)
        return value

    def tagger(self) -> SpanTagger | None:
        """The fitted mention tagger, or ``None`` when the config has none."""
        name = self.config.ner.name
        if name is None:
            return None
        value: SpanTagger = self._stage(
            "tagger",
            lambda d: tagger_class(name).load(d, self.config.ner, self.config.lang),
            lambda: fit_tagger(self.config, self.data.documents(self.config)[0], self.progress),
            lambda t, d: t.save(d))
        return value

    def generator(self) -> CandidateGenerator:
        """The fitted candidate generator."""
        cfg = self.config
        value: CandidateGenerator = self._stage(
            "generator",
            lambda d: generator_class(cfg.candidates.generator).load(d, cfg.candidates, cfg.lang),
            lambda: fit_generator(cfg, self.dictionary()[0]),
            lambda g, d: g.save(d))
        return value

    def candidates(self) -> tuple[list[list[Candidate]], list[list[Candidate]]]:
        """Candidates of the filter's training documents and of the test documents."""

        def make() -> tuple[list[list[Candidate]], list[list[Candidate]]]:
            gen, tagger = self.generator(), self.tagger()
            return (generate_candidates(gen, tagger, self.dictionary()[1]),
                    generate_candidates(gen, tagger, self.test_documents()))

        def save(value: tuple[list[list[Candidate]], list[list[Candidate]]], d: Path) -> None:
            write_candidates(d / "filter.jsonl", value[0])
            write_candidates(d / "test.jsonl", value[1])

        value: tuple[list[list[Candidate]], list[list[Candidate]]] = self._stage(
            "candidates",
            lambda d: (read_candidates(d / "filter.jsonl"), read_candidates(d / "test.jsonl")),
            make, save)
        return value

    def filter(self) -> CandidateFilter:
        """The fitted filter, as fitted with an open threshold (see :meth:`threshold`)."""
        cfg = self.config
        open_cfg = cfg.filter.model_copy(update={"threshold": None})
        cls = filter_class(cfg.filter.name)

        def make() -> CandidateFilter:
            filt = cls(open_cfg, cfg.lang)
            return filt.fit(self.dictionary()[1], self.candidates()[0], progress=self.progress)

        filt: CandidateFilter = self._stage(
            "filter", lambda d: cls.load(d, open_cfg, cfg.lang), make, lambda f, d: f.save(d))
        return filt

    @property
    def _chosen_threshold(self) -> float:
        return float(self.filter().threshold)

    def scores(self) -> tuple[list[np.ndarray], float]:
        """The filter's score of every test candidate, and the threshold the filter chose."""

        def make() -> tuple[list[np.ndarray], float]:
            filt = self.filter()
            scores = filt.score_batch(self.test_documents(), self.candidates()[1],
                                      progress=self.progress)
            return scores, self._chosen_threshold

        def save(value: tuple[list[np.ndarray], float], d: Path) -> None:
            write_scores(d / "scores.npz", value[0])
            (d / "threshold.json").write_text(json.dumps({"threshold": value[1]}),
                                              encoding="utf-8")

        def load(d: Path) -> tuple[list[np.ndarray], float]:
            meta = json.loads((d / "threshold.json").read_text(encoding="utf-8"))
            return read_scores(d / "scores.npz"), float(meta["threshold"])

        value: tuple[list[np.ndarray], float] = self._stage("scores", load, make, save)
        return value

    def threshold(self) -> float:
        """The decision threshold: ``filter.threshold``, else the one the filter chose."""
        fixed = self.config.filter.threshold
        return self.scores()[1] if fixed is None else fixed
