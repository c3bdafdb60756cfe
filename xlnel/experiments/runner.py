"""Grid experiments: every cell of (grid axes x seeds) trained, linked and scored, resumable.

Each finished cell appends one JSON line to ``OUT/runs.jsonl`` (written, flushed and synced
before the next cell starts); a rerun skips the cells already there. Seed ``s`` sets ``seed``,
``dft.seed`` and the filter's ``options.seed`` (when the filter takes one); the held-out test
split (``data.split_seed``, ``data.test_fraction``) stays fixed, so every run of an experiment
is scored on the same test documents.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from xlnel import __version__
from xlnel.cache import CACHE_ENV
from xlnel.config import PipelineConfig, load_config
from xlnel.errors import ConfigError, FormatError
from xlnel.evaluation import evaluate, hrm_recall
from xlnel.experiments.stages import CellStages, StageCache, TrainingData
from xlnel.filtering.base import filter_class
from xlnel.io import atomic_write
from xlnel.linkers.decide import decide

logger = logging.getLogger(__name__)

RUNS_FILE = "runs.jsonl"
SEED_KEYS = ("seed", "dft.seed", "filter.options.seed")
"""Config keys set from a run's seed; they cannot be grid axes."""

SUMMARY_METRICS = ("span_f1", "concept_f1", "hrm_span", "hrm_concept", "entries_added")
"""Columns of :func:`summarize`, each a path into a run record (see :func:`metric_value`)."""


def parse_grid(items: Iterable[str]) -> dict[str, list[Any]]:
    """Turn ``["dft.R=0,0.1", "candidates.threshold=0.3,0.4"]`` into ``{key: values}``.

    Values are YAML scalars separated by commas (``true``, ``0.1``, ``null``...).

    Raises:
        ConfigError: On an item without ``=``, an empty value list, a repeated key, or a key
            that the seeds set.
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
        parsed = [yaml.safe_load(v) for v in values.split(",") if v.strip()]
        if not parsed:
            raise ConfigError(f"grid axis {key!r} has no values")
        grid[key] = parsed
    return grid


@dataclass(frozen=True)
class Cell:
    """One run of an experiment: a value per grid axis and a seed."""

    axes: tuple[tuple[str, Any], ...]
    seed: int

    @property
    def id(self) -> str:
        """A stable name such as ``dft.R=0.1|seed=2``."""
        parts = [f"{k}={json.dumps(v)}" for k, v in self.axes] + [f"seed={self.seed}"]
        return "|".join(parts)

    def overrides(self, seeded_filter: bool) -> dict[str, Any]:
        """Dotted-key overrides of this cell (axis values and seed keys)."""
        out: dict[str, Any] = dict(self.axes)
        out["seed"] = out["dft.seed"] = self.seed
        if seeded_filter:
            out["filter.options.seed"] = self.seed
        return out


def _filter_takes_seed(config: PipelineConfig) -> bool:
    """Whether the config's filter reads a ``seed`` option."""
    filt = filter_class(config.filter.name)(config.filter, config.lang)
    opts = getattr(filt, "options", None)
    return (isinstance(opts, Mapping) and "seed" in opts) or hasattr(opts, "seed")


def plan_cells(config: str | Path, grid: Mapping[str, Sequence[Any]], seeds: Sequence[int],
               overrides: Mapping[str, Any] | None = None
               ) -> list[tuple[Cell, PipelineConfig]]:
    """Every cell with its resolved config, each validated before anything runs.

    Cells come seed by seed: all grid points of the first seed, then of the next.

    Raises:
        ConfigError: If a grid value is invalid for its key (the message names the cell), or
            a filter rejects its options.
    """
    if not seeds:
        raise ConfigError("an experiment needs at least one seed")
    base = dict(overrides or {})
    axes = list(grid.items())
    points = [tuple((k, v) for (k, _), v in zip(axes, values, strict=True))
              for values in itertools.product(*(v for _, v in axes))]
    planned = []
    # Seed-major: an interrupted sweep still holds whole curves, over fewer seeds.
    for seed in seeds:
        for point in points:
            cell = Cell(point, int(seed))
            try:
                seeded = _filter_takes_seed(load_config(config, {**base, **dict(point)}))
                cfg = load_config(config, {**base, **cell.overrides(seeded)})
                filter_class(cfg.filter.name)(cfg.filter, cfg.lang)
            except (ConfigError, ValueError) as e:
                raise ConfigError(f"cell {cell.id}: {e}") from e
            planned.append((cell, cfg))
    return planned


