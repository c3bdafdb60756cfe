"""A cache of pipeline stage outputs, keyed by the part of the config that determines them.

The stages are the steps of the training recipe (:data:`xlnel.training.STEPS`, the functions
``xlnel train`` runs) and ``scores``. Each stage's output lives in ``ROOT/STAGE/KEY/``, where
KEY hashes the config parts the step declares, the content of the input files they name (a
local folder such as a model by its files' names, sizes and modification times), the xlnel
version and the keys of the stages it consumes
(:func:`xlnel.training.step_keys`):

- ``dictionary`` (dictionary after DFT, documents left for the filter): ``lang``, ``data.*``,
  ``dictionary.*``, ``dft.*`` (``dft.seed`` only when 0 < R < 1 or with ``dft.crossfit``;
  ``dft.crossfit`` only when on) and the KB and corpus files (``data.folds`` and ``data.fold``
  among them, so each cross-validation fold has its own);
- ``tagger`` (only with ``ner.name``): ``lang``, ``data.*``, ``ner.*``;
- ``generator`` (fitted matcher): dictionary + ``candidates.*`` (with the content of
  ``candidates.stopwords``);
- ``candidates`` (of the filter's and the test documents): generator (+ tagger); with
  ``dft.crossfit`` the filter's come from out-of-fold dictionaries, which depend on the same
  parts as the dictionary and generator;
- ``filter`` (fitted filter): candidates + ``filter.*`` except ``filter.threshold``;
- ``scores`` (filter scores of the test candidates, chosen threshold): filter;
- ``windows`` (candidates and filter scores of each window of the test documents longer than
  ``linker.window_chars``, which are linked window by window as ``xlnel link`` links them:
  :func:`xlnel.linkers.windows.link_windowed`): filter + ``linker.window_chars`` and
  ``linker.window_overlap``; computed only when a test document is that long.

So a sweep over ``dft.R`` recomputes everything downstream of DFT (the KB is still read once per
process), and a sweep over ``filter.threshold`` or ``linker.overlap`` recomputes only the
decision. The filter is always fitted as if ``filter.threshold`` were open (it then chooses one);
a fixed ``filter.threshold`` is applied when the filter is used, as ``xlnel train`` does.

A stage folder is written under a temporary name and renamed into place when complete, so an
interrupted run never leaves a half-written entry. Artefacts use the stages' own ``save`` and
``load``; candidates are JSON lines and scores a numpy ``.npz``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from tqdm import tqdm

from xlnel.config import LinkerConfig, PipelineConfig
from xlnel.io._atomic import atomic_dir
from xlnel.io.candidates import read_candidates, read_scores, write_candidates, write_scores
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.linkers.windows import (
    document_windows,
    link_windowed,
    owned_candidates,
    window_documents,
)
from xlnel.runtime import generate_candidates
from xlnel.training import STEPS, Step, TrainingData, TrainingRun, step_keys
from xlnel.types import Candidate, Document
from xlnel.version import __version__

logger = logging.getLogger(__name__)

__all__ = ["STAGES", "CellStages", "StageCache", "TrainingData", "WindowScores", "stage_keys"]


def _make_scores(run: TrainingRun) -> tuple[list[np.ndarray], float]:
    filt = run.filter()
    test = run.candidates().test
    if test is None:
        raise RuntimeError("scores need a run that generates the test documents' candidates")
    scores = filt.score_batch(run.documents()[1], test, progress=run.progress)
    return scores, float(filt.threshold)


def _save_scores(value: tuple[list[np.ndarray], float], d: Path) -> None:
    write_scores(d / "scores.npz", value[0])
    (d / "threshold.json").write_text(json.dumps({"threshold": value[1]}), encoding="utf-8")


def _load_scores(run: TrainingRun, d: Path) -> tuple[list[np.ndarray], float]:
    meta = json.loads((d / "threshold.json").read_text(encoding="utf-8"))
    return read_scores(d / "scores.npz"), float(meta["threshold"])


SCORES = Step("scores", ("filter",), (), _make_scores, _save_scores, _load_scores)
"""The filter's score of every test candidate, and the threshold the filter chose."""


class WindowScores(NamedTuple):
    """Output of the ``windows`` stage: per window document of the long test documents
    (:func:`xlnel.linkers.windows.window_documents`, in order), its id, candidates and
    filter scores."""

    ids: list[str]
    candidates: list[list[Candidate]]
    scores: list[np.ndarray]


def _make_windows(run: TrainingRun) -> WindowScores:
    linker = run.config.linker
    parts = [p for d in run.documents()[1] if (plan := document_windows(d, linker)) is not None
             for p in window_documents(d, plan)]
    out = WindowScores([p.id for p in parts], [], [])
    if not parts:
        return out
    generator, tagger, filt = run.generator(), run.tagger(), run.filter()
    # one window at a time, as Pipeline.link_batch scores them
    for part in tqdm(parts, desc="test windows", unit="window", disable=not run.progress):
        cands = generate_candidates(generator, tagger, [part])
        out.candidates.extend(cands)
        out.scores.extend(filt.score_batch([part], cands))
    return out


def _save_windows(value: WindowScores, d: Path) -> None:
    write_candidates(d / "candidates.jsonl", value.candidates)
    write_scores(d / "scores.npz", value.scores)
    (d / "windows.json").write_text(json.dumps(value.ids, ensure_ascii=False),
                                    encoding="utf-8")


def _load_windows(run: TrainingRun, d: Path) -> WindowScores:
    ids = json.loads((d / "windows.json").read_text(encoding="utf-8"))
    return WindowScores(ids, read_candidates(d / "candidates.jsonl"),
                        read_scores(d / "scores.npz"))


