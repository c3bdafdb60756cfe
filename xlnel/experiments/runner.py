"""Grid experiments: every cell of (grid axes x seeds [x folds]) trained, linked and scored.

Each finished cell appends one JSON line to ``OUT/runs.jsonl`` (written, flushed and synced
before the next cell starts); a rerun skips the cells already there. Seed ``s`` sets ``seed``
and every stage seed of the config (:mod:`xlnel.seeds`: ``dft.seed``, and the filter's, a
cascade prefilter's and a trained tagger's ``options.seed`` where they take one).

Without folds the held-out test split (``data.split_seed``, ``data.test_fraction``, or
``data.test``) stays fixed, so every run of an experiment is scored on the same test documents.
With ``folds=K`` every grid point and seed is cross-validated by document over ``data.train``:
fold ``f`` sets ``data.folds=K`` and ``data.fold=f`` (see :class:`xlnel.config.DataConfig`),
trains on the other folds (the DFT share, the filter's own threshold selection and everything
else learnt come from them) and is scored on fold ``f``; its record holds ``fold``.
Records keep per-document counts of every level, for pooled out-of-fold scores and document
bootstrap intervals (see :mod:`xlnel.experiments.summary`). Links are typed as a trained
pipeline types them (``linker.entity_types``, by a typer fitted on the cell's training
documents), so corpora with entity types also record ``span+type`` and ``concept+type``.
Test documents longer than ``linker.window_chars`` are linked window by window, as ``xlnel
link`` links them (:meth:`xlnel.experiments.stages.CellStages.test_links`); their candidate
recall is that of the windows' candidates (:meth:`~.CellStages.linked_candidates`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from xlnel.cache import CACHE_ENV
from xlnel.config import PipelineConfig, load_config
from xlnel.config_files import yaml_value
from xlnel.errors import ConfigError
from xlnel.evaluation import LEVELS, Scores, evaluate_per_document, hrm_recall
from xlnel.experiments.runs import RUNS_FILE, append_run, iter_runs, read_runs, repair_runs
from xlnel.experiments.stages import CellStages, StageCache, TrainingData
from xlnel.experiments.summary import (
    SUMMARY_METRICS,
    format_summary,
    mean_std,
    metric_value,
    summarize,
)
from xlnel.filtering.base import filter_class
from xlnel.linkers.describe import describe_links, name_ids
from xlnel.linkers.windows import document_windows
from xlnel.normalization import hebrew_rules
from xlnel.training.seeds import STAGE_SEED_KEYS, stage_seed_keys
from xlnel.types import Document
from xlnel.version import __version__

logger = logging.getLogger(__name__)

__all__ = ["SUMMARY_METRICS", "Cell", "format_summary", "iter_runs", "mean_std",
           "metric_value", "parse_grid", "plan_cells", "read_runs", "run_cell",
           "run_experiment", "summarize"]

SEED_KEYS = ("seed", *STAGE_SEED_KEYS)
"""Config keys set from a run's seed; they cannot be grid axes."""

FOLD_KEYS = ("data.folds", "data.fold")
"""Config keys set from ``folds``; they cannot be grid axes."""