def config_hash(config: PipelineConfig) -> str:
    """A short hash of a resolved config, to tell a resumed cell's config from a changed one."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_runs(path: str | Path) -> list[dict[str, Any]]:
    """The records of a ``runs.jsonl``; a truncated last line (a crash) is dropped with a warning.

    Raises:
        FormatError: If a line other than the last is not JSON.
    """
    p = Path(path)
    if not p.is_file():
        return []
    lines = p.read_text(encoding="utf-8").split("\n")
    complete = p.stat().st_size == 0 or lines[-1] == ""
    if lines and lines[-1] == "":
        lines.pop()
    records = []
    for i, line in enumerate(lines, start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            if i == len(lines) and not complete:
                logger.warning("%s: ignoring the truncated last line %d (an interrupted run)",
                               p, i)
                break
            raise FormatError(f"not a JSON record: {e}", p, i) from e
    return records


def _repair_runs(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """Rewrite ``runs.jsonl`` with only its complete records (drops a truncated tail)."""
    with atomic_write(path) as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def append_run(path: Path, record: Mapping[str, Any]) -> None:
    """Append one record as a JSON line, synced to disk before returning."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def run_cell(cell: Cell, config: PipelineConfig, stages: CellStages) -> dict[str, Any]:
    """Train (through the cached stages), link and score one cell; returns its record."""
    t0 = time.perf_counter()
    gold = stages.test_documents()
    scores, _ = stages.scores()
    threshold = stages.threshold()
    _, test_cands = stages.candidates()
    _, _, dft = stages.dictionary()
    t_dec = time.perf_counter()
    pred = [decide(d, c, s, threshold, config.linker.overlap, config.linker.propagate)
            for d, c, s in zip(gold, test_cands, scores, strict=True)]
    stages.seconds["decide"] = round(time.perf_counter() - t_dec, 3)
    t_eval = time.perf_counter()
    levels = ["span"] + (["concept"] if any(e.concept_ids for d in gold for e in d.entities)
                         else [])
    by_doc = {d.id: c for d, c in zip(gold, test_cands, strict=True)}
    metrics: dict[str, Any] = {level: evaluate(gold, pred, level).to_dict() for level in levels}
    metrics["hrm"] = {level: hrm_recall(gold, by_doc, level).to_dict() for level in levels}
    stages.seconds["evaluate"] = round(time.perf_counter() - t_eval, 3)
    return {
        "cell": cell.id, "axes": dict(cell.axes), "seed": cell.seed,
        "config_hash": config_hash(config), "config": config.model_dump(mode="json"),
        "metrics": metrics, "threshold": threshold, "test_documents": len(gold),
        "dft": asdict(dft), "dictionary_entries_added": dft.entries_added,
        "seconds": {**stages.seconds, "total": round(time.perf_counter() - t0, 3)},
        "cached": stages.cached, "xlnel_version": __version__,
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
        _repair_runs(path, records)
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
                   on_cell: Callable[[dict[str, Any]], None] | None = None
                   ) -> list[dict[str, Any]]:
    """Run every cell of ``grid`` x ``seeds`` not yet in ``OUT/runs.jsonl``.

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

    Returns:
        The records of all planned cells, finished before or now, in plan order.
    """
    from tqdm import tqdm

    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    planned = plan_cells(config, grid, seed_list, overrides)
    out_dir = Path(out)
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


def metric_value(record: Mapping[str, Any], name: str) -> float | None:
    """One of :data:`SUMMARY_METRICS` from a run record (``None`` when not measured)."""
    m = record.get("metrics", {})
    paths = {"span_f1": ("span", "f1"), "concept_f1": ("concept", "f1"),
             "hrm_span": ("hrm", "span", "recall"), "hrm_concept": ("hrm", "concept", "recall")}
    if name == "entries_added":
        return float(record.get("dictionary_entries_added", 0))
    node: Any = m
    for part in paths[name]:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return float(node)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0.0 for a single value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2 or min(values) == max(values):
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def summarize(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Mean and standard deviation over seeds of each grid point, in first-seen order.

    Returns:
        One row per grid point: ``axes``, ``seeds`` (count) and, per metric of
        :data:`SUMMARY_METRICS` measured in every run, ``{"mean": m, "std": s}``.
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    axes_of: dict[str, dict[str, Any]] = {}
    for r in records:
        key = json.dumps(r.get("axes", {}), sort_keys=True)
        groups.setdefault(key, []).append(r)
        axes_of[key] = dict(r.get("axes", {}))
    rows = []
    for key, group in groups.items():
        row: dict[str, Any] = {"axes": axes_of[key], "seeds": len(group)}
        for name in SUMMARY_METRICS:
            values = [metric_value(r, name) for r in group]
            if values and all(v is not None for v in values):
                mean, std = mean_std([v for v in values if v is not None])
                row[name] = {"mean": mean, "std": std}
        rows.append(row)
    return rows


def format_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary as a plain-text table (``mean ± std`` per metric)."""
    if not rows:
        return "no runs"
    axes = list(rows[0]["axes"])
    metrics = [m for m in SUMMARY_METRICS if any(m in r for r in rows)]
    header = [*axes, "seeds", *metrics]
    body = []
    for r in rows:
        cells = [str(r["axes"].get(a)) for a in axes] + [str(r["seeds"])]
        for m in metrics:
            v = r.get(m)
            fmt = "{:.1f} ± {:.1f}" if m == "entries_added" else "{:.4f} ± {:.4f}"
            cells.append(fmt.format(v["mean"], v["std"]) if v else "-")
        body.append(cells)
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(line, widths, strict=True))
                     for line in [header, *body])


def iter_runs(paths: Iterable[str | Path]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(label, records) of each experiment folder or ``runs.jsonl`` file."""
    for p in paths:
        path = Path(p)
        file = path / RUNS_FILE if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(f"no {RUNS_FILE} in {path}; run `xlnel experiment` first")
        label = (path if path.is_dir() else path.parent).name
        yield label, read_runs(file)
