"""How many annotated documents the shipped pipelines need: learning curves on BC5CDR and Camoni.

The data-size rows of the single-split ablations (:mod:`benchmarks.ablations`) predate the
shipped configs. This benchmark trains each shipped config on the first N training documents
(``data.max_documents``, file order, so every smaller set lies inside every larger one) and
pairs each run against a larger one on the same test documents.

BC5CDR (``configs/bc5cdr.yaml``, trained on train.pubtator, scored on all of dev.pubtator):

- ``docs-N`` for N in 50, 100, 166 (the training posts of one Camoni fold), 250 and 375,
  each paired against ``shipped`` (all 500);
- ``docs-166-share``: 166 documents with the share R 0.2 of the dictionary and no
  cross-fitting, as the Camoni configs train, paired against ``docs-166`` (does cross-fitting
  still win with few documents?).

Camoni (``configs/camoni-*.yaml``, the 5-fold cross-validation of :mod:`benchmarks.cv_accuracy`;
N cuts each fold's own training posts, about 166 of them):

- ``posts-N`` for N in 25, 50 and 100, the other communities' posts training as shipped,
  paired against ``shipped``;
- ``own``: no other community's posts (``data.extra_train`` empty), paired against
  ``shipped``; ``own-posts-N``: that with N own posts, paired against ``own`` -- a new
  community or language with N annotated posts and nothing else.

With ``--subset-seeds S ...`` every setting of a learning curve is run again on N documents
drawn at random with each seed (``data.subset_seed``; one seed's draws are nested too), named
``NAME-seedS`` and paired like ``NAME`` (against ``NAME``'s pair, or its draw of the same seed
when that pair is a curve's point too). Each curve is refitted per draw, and the first-N
setting's entry gets ``draws``: per level the F1 of the first N and of every seed, their mean and
range, and the same for the slopes (``curves_draws``): how much of a curve is the choice of
documents rather than their number.

Per run and level (BC5CDR: span, concept, document; Camoni: strict span): pooled precision,
recall and F1 with 95% document-bootstrap intervals, the paired document bootstrap (1,000
resamples, two-sided p) and the HRM recall of the candidates. Per learning curve (BC5CDR's
``docs-N`` with ``shipped``; Camoni's ``posts-N`` with ``shipped`` and ``own-posts-N`` with
``own``): its points (own training documents, F1) and ``f1_per_doubling``, the least-squares
slope of F1 on log2 of the own documents. Each run is kept in
``WORK/CORPUS/SETTING/runs.jsonl`` and its stages in the stage cache ``--cache``.

    python -m benchmarks data_size [--corpora bc5cdr diabetes ...] [--folds 5]
        [--subset-seeds 1 2] [--cache DIR] [--work DIR]

writes ``benchmarks/results/data_size.json``, keeping the corpora of an existing file that
this run does not score (each with the ``recorded_by`` of the run that wrote it).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import level_counts, paired_scores, pooled_hrm, write_result
from benchmarks.cv_accuracy import BC5CDR, BC5CDR_LEVELS, CAMONI, SEED, merge_entries
from xlnel.experiments.runner import run_experiment

#: Setting -> (config overrides on top of the shipped config, the setting it is paired with).
Settings = dict[str, tuple[dict[str, Any], str]]

BC5CDR_SETTINGS: Settings = {
    "shipped": ({}, "shipped"),
    **{f"docs-{n}": ({"data.max_documents": n}, "shipped") for n in (50, 100, 166, 250, 375)},
    "docs-166-share": ({"data.max_documents": 166, "dft.R": 0.2, "dft.crossfit": 0},
                       "docs-166"),
}
CAMONI_SETTINGS: Settings = {
    "shipped": ({}, "shipped"),
    **{f"posts-{n}": ({"data.max_documents": n}, "shipped") for n in (25, 50, 100)},
    "own": ({"data.extra_train": []}, "shipped"),
    **{f"own-posts-{n}": ({"data.max_documents": n, "data.extra_train": []}, "own")
       for n in (25, 50, 100)},
}
CAMONI_LEVELS = ("span",)

#: The learning curves fitted per corpus: series name -> its settings.
SERIES: dict[str, dict[str, list[str]]] = {
    "bc5cdr": {"shipped": ["shipped", *(n for n in BC5CDR_SETTINGS
                                        if n.startswith("docs-") and not n.endswith("-share"))]},
    "camoni": {"with-others": ["shipped", *(n for n in CAMONI_SETTINGS
                                            if n.startswith("posts-"))],
               "own-only": ["own", *(n for n in CAMONI_SETTINGS if n.startswith("own-posts-"))]},
}


def settings_of(corpus: str, seeds: Sequence[int] = ()
                ) -> tuple[str, Settings, tuple[str, ...]]:
    """The config, settings and levels of ``bc5cdr`` or a Camoni community, with the draws of
    ``seeds`` (:func:`with_draws`)."""
    if corpus == "bc5cdr":
        return BC5CDR, with_draws(BC5CDR_SETTINGS, "bc5cdr", seeds), BC5CDR_LEVELS
    return CAMONI[corpus], with_draws(CAMONI_SETTINGS, "camoni", seeds), CAMONI_LEVELS


def drawn(name: str, seed: int) -> str:
    """The name of setting ``name`` run on documents drawn with ``seed``."""
    return f"{name}-seed{seed}"


def curve_points(kind: str) -> list[str]:
    """The settings of ``kind``'s learning curves that cut the documents (``max_documents``)."""
    settings = BC5CDR_SETTINGS if kind == "bc5cdr" else CAMONI_SETTINGS
    return [n for names in SERIES[kind].values() for n in names
            if "data.max_documents" in settings[n][0]]