def parse_grid(items: Iterable[str]) -> dict[str, list[Any]]:
    """Turn ``["dft.R=0,0.1", "candidates.threshold=0.3,0.4"]`` into ``{key: values}``.

    Values are YAML scalars separated by commas (``true``, ``0.1``, ``null``...); a number
    in exponent form that YAML reads as a string (``2e-1``) is a number.

    Raises:
        ConfigError: On an item without ``=``, an empty value list, a repeated key, a value
            given twice (``0.2,0.20,2e-1`` are one value), a value that is not valid YAML,
            or a key that the seeds set.
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"grid axis {item!r} must look like key.path=v1,v2,...")
        if key in grid:
            raise ConfigError(f"grid axis {key!r} is given twice")
        if key in SEED_KEYS:
            raise ConfigError(f"grid axis {key!r} is set by --seeds; sweep seeds with --seeds")
        if key in FOLD_KEYS:
            raise ConfigError(f"grid axis {key!r} is set by --folds")
        parsed = [_grid_value(key, v) for v in values.split(",") if v.strip()]
        if not parsed:
            raise ConfigError(f"grid axis {key!r} has no values")
        _refuse_repeats(key, parsed)
        grid[key] = parsed
    return grid


_NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def _grid_value(key: str, text: str) -> Any:
    """A YAML scalar; a string that is a number (YAML 1.1 reads ``2e-1`` so) as a float.

    Raises:
        ConfigError: If ``text`` is not valid YAML (such as ``[1`` of ``[1,2]``: values are
            split at every comma).
    """
    try:
        value = yaml_value(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"grid axis {key!r}: the value {text.strip()!r} is not valid YAML "
                          f"(values are split at every comma, so a list or mapping cannot "
                          f"be one) ({e})") from e
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return float(value)
    return value


def _refuse_repeats(key: str, values: Sequence[Any]) -> None:
    """Refuse a grid axis naming one value twice: its cells would run twice and count as
    two replicates. Booleans are not numbers here (``true`` is not ``1``)."""
    seen: list[tuple[bool, Any]] = []
    for v in values:
        tagged = (isinstance(v, bool), v)
        if tagged in seen:
            raise ConfigError(f"grid axis {key!r} gives the value {v!r} twice "
                              f"({', '.join(map(repr, values))}); give each value once")
        seen.append(tagged)


@dataclass(frozen=True)
class Cell:
    """One run of an experiment: a value per grid axis, a seed and, in a cross-validation,
    the held-out fold of ``folds``."""

    axes: tuple[tuple[str, Any], ...]
    seed: int
    fold: int | None = None
    folds: int | None = None

    @property
    def id(self) -> str:
        """A stable name such as ``dft.R=0.1|seed=2`` or ``dft.R=0.1|seed=2|fold=3/5``."""
        parts = [f"{k}={json.dumps(v)}" for k, v in self.axes] + [f"seed={self.seed}"]
        if self.fold is not None:
            parts.append(f"fold={self.fold}/{self.folds}")
        return "|".join(parts)

    def overrides(self, seed_keys: Sequence[str]) -> dict[str, Any]:
        """Dotted-key overrides of this cell (axis values, ``seed`` and the stage seeds
        ``seed_keys``, fold keys)."""
        out: dict[str, Any] = dict(self.axes)
        out.update(dict.fromkeys(["seed", *seed_keys], self.seed))
        if self.fold is not None:
            out["data.folds"], out["data.fold"] = self.folds, self.fold
        return out


def plan_cells(config: str | Path, grid: Mapping[str, Sequence[Any]], seeds: Sequence[int],
               overrides: Mapping[str, Any] | None = None, folds: int | None = None
               ) -> list[tuple[Cell, PipelineConfig]]:
    """Every cell with its resolved config, each validated before anything runs.

    Cells come seed by seed: all grid points of the first seed, then of the next; with
    ``folds``, all folds of a grid point one after the other.

    Raises:
        ConfigError: If a grid value is invalid for its key (the message names the cell),
            two cells have the same config once validated, a filter rejects its options,
            ``folds`` is below 2, or the overrides set a key that the seeds (or the folds)
            set.
    """
    if not seeds:
        raise ConfigError("an experiment needs at least one seed")
    if folds is not None and folds < 2:
        raise ConfigError(f"cross-validation needs at least 2 folds, got {folds}")
    base = dict(overrides or {})
    if set(base) & set(SEED_KEYS):
        raise ConfigError(f"{', '.join(SEED_KEYS)} are set by the seeds; give them with "
                          "--seeds, not as overrides")
    if folds is not None and set(base) & set(FOLD_KEYS):
        raise ConfigError(f"{', '.join(FOLD_KEYS)} are set by folds; do not override them")
    axes = list(grid.items())
    points = [tuple((k, v) for (k, _), v in zip(axes, values, strict=True))
              for values in itertools.product(*(v for _, v in axes))]
    fold_ids: list[int | None] = list(range(folds)) if folds is not None else [None]
    planned = []
    # Seed-major: an interrupted sweep still holds whole curves, over fewer seeds.
    for seed in seeds:
        for point in points:
            for fold in fold_ids:
                cell = Cell(point, int(seed), fold, folds if fold is not None else None)
                planned.append((cell, _cell_config(config, base, cell)))
    _refuse_same_configs(planned)
    return planned


def _refuse_same_configs(planned: Sequence[tuple[Cell, PipelineConfig]]) -> None:
    """Refuse two cells whose grid values validate to one config (``lang=en,EN``): they
    would run the same training twice and count as two replicates."""
    seen: dict[str, Cell] = {}
    for cell, cfg in planned:
        first = seen.setdefault(config_hash(cfg), cell)
        if first is not cell:
            raise ConfigError(f"cells {first.id} and {cell.id} have the same config once "
                              "validated; give each grid value once")


def _cell_config(config: str | Path, base: Mapping[str, Any], cell: Cell) -> PipelineConfig:
    """The validated config of one cell (a ``ConfigError`` names the cell)."""
    try:
        # every stage that draws is reseeded, so the replicates differ in every draw
        keys = stage_seed_keys(load_config(config, {**base, **dict(cell.axes)}))
        cfg = load_config(config, {**base, **cell.overrides(keys)})
        filter_class(cfg.filter.name)(cfg.filter, cfg.lang)
    except (ConfigError, ValueError) as e:
        raise ConfigError(f"cell {cell.id}: {e}") from e
    return cfg


def config_hash(config: PipelineConfig) -> str:
    """A short hash of a resolved config, to tell a resumed cell's config from a changed one."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def score_levels(config: PipelineConfig, gold: Sequence[Document], typed: bool = False
                 ) -> list[str]:
    """Evaluation levels recorded for a cell: ``span``, ``overlap``, ``span-prefix`` for Hebrew,
    ``concept`` and ``document`` when some gold mention has a concept id, and, when ``typed``
    (the links carry entity types) and some gold mention has a type, ``span+type`` (and
    ``concept+type`` with concept ids); each level only where :data:`xlnel.evaluation.LEVELS`
    has it."""
    levels = ["span", "overlap"]
    if hebrew_rules(config.lang):
        levels.append("span-prefix")
    with_ids = any(e.concept_ids for d in gold for e in d.entities)
    if with_ids:
        levels += ["concept", "document"]
    if typed and any(e.type for d in gold for e in d.entities):
        levels.append("span+type")
        if with_ids:
            levels.append("concept+type")
    return [lvl for lvl in levels if lvl in LEVELS]


