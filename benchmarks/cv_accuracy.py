"""Accuracy by 5-fold cross-validation by document, with 95% intervals; writes cv_accuracy.json.

Camoni (``configs/camoni-{diabetes,sclerosis,depression}.yaml``, GBDT filter): every visible
post of the community's file is dealt into 5 folds (seeded by ``data.split_seed``); each fold
trains on the other 4 (DFT share, filter, its threshold) and is scored on its own posts. Per
config: the per-fold scores, the mean over folds with its 95% t-interval, and the pooled
out-of-fold micro scores (every post predicted once) with a 95% document-bootstrap interval, at
every recorded level; HRM recall; wall seconds.

BC5CDR (``configs/bc5cdr.yaml``): trained on train.pubtator, scored on dev.pubtator, with 95%
document-bootstrap intervals at levels span, concept and document. ``bc5cdr-mesh``: the same
with ``configs/bc5cdr-mesh.yaml`` (MeSH with entry terms, cut to diseases, chemicals and mental
disorders; its tables are fetched first, :mod:`benchmarks._mesh`), and its paired document
bootstrap against ``bc5cdr`` at each level (``paired``; the ``bc5cdr`` cell is run, or resumed
from the same ``--work``). With ``--against-shipped`` (and ``--set``), a trial of an option on
the dev cell: each dev name is paired against its own shipped config instead, run without the
overrides (or resumed from ``WORK/NAME-shipped``). ``bc5cdr-train``: the same
config cross-validated inside train.pubtator (5 folds by abstract, ``data.test`` unset), scored
as the Camoni communities are at those three levels: an estimate that never reads dev, on
which the BC5CDR settings were chosen; ``bc5cdr-mesh-train`` the same for
``configs/bc5cdr-mesh.yaml``.

    python -m benchmarks cv_accuracy [--folds 5] [--cache DIR] [--work DIR]
        [--filter PIPELINE.yaml] [--set KEY=VALUE ...] [--name RESULT] [--no-protocol]
        [--shipped-prefilter] [--against-shipped] [--fold-ids I,J] [NAME ...]

NAME is among diabetes, sclerosis, depression, bc5cdr, bc5cdr-mesh, bc5cdr-train,
bc5cdr-mesh-train (default: all but the two MeSH names). Runs resume from
``WORK/NAME/runs.jsonl``, and a finished NAME from ``WORK/NAME/summary.json`` (so several
processes can each run one NAME and a last call gathers them into one file); the stage cache
(default ``/tmp/xlnel-cv-cache``) is shared with ``benchmarks/r_sweep_cv.py``. Run with
``OMP_NUM_THREADS=1``.

``--fold-ids 0,1`` runs only those folds into ``WORK/NAME/runs.jsonl`` and writes no results:
several processes (each with its own ``--work`` and ``--cache``) can share the folds of one
name, and once their ``runs.jsonl`` files are concatenated into one ``WORK/NAME/runs.jsonl``, a
call without ``--fold-ids`` gathers the results from them without training again
(``benchmarks/device/run_cv_folds.sh`` does this on a lent GPU).

``--shipped-prefilter`` gives the prefilter of the ``--filter`` cascade (its
``prefilter_options``) the options of each shipped config's own filter: the features chosen for
that corpus, so that the cascade's first stage is the shipped GBDT.

``--filter`` swaps the shipped configs' filter for the ``filter`` section of a pipeline file
(its ``name`` and ``options``; the corpus's ``select_level`` and the configs' DFT, candidates and
linker settings stay), for example ``configs/pipelines/transformer.yaml`` on a lent GPU
(``benchmarks/device/README.md``); ``--set`` overrides further keys of every config (for
example ``candidates.workers``); ``--name`` names the results file.

The entries of the names not run now are kept from the existing results file, each with
the command, commit and date of the run that wrote it (``recorded_by``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from benchmarks._common import (
    RESULTS,
    counts_by_document,
    one_of,
    paired_scores,
    read_result,
    result_name,
    write_result,
)
from benchmarks._mesh import fetch_for
from xlnel.analysis.protocol import matcher_scorer, protocol_sample  # noqa: E402
from xlnel.config import PipelineConfig, load_config, parse_overrides, resolve_includes  # noqa: E402
from xlnel.errors import ConfigError  # noqa: E402
from xlnel.experiments import run_experiment  # noqa: E402
from xlnel.experiments.runner import plan_cells  # noqa: E402
from xlnel.experiments.stages import CellStages, StageCache, TrainingData  # noqa: E402
from xlnel.experiments.summary import (  # noqa: E402
    bootstrap_interval,
    metric_value,
    pooled,
    pooled_counts,
    t_interval,
)
from xlnel.io._atomic import atomic_write  # noqa: E402

CAMONI = {c: f"configs/camoni-{c}.yaml" for c in ("diabetes", "sclerosis", "depression")}
BC5CDR = "configs/bc5cdr.yaml"
#: The BC5CDR names scored train -> dev: their config.
BC5CDR_DEV = {"bc5cdr": BC5CDR, "bc5cdr-mesh": "configs/bc5cdr-mesh.yaml"}
BC5CDR_LEVELS = ("span", "concept", "document")
#: Overrides of the BC5CDR config for its cross-validation inside the training file.
BC5CDR_TRAIN_CV = {"data.test": None}
#: The cross-validated names: their config and the overrides they add.
CROSS_VALIDATED: dict[str, tuple[str, dict[str, Any]]] = {
    **{name: (path, {}) for name, path in CAMONI.items()},
    "bc5cdr-train": (BC5CDR, BC5CDR_TRAIN_CV),
    "bc5cdr-mesh-train": (BC5CDR_DEV["bc5cdr-mesh"], BC5CDR_TRAIN_CV)}
#: The BC5CDR names cross-validated inside the training file.
BC5CDR_TRAIN = ("bc5cdr-train", "bc5cdr-mesh-train")
SEED = 0

PROTOCOL_SEEDS = range(5)

FoldMeasure = Callable[[PipelineConfig, CellStages], dict[str, Any]]
Overrides = Mapping[str, Any]
RUNTIME_KEYS = frozenset({"candidates.workers"})
"""Overrides that change how fast a run goes, not its figures: a summary made with other values
of them is reused."""


def filter_overrides(pipeline: Path | None) -> dict[str, Any]:
    """Dotted overrides giving the shipped configs the filter of ``pipeline`` (none for None).

    Raises:
        ConfigError: The file's ``filter`` section (includes resolved) names no filter.
    """
    if pipeline is None:
        return {}
    raw = yaml.safe_load(pipeline.read_text(encoding="utf-8")) or {}
    section = resolve_includes(raw, pipeline.parent, str(pipeline)).get("filter") or {}
    if "name" not in section:
        raise ConfigError(f"{pipeline}: the filter section names no filter")
    return {"filter.name": section["name"],
            "filter.options": dict(section.get("options") or {})}


def protocol_galperin2022(config: PipelineConfig, stages: CellStages) -> dict[str, Any]:
    """The reference system's sampled-classifier scores of one fold's filter on its test
    documents (``xlnel.analysis.protocol``), one draw per seed of :data:`PROTOCOL_SEEDS`."""
    gold = stages.test_documents()
    cands = stages.test_candidates()
    sample = protocol_sample(gold, cands, stages.filter(),
                             name_scores=matcher_scorer(stages.generator()),
                             plain_scores=stages.scores()[0])
    return {"level": sample.level, "threshold": sample.threshold,
            "draws": [sample.draw(seed).to_dict() for seed in PROTOCOL_SEEDS]}


EXTRA_FOLD_MEASURES: dict[str, FoldMeasure] = {"galperin2022": protocol_galperin2022}
"""Further per-fold measures: ``name -> f(config, stages)`` returning a JSON-able dict, stored
under ``per_fold[i]["extra"][name]`` (the stages come back from the stage cache)."""


def protocol_summary(extra: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Micro P/R/F1 of the protocol over folds (counts summed per seed), mean over seeds."""
    folds = [e["galperin2022"] for e in extra if "galperin2022" in e]
    if not folds:
        return None
    per_seed = []
    for i, seed in enumerate(PROTOCOL_SEEDS):
        tp, fp, fn = (sum(f["draws"][i][k] for f in folds) for k in ("tp", "fp", "fn"))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        per_seed.append({"seed": seed, "precision": p, "recall": r,
                         "f1": 2 * p * r / (p + r) if p + r else 0.0, "tp": tp, "fp": fp,
                         "fn": fn})
    mean = {k: sum(d[k] for d in per_seed) / len(per_seed) for k in ("precision", "recall", "f1")}
    return {"level": folds[0]["level"], "seeds": list(PROTOCOL_SEEDS), "mean": mean,
            "f1_range": [min(d["f1"] for d in per_seed), max(d["f1"] for d in per_seed)],
            "per_seed": per_seed}