def with_draws(settings: Settings, kind: str, seeds: Sequence[int]) -> Settings:
    """``settings`` and, per seed, each curve point on documents drawn with that seed, paired
    with its pair's draw when the pair is a curve point, else with the pair itself."""
    points = curve_points(kind)
    out = dict(settings)
    for seed in seeds:
        for name in points:
            overrides, against = settings[name]
            out[drawn(name, seed)] = ({**overrides, "data.subset_seed": seed},
                                      drawn(against, seed) if against in points else against)
    return out


def series_of(kind: str, seeds: Sequence[int] = ()) -> dict[str, list[str]]:
    """The learning curves of ``kind``: the first-N series and one per seed's draws."""
    points = set(curve_points(kind))
    out = dict(SERIES[kind])
    for seed in seeds:
        for series, names in SERIES[kind].items():
            out[drawn(series, seed)] = [drawn(n, seed) if n in points else n for n in names]
    return out


def run_setting(config: str, overrides: dict[str, Any], folds: int | None, levels: tuple[str, ...],
                work: Path, cache: Path
                ) -> tuple[list[dict[str, Any]], dict[str, tuple[list[str], Any]]]:
    """The records of one setting (one train -> test run, or one per fold) and their pooled
    per-document counts at each level."""
    records = run_experiment(config, {}, [SEED], work, dict(overrides), cache_dir=cache,
                             progress=True, folds=folds)
    return records, level_counts(records, levels, work)


def run(corpus: str, folds: int, work: Path, cache: Path, seeds: Sequence[int] = ()
        ) -> dict[str, Any]:
    """Every setting of ``corpus``, each paired against the setting it names."""
    config, settings, levels = settings_of(corpus, seeds)
    kind = "bc5cdr" if corpus == "bc5cdr" else "camoni"
    cv = None if corpus == "bc5cdr" else folds
    runs = {name: run_setting(config, overrides, cv, levels, work / corpus / name, cache)
            for name, (overrides, _) in settings.items()}
    out: dict[str, Any] = {"config": config, "subset_seeds": list(seeds)}
    for name, (overrides, against) in settings.items():
        records, counts = runs[name]
        base = runs[against][1]
        entry: dict[str, Any] = {
            "overrides": overrides, "paired_with": against,
            "training_documents_mean": sum(r["train_documents"] for r in records) / len(records),
            "dictionary_entries_added_mean":
                sum(r["dft"]["entries_added"] for r in records) / len(records),
            "hrm": {level: pooled_hrm(records, level)["recall"]
                    for level in ("span", "concept") if level in records[0]["metrics"]["hrm"]},
            "cell_seconds": round(sum(r["seconds"]["total"] for r in records), 1)}
        for level in levels:
            ids, got = counts[level]
            base_ids, base_counts = base[level]
            if ids != base_ids:
                raise ValueError(f"{corpus}: {name} and {against} were scored on different "
                                 "documents")
            entry[level] = paired_scores(base_counts, got)
        out[name] = entry
        print(corpus, name, {level: round(entry[level]["f1"], 4) for level in levels},
              flush=True)
    for name, entry in out.items():
        if name in settings:
            entry["own_documents_mean"] = own_documents(name, settings, out)
    out["curves"] = {series: {level: curve(out, names, level) for level in levels}
                     for series, names in series_of(kind, seeds).items()}
    if seeds:
        summarize_draws(out, kind, seeds, levels)
    return out