def _scores(gold: Sequence[Document], pred: Sequence[Document], levels: Sequence[str]
            ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Micro scores per level, and per-document ``[tp, fp, fn]`` per level."""
    metrics: dict[str, Any] = {}
    counts: dict[str, list[list[int]]] = {}
    for level in levels:
        per_doc = evaluate_per_document(gold, pred, level)
        counts[level] = [[s.tp, s.fp, s.fn] for s in per_doc.values()]
        totals = [sum(c[i] for c in counts[level]) for i in range(3)]
        metrics[level] = Scores.from_counts(*totals).to_dict()
    return metrics, {"ids": [d.id for d in gold], "counts": counts}


def run_cell(cell: Cell, config: PipelineConfig, stages: CellStages) -> dict[str, Any]:
    """Train (through the cached stages), link and score one cell; returns its record."""
    t0 = time.perf_counter()
    gold = stages.test_documents()
    threshold = stages.threshold()
    stages.test_candidates()  # generated before the decision is timed
    dft = stages.dictionary().dft
    if any(document_windows(d, config.linker) is not None for d in gold):
        stages.window_scores()  # timed as a stage of its own, not as the decision
    t_dec = time.perf_counter()
    pred = stages.test_links()
    # described and typed as Pipeline.link_batch does (the typer reads the concept names)
    dictionary, concepts = stages.dictionary().dictionary, stages.concepts()
    typer = stages.entity_typer() if config.linker.entity_types else None
    names = name_ids(dictionary)
    pred = [describe_links(d, dictionary, concepts, names, typer) for d in pred]
    stages.seconds["decide"] = round(time.perf_counter() - t_dec, 3)
    t_eval = time.perf_counter()
    levels = score_levels(config, gold, typed=typer is not None)
    metrics, per_document = _scores(gold, pred, levels)
    # recall of the candidates the links were decided on (a long document's windows')
    by_doc = {d.id: c for d, c in zip(gold, stages.linked_candidates(), strict=True)}
    metrics["hrm"] = {level: hrm_recall(gold, by_doc, level).to_dict()
                      for level in ("span", "concept") if level in metrics}
    stages.seconds["evaluate"] = round(time.perf_counter() - t_eval, 3)
    return {
        "cell": cell.id, "axes": dict(cell.axes), "seed": cell.seed,
        "fold": cell.fold, "folds": cell.folds,
        "config_hash": config_hash(config), "config": config.model_dump(mode="json"),
        "metrics": metrics, "threshold": threshold, "test_documents": len(gold),
        "train_documents": len(stages.train_documents()),
        "dft": asdict(dft), "dictionary_entries_added": dft.entries_added,
        "seconds": {**stages.seconds, "total": round(time.perf_counter() - t0, 3)},
        "cached": stages.cached, "xlnel_version": __version__,
        "per_document": per_document,
    }


def _cache_root(out: Path, cache_dir: str | Path | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get(CACHE_ENV, "").strip()
    return Path(env) / "experiments" if env else out / "cache"


def _done_cells(path: Path, planned: Sequence[tuple[Cell, PipelineConfig]]) -> set[str]:
    """Ids of the planned cells already in ``runs.jsonl`` (repairing a truncated tail)."""
    records = read_runs(path)
    if path.is_file() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
        repair_runs(path, records)
    configs = {cell.id: cfg for cell, cfg in planned}
    done = set()
    for r in records:
        cid = r.get("cell")
        if cid in configs:
            if not _same_config(r, configs[cid]):
                raise ConfigError(f"{path} holds cell {cid} run with another config; give "
                                  "another --out or remove that file")
            done.add(cid)
    return done


def _same_config(record: Mapping[str, Any], config: PipelineConfig) -> bool:
    """Whether ``record`` was run with ``config``.

    Equal hashes say so at once. Otherwise the stored config is compared with ``config``: a
    field that xlnel gained after the record was written (absent from the record) counts as
    equal when it holds its default, which reproduces the older behaviour; any other
    difference means another config.
    """
    if record.get("config_hash") == config_hash(config):
        return True
    stored = record.get("config")
    if not isinstance(stored, Mapping):
        return False
    return _matches(stored, config.model_dump(mode="json"),
                    PipelineConfig().model_dump(mode="json"))


def _matches(stored: Mapping[str, Any], current: Mapping[str, Any], default: Any) -> bool:
    if set(stored) - set(current):
        return False
    for key, value in current.items():
        dflt = default.get(key, _NO_DEFAULT) if isinstance(default, Mapping) else _NO_DEFAULT
        if key not in stored:
            if dflt is _NO_DEFAULT or value != dflt:
                return False
        elif isinstance(value, Mapping) and isinstance(stored[key], Mapping):
            if not _matches(stored[key], value, dflt):
                return False
        elif stored[key] != value:
            return False
    return True


_NO_DEFAULT = object()


def run_experiment(config: str | Path, grid: Mapping[str, Sequence[Any]],
                   seeds: int | Sequence[int], out: str | Path,
                   overrides: Mapping[str, Any] | None = None,
                   cache_dir: str | Path | None = None, progress: bool = False,
                   on_cell: Callable[[dict[str, Any]], None] | None = None,
                   folds: int | None = None, fold_ids: Sequence[int] | None = None
                   ) -> list[dict[str, Any]]:
    """Run every cell of ``grid`` x ``seeds`` (x ``folds``) not yet in ``OUT/runs.jsonl``.

    Args:
        config: The experiment's base config (YAML).
        grid: Dotted config key -> values (see :func:`parse_grid`); ``{}`` runs the config alone.
        seeds: How many seeds (``0..n-1``) or the seeds themselves.
        out: Output folder; ``runs.jsonl`` gets one line per finished cell.
        overrides: Dotted-key overrides applied to the base config before the grid.
        cache_dir: Stage cache; default ``$XLNEL_CACHE/experiments`` when that variable is set,
            else ``OUT/cache``.
        progress: Show a progress bar over cells.
        on_cell: Called with each new record once it is written.
        folds: Cross-validate by document over ``data.train`` with this many folds (seeded
            by ``data.split_seed``; ``data.test`` and ``data.test_fraction`` are not used);
            ``None`` scores every cell on the config's test documents.
        fold_ids: With ``folds``, run only these folds (to split a cross-validation between
            processes or machines, each with its own ``out``; their ``runs.jsonl`` files,
            concatenated, resume as one run of every fold).

    Returns:
        The records of all planned cells, finished before or now, in plan order.

    Raises:
        ConfigError: As :func:`plan_cells`, and if ``fold_ids`` is given without ``folds`` or
            names a fold outside ``0..folds-1``.
    """
    from tqdm import tqdm

    from xlnel.outputs import check_disjoint, check_output_folder, config_inputs

    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    planned = plan_cells(config, grid, seed_list, overrides, folds)
    if fold_ids is not None:
        wanted = set(_check_fold_ids(fold_ids, folds))
        planned = [(c, cfg) for c, cfg in planned if c.fold in wanted]
    inputs = [Path(config)] + [p for _, cfg in planned for p in config_inputs(cfg)]
    writes = [RUNS_FILE] + (["cache"] if cache_dir is None else [])
    out_dir = check_output_folder(out, inputs, writes)
    if cache_dir is not None:
        check_disjoint(cache_dir, inputs, out_is_folder=True, option="--cache")
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = out_dir / RUNS_FILE
    done = _done_cells(runs, planned)
    if done:
        logger.info("resuming: %d of %d cells already in %s", len(done), len(planned), runs)
    cache = StageCache(_cache_root(out_dir, cache_dir))
    data = TrainingData()
    todo = [(c, cfg) for c, cfg in planned if c.id not in done]
    with tqdm(total=len(planned), initial=len(planned) - len(todo), desc="cells", unit="cell",
              disable=not progress) as bar:
        for cell, cfg in todo:
            bar.set_postfix_str(cell.id)
            record = run_cell(cell, cfg, CellStages(cfg, cache, data))
            append_run(runs, record)
            if on_cell is not None:
                on_cell(record)
            bar.update(1)
    by_id = {r["cell"]: r for r in read_runs(runs)}
    return [by_id[c.id] for c, _ in planned if c.id in by_id]


def _check_fold_ids(fold_ids: Sequence[int], folds: int | None) -> list[int]:
    """``fold_ids`` as a list, checked against ``folds`` (see :func:`run_experiment`)."""
    if folds is None:
        raise ConfigError("fold ids need folds (--folds K)")
    ids = list(fold_ids)
    bad = [i for i in ids if not 0 <= i < folds]
    if not ids or bad or len(set(ids)) != len(ids):
        raise ConfigError(f"fold ids must be distinct folds among 0..{folds - 1}, got {ids}")
    return ids