def level_names(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Evaluation levels present in every record (in record order)."""
    first = [k for k, v in records[0]["metrics"].items() if k != "hrm" and "f1" in v]
    return [lvl for lvl in first if all(lvl in r["metrics"] for r in records)]


def over_folds(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean, sd and 95% t-interval over folds of P/R/F1 per level and of HRM recall."""
    out: dict[str, Any] = {}
    names = [f"{lvl}_{k}" for lvl in level_names(records) for k in ("precision", "recall", "f1")]
    names += [f"hrm_{lvl}" for lvl in ("span", "concept")
              if all(lvl in r["metrics"].get("hrm", {}) for r in records)]
    for name in names:
        values = [metric_value(r, name) for r in records]
        clean = [float(v) for v in values if v is not None]
        mean, low, high = t_interval(clean)
        out[name] = {"mean": mean, "ci_low": low, "ci_high": high,
                     "half_width": (high - low) / 2, "n": len(clean)}
    return out


def per_fold(records: Sequence[Mapping[str, Any]], extra: Sequence[dict[str, Any]]
             ) -> list[dict[str, Any]]:
    """The scores of each fold, with its sizes, threshold, DFT summary and extra measures."""
    rows = []
    for r, more in zip(records, extra, strict=True):
        rows.append({
            "fold": r["fold"], "test_documents": r["test_documents"],
            "train_documents": r["train_documents"], "threshold": r["threshold"],
            "levels": {lvl: r["metrics"][lvl] for lvl in level_names(records)},
            "hrm": r["metrics"].get("hrm", {}), "dft": r["dft"],
            "seconds": r["seconds"], "cached": r["cached"], "extra": more})
    return rows


def extra_measures(planned: Sequence[tuple[Any, PipelineConfig]], cache: StageCache,
                   enabled: bool = True) -> list[dict[str, Any]]:
    """:data:`EXTRA_FOLD_MEASURES` of every planned cell (empty dicts when there are none or
    ``enabled`` is false)."""
    if not EXTRA_FOLD_MEASURES or not enabled:
        return [{} for _ in planned]
    data = TrainingData()
    out = []
    for _, cfg in planned:
        stages = CellStages(cfg, cache, data)
        out.append({name: f(cfg, stages) for name, f in EXTRA_FOLD_MEASURES.items()})
    return out


def cross_validate(config: str, folds: int, work: Path, cache: Path,
                   grid: Mapping[str, Sequence[Any]] | None = None,
                   overrides: Overrides | None = None, fold_ids: Sequence[int] | None = None
                   ) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Run (or resume) the cross-validation (only the folds ``fold_ids`` if given); returns
    (axes, fold records) per grid point."""
    records = run_experiment(config, grid or {}, [SEED], work, overrides=dict(overrides or {}),
                             cache_dir=cache, progress=True, folds=folds, fold_ids=fold_ids)
    points: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for r in records:
        points.setdefault(repr(sorted(r["axes"].items())), (r["axes"], []))[1].append(r)
    return list(points.values())


def summary(records: Sequence[Mapping[str, Any]], extra: Sequence[dict[str, Any]]
            ) -> dict[str, Any]:
    """Per-fold scores, mean ± 95% t-interval over folds, pooled scores with bootstrap CIs."""
    return {"folds": len(records),
            "documents": sum(r["test_documents"] for r in records),
            "per_fold": per_fold(records, extra),
            "over_folds": over_folds(records),
            "pooled": pooled(records),
            "galperin2022": protocol_summary(extra),
            "cell_seconds": round(sum(r["seconds"]["total"] for r in records), 1)}


def cross_validated_config(name: str) -> tuple[str, dict[str, Any]]:
    """The config and added overrides of a name of :data:`CROSS_VALIDATED`, with the MeSH
    tables its config reads fetched first (:func:`benchmarks._mesh.fetch_for`)."""
    config, added = CROSS_VALIDATED[name]
    fetch_for(config)
    return config, added


def cross_validated(name: str, folds: int, work: Path, cache: Path, overrides: Overrides,
                    protocol: bool = True) -> dict[str, Any]:
    """The cross-validation of a name of :data:`CROSS_VALIDATED` (a Camoni community,
    ``bc5cdr-train`` or ``bc5cdr-mesh-train``)."""
    t0 = time.perf_counter()
    config, added = CROSS_VALIDATED[name]
    overrides = {**overrides, **added}
    ((_, records),) = cross_validate(config, folds, work / name, cache, overrides=overrides)
    planned = plan_cells(config, {}, [SEED], dict(overrides), folds=folds)
    extra = extra_measures(planned, StageCache(cache), protocol)
    out = {"config": config, **({"overrides": added} if added else {}),
           **summary(records, extra)}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def bc5cdr(work: Path, cache: Path, overrides: Overrides, protocol: bool = True,
           name: str = "bc5cdr", against_shipped: bool = False) -> dict[str, Any]:
    """BC5CDR trained on train, scored on dev, with document-bootstrap intervals; a name other
    than ``bc5cdr`` (:data:`BC5CDR_DEV`) also gets its paired bootstrap against ``bc5cdr``, or,
    with ``against_shipped``, against its own config without the ``overrides`` (those of
    :data:`RUNTIME_KEYS` kept), run or resumed from ``WORK/NAME-shipped``."""
    t0 = time.perf_counter()
    config = BC5CDR_DEV[name]
    (record,) = run_experiment(config, {}, [SEED], work / name, dict(overrides),
                               cache_dir=cache, progress=True)
    levels: dict[str, Any] = {}
    for level in BC5CDR_LEVELS:
        got = pooled_counts([record], level)
        if got is None:
            continue
        levels[level] = {**record["metrics"][level], "ci": bootstrap_interval(got[1])}
    (_, cfg), = plan_cells(config, {}, [SEED], dict(overrides))
    extra = extra_measures([(None, cfg)], StageCache(cache), protocol)
    out = {"config": config, "train": "train.pubtator", "scored_on": "dev.pubtator",
           "documents": record["test_documents"], "levels": levels,
           "galperin2022": protocol_summary(extra),
           "hrm": record["metrics"]["hrm"], "threshold": record["threshold"],
           "cell_seconds": record["seconds"]["total"]}
    base_run: tuple[str, Path, dict[str, Any], dict[str, Any]] | None = None
    if against_shipped:
        trial = {k: v for k, v in overrides.items() if k not in RUNTIME_KEYS}
        runtime = {k: v for k, v in overrides.items() if k in RUNTIME_KEYS}
        base_run = (config, work / f"{name}-shipped", runtime, {"without": trial})
    elif name != "bc5cdr":
        base_run = (BC5CDR, work / "bc5cdr", dict(overrides), {})
    if base_run is not None:
        against, base_work, base_overrides, described = base_run
        (base,) = run_experiment(against, {}, [SEED], base_work, base_overrides,
                                 cache_dir=cache, progress=True)
        out["paired"] = {"against": against, **described, **{
            level: paired_scores(counts_by_document([base], level),
                                 counts_by_document([record], level))
            for level in BC5CDR_LEVELS}}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def shipped_prefilter(overrides: Overrides, config: str) -> dict[str, Any]:
    """``overrides`` whose swapped-in filter (``filter.options``) runs its cascade's prefilter
    with the options of ``config``'s own filter, the features chosen for that corpus.

    Raises:
        ConfigError: The swapped-in filter has no prefilter, or another filter than the
            config's.
    """
    options = dict(overrides.get("filter.options") or {})
    own = load_config(config).filter
    if options.get("prefilter") != own.name:
        raise ConfigError(f"--shipped-prefilter: the --filter's prefilter "
                          f"{options.get('prefilter')!r} is not the filter of {config} "
                          f"({own.name})")
    return {**overrides, "filter.options": {**options, "prefilter_options": dict(own.options)}}


def name_overrides(name: str, overrides: Overrides, shipped: bool
                   ) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The config of ``name`` (the MeSH tables it reads fetched first), the overrides it runs
    with (:func:`shipped_prefilter` of ``overrides`` if ``shipped``), and those its name adds."""
    config, added = CROSS_VALIDATED.get(name, (BC5CDR_DEV.get(name, BC5CDR), {}))
    fetch_for(config)
    ov = shipped_prefilter(overrides, config) if shipped else dict(overrides)
    return config, ov, added


def summary_key(config: str, overrides: Mapping[str, Any], folds: int, protocol: bool
                ) -> dict[str, Any]:
    """What a finished run's summary must match to be reused: the resolved config (so an edit
    of the shipped config file is a new run, not a stale summary), folds and protocol; the
    :data:`RUNTIME_KEYS` are left out."""
    kept = {k: v for k, v in overrides.items() if k not in RUNTIME_KEYS}
    resolved = load_config(config, dict(kept)).model_dump(mode="json")
    for dotted in RUNTIME_KEYS:
        *path, last = dotted.split(".")
        section = resolved
        for part in path:
            section = section.get(part, {})
        section.pop(last, None)
    return {"folds": folds, "protocol": protocol, "config": resolved}


def resumed(work: Path, name: str, key: Mapping[str, Any],
            run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``run()``, or the summary a finished run with the same ``key`` left in
    ``WORK/NAME/summary.json``; a new summary is written there."""
    path = work / name / "summary.json"
    if path.is_file():
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("key") == key:
            return dict(saved["result"])
    result = run()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as f:
        json.dump({"key": key, "result": result}, f)
    return result


def merge_entries(new: Mapping[str, Any], name: str = "cv_accuracy", folder: Path | None = None
                  ) -> dict[str, Any]:
    """``new`` entries, after those of the results file ``NAME.json`` (in ``folder``) that it
    lacks.

    A kept entry records the command, commit and date of the run that wrote it under
    ``recorded_by`` (unless it already holds one), since the file's own envelope then names
    this run.
    """
    path = (RESULTS if folder is None else folder) / f"{name}.json"
    if not path.is_file():
        return dict(new)
    old = read_result(name, folder)
    merged: dict[str, Any] = {}
    for name, entry in old["results"]["results"].items():
        if name in new:
            continue
        where = {k: old.get(k) for k in ("command", "commit", "date")}
        merged[name] = {**entry, "recorded_by": entry.get("recorded_by", where)}
    return {**merged, **new}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", default=[*CAMONI, "bc5cdr", "bc5cdr-train"],
                        type=one_of([*CAMONI, *BC5CDR_DEV, *BC5CDR_TRAIN]))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-cv-accuracy"))
    parser.add_argument("--filter", type=Path, default=None,
                        help="pipeline file whose filter replaces the shipped configs' filter")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a key of every config (repeatable)")
    parser.add_argument("--name", type=result_name, default="cv_accuracy",
                        help="results file name")
    parser.add_argument("--no-protocol", action="store_true",
                        help="skip the galperin2022 protocol scores")
    parser.add_argument("--shipped-prefilter", action="store_true",
                        help="the prefilter of the --filter cascade takes the options of each "
                             "shipped config's own filter")
    parser.add_argument("--against-shipped", action="store_true",
                        help="pair each BC5CDR dev name, run with --set, against its "
                             "shipped config (see the module's docstring)")
    parser.add_argument("--fold-ids", type=lambda t: [int(x) for x in t.split(",")],
                        default=None, metavar="I,J",
                        help="run only these folds into WORK/NAME/runs.jsonl and write no "
                             "results (see the module's docstring)")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    overrides = {**filter_overrides(args.filter), **parse_overrides(args.set)}
    protocol = not args.no_protocol

    if args.against_shipped and not (set(overrides) - RUNTIME_KEYS
                                     and set(args.names) <= set(BC5CDR_DEV)):
        parser.error("--against-shipped: give --set or --filter, and only names among "
                     f"{sorted(BC5CDR_DEV)}")
    if args.fold_ids is not None:
        for name in args.names:
            if name not in CROSS_VALIDATED:
                parser.error(f"--fold-ids: {name} is not cross-validated")
            config, ov, added = name_overrides(name, overrides, args.shipped_prefilter)
            cross_validate(config, args.folds, args.work / name, args.cache,
                           overrides={**ov, **added}, fold_ids=args.fold_ids)
            print(name, "folds", args.fold_ids, "in", args.work / name / "runs.jsonl",
                  flush=True)
        return
    results: dict[str, Any] = {}
    for name in args.names:
        config, ov, added = name_overrides(name, overrides, args.shipped_prefilter)
        key = summary_key(config, {**ov, **added}, args.folds, protocol)
        if name in BC5CDR_DEV:
            if args.against_shipped:  # a summary without the pairing is not this run's
                key["against_shipped"] = True
            results[name] = resumed(args.work, name, key, functools.partial(
                bc5cdr, args.work, args.cache, ov, protocol, name, args.against_shipped))
        else:
            results[name] = resumed(args.work, name, key, functools.partial(
                cross_validated, name, args.folds, args.work, args.cache, ov, protocol))
        if args.shipped_prefilter:
            results[name]["prefilter_options"] = ov["filter.options"]["prefilter_options"]
        print(name, "done", flush=True)
    filter_desc = ("xlnel.gbdt.v1 (shipped configs)" if not overrides else
                   f"the shipped configs with the overrides {overrides}"
                   + ("" if args.filter is None else f" (filter of {args.filter})"))
    write_result(args.name, {
        "protocol": f"{args.folds}-fold cross-validation by document over data.train "
                    "(folds seeded by data.split_seed; test_fraction not used), seed "
                    f"{SEED}; intervals: 95% t over folds, 95% document bootstrap (pooled "
                    "out-of-fold counts, and BC5CDR dev)",
        "filter": filter_desc,
        "threads": os.environ.get("OMP_NUM_THREADS", "default"),
        "timing": "seconds: wall time of this run (per NAME, from WORK/NAME/summary.json when "
                  "resumed); per_fold[i].seconds are the stage times of the fold and cached "
                  "tells which stages came from the stage cache (filled by an earlier run of "
                  "the same cells), so cached stages cost only their loading",
        "results": merge_entries(results, args.name),
    })


if __name__ == "__main__":
    main()