def spread(values: Sequence[float]) -> dict[str, Any]:
    """``values`` with their mean, minimum and maximum."""
    return {"values": list(values), "mean": sum(values) / len(values), "min": min(values),
            "max": max(values)}


def summarize_draws(out: dict[str, Any], kind: str, seeds: Sequence[int],
                    levels: Sequence[str]) -> None:
    """Add ``draws`` to each first-N curve point of ``out`` (its F1 and those of its seeded
    draws, per level) and ``curves_draws`` (each curve's slope, first N and per seed)."""
    for name in curve_points(kind):
        out[name]["draws"] = {
            "subset_seeds": [None, *seeds],
            **{level: spread([out[n][level]["f1"] for n in (name, *(drawn(name, s)
                                                                     for s in seeds))])
               for level in levels}}
    out["curves_draws"] = {
        series: {"subset_seeds": [None, *seeds],
                 **{level: spread([out["curves"][n][level]["f1_per_doubling"]
                                   for n in (series, *(drawn(series, s) for s in seeds))])
                    for level in levels}}
        for series in SERIES[kind]}


def own_documents(name: str, settings: Settings, entries: dict[str, Any]) -> float:
    """How many of a setting's training documents are the corpus's own (not
    ``data.extra_train``), on average over its runs."""
    overrides = settings[name][0]
    if "data.max_documents" in overrides:
        return float(overrides["data.max_documents"])
    own = [n for n, (o, _) in settings.items() if o == {"data.extra_train": []}]
    source = own[0] if own and "data.extra_train" not in overrides else name
    return float(entries[source]["training_documents_mean"])


def curve(entries: dict[str, Any], names: list[str], level: str) -> dict[str, Any]:
    """F1 at ``level`` against the number of own training documents, and the least-squares
    slope of F1 on log2 of that number: points of F1 gained per doubling of the documents."""
    points = sorted((entries[n]["own_documents_mean"], entries[n][level]["f1"]) for n in names)
    xs = [math.log2(x) for x, _ in points]
    mx, my = sum(xs) / len(xs), sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, (_, y) in zip(xs, points, strict=True))
    slope = sxy / sxx if sxx else 0.0
    return {"level": level, "settings": names, "points": [list(p) for p in points],
            "f1_per_doubling": slope}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", nargs="+", choices=["bc5cdr", *CAMONI],
                        default=["bc5cdr", *CAMONI])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--subset-seeds", type=int, nargs="*", default=[1, 2],
                        help="seeds of the random draws of each curve point (none: first N "
                             "only)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-data-size"))
    args = parser.parse_args()
    t0 = time.perf_counter()
    if len(set(args.subset_seeds)) != len(args.subset_seeds):
        parser.error(f"--subset-seeds repeats a seed: {args.subset_seeds}")
    results = {corpus: run(corpus, args.folds, args.work, args.cache, args.subset_seeds)
               for corpus in args.corpora}
    write_result("data_size", {
        "protocol": f"BC5CDR: {BC5CDR} trained on the first N documents of train.pubtator "
                    f"(file order), scored on all of dev.pubtator; Camoni: {args.folds}-fold "
                    "cross-validation by document over every visible post (cv_accuracy.py), "
                    f"each fold's own training posts cut to the first N; seed {SEED}; pooled "
                    "counts per level; NAME-seedS: N documents drawn with data.subset_seed S "
                    "instead of the first N (subset_seeds per corpus)",
        "test": "paired bootstrap over test documents against the setting named in "
                "paired_with, 1000 resamples, two-sided p",
        "results": merge_entries(results, "data_size"),
        "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