WINDOWS = Step("windows", ("filter",), ("windows",), _make_windows, _save_windows,
               _load_windows)
"""Candidates and scores of the windows of the test documents linked window by window."""

CELL_STEPS: tuple[Step, ...] = (*STEPS, SCORES, WINDOWS)
STAGES = tuple(step.name for step in CELL_STEPS)
"""The cached stages, upstream first."""


def stage_keys(config: PipelineConfig) -> dict[str, str]:
    """The cache key of every stage for ``config`` (see the module docstring)."""
    return step_keys(config, CELL_STEPS)


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
        # No clean-up of folders left by a killed store: the cache is shared by processes that
        # may store the same stage at the same time; the first one stored is kept.
        with atomic_dir(target, existing="keep", clean_stale=False) as tmp:
            write(tmp)
            (tmp / "done.json").write_text(json.dumps({"xlnel_version": __version__}),
                                           encoding="utf-8")
        return target


class CellStages(TrainingRun):
    """The stages of one experiment cell: the training recipe run through the stage cache,
    with the test documents' candidates and scores.

    Every stage is computed at most once and only when something downstream needs it, so a cell
    whose filter and scores are cached never rebuilds its dictionary. ``seconds`` and ``cached``
    record, per stage that ran, its wall time and whether it came from the cache.
    """

    def __init__(self, config: PipelineConfig, cache: StageCache, data: TrainingData,
                 progress: bool = False) -> None:
        super().__init__(config, data, cache, progress, evaluate=True)

    def steps(self) -> tuple[Step, ...]:
        """The recipe's steps and ``scores``."""
        return CELL_STEPS

    def test_documents(self) -> list[Document]:
        """The documents the cell is scored on.

        Raises:
            ValueError: When the config gives no test documents.
        """
        test = self.documents()[1]
        if not test:
            raise ValueError("an experiment needs test documents: set data.test, "
                             "data.test_fraction > 0 or data.folds in the config")
        return test

    def train_documents(self) -> list[Document]:
        """The documents the cell learns from (DFT share, tagger, filter)."""
        return self.documents()[0]

    def test_candidates(self) -> list[list[Candidate]]:
        """Candidates of the test documents."""
        test = self.candidates().test
        assert test is not None  # an evaluating run generates them
        return test

    def scores(self) -> tuple[list[np.ndarray], float]:
        """The filter's score of every test candidate, and the threshold the filter chose."""
        value: tuple[list[np.ndarray], float] = self.output("scores")
        return value

    def threshold(self) -> float:
        """The decision threshold: ``filter.threshold``, else the one the filter chose."""
        fixed = self.config.filter.threshold
        return self.scores()[1] if fixed is None else fixed

    def window_scores(self) -> WindowScores:
        """Candidates and scores of the windows of the long test documents."""
        value: WindowScores = self.output("windows")
        return value

    def linked_candidates(self) -> list[list[Candidate]]:
        """Candidates of each test document as linking decides on them: the whole document's,
        or, for one linked window by window, those of the spans each window owns
        (:func:`xlnel.linkers.windows.owned_candidates`), offsets in the whole text."""
        out = self.test_candidates()
        plans = [document_windows(d, self.config.linker) for d in self.test_documents()]
        if all(plan is None for plan in plans):
            return out
        w = self.window_scores()
        by_id = dict(zip(w.ids, w.candidates, strict=True))
        return [cands if plan is None else
                owned_candidates(plan, [by_id[p.id] for p in window_documents(d, plan)])
                for d, cands, plan in zip(self.test_documents(), out, plans, strict=True)]

    def test_links(self, linker: LinkerConfig | None = None, threshold: float | None = None,
                   lexicon: AnnotationLexicon | None = None,
                   scores: Sequence[np.ndarray] | None = None) -> list[Document]:
        """The test documents linked as a pipeline trained on this config links them
        (:func:`xlnel.linkers.windows.link_windowed`: long documents window by window), before
        the links are described and typed.

        Args:
            linker: Decide with this ``linker`` section instead of the config's (a decision
                variant); its window settings must be the config's, which cut the windows.
            threshold: Instead of :meth:`threshold`.
            lexicon: Instead of :meth:`lexicon` (which is ``None`` without
                ``linker.lexicon``).
            scores: The whole test documents' scores instead of :meth:`scores`' (computed
                elsewhere for the same config); windows keep the cached filter's.

        Raises:
            ValueError: When ``linker`` cuts other windows than the config's.
        """
        linker = self.config.linker if linker is None else linker
        windows_of = ("window_chars", "window_overlap")
        if any(getattr(linker, k) != getattr(self.config.linker, k) for k in windows_of):
            raise ValueError("a decision variant must keep the config's linker.window_chars "
                             "and linker.window_overlap: the windows were scored with them")
        gold = self.test_documents()
        whole = {id(d): (c, s) for d, c, s in zip(gold, self.test_candidates(),
                                                  self.scores()[0] if scores is None else scores,
                                                  strict=True)}
        windows: dict[str, tuple[list[Candidate], np.ndarray]] = {}

        def score(docs: Sequence[Document]) -> tuple[list[list[Candidate]], list[np.ndarray]]:
            if not windows and any(id(d) not in whole for d in docs):
                w = self.window_scores()
                windows.update(zip(w.ids, zip(w.candidates, w.scores, strict=True),
                                   strict=True))
            found = [whole[id(d)] if id(d) in whole else windows[d.id] for d in docs]
            return [c for c, _ in found], [s for _, s in found]

        return link_windowed(gold, score, self.threshold() if threshold is None else threshold,
                             linker, self.lexicon() if lexicon is None else lexicon)

