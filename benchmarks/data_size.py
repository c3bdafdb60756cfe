"""How many annotated documents the shipped BC5CDR pipeline needs: a learning curve on dev.

The data-size rows of the single-split ablations (:mod:`benchmarks.ablations`) predate the
shipped config (cross-fitted DFT, the filter's lexical, n-gram, kind and tagger features). This
benchmark trains ``configs/bc5cdr.yaml`` on the first N documents of ``train.pubtator``
(``data.max_documents``, file order, so every smaller set lies inside every larger one) and
scores each run on the whole of ``dev.pubtator``:

- ``docs-N`` for N in 50, 100, 166 (the training posts of one Camoni fold), 250 and 375;
- ``docs-166-share``: 166 documents with the share R 0.2 of the dictionary and no
  cross-fitting, as the Camoni configs train, to see whether cross-fitting still wins with few
  documents (paired against ``docs-166``);
- ``shipped``: all 500.

Per run and level (span, concept, document): pooled precision, recall and F1 with 95%
document-bootstrap intervals, the paired document bootstrap against ``shipped`` (1,000
resamples, two-sided p), and the HRM recall of the candidates. Each run is kept in
``WORK/SETTING/runs.jsonl`` and its stages in the stage cache ``--cache``.

    python -m benchmarks data_size [--cache DIR] [--work DIR] [SETTING ...]

writes ``benchmarks/results/data_size.json``, keeping the settings of an existing file that
this run does not score (each with the ``recorded_by`` of the run that wrote it).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks._common import one_of, paired_scores, write_result
from benchmarks.cv_accuracy import BC5CDR, BC5CDR_LEVELS, SEED, merge_entries
from xlnel.experiments.runner import run_experiment
from xlnel.experiments.summary import pooled_counts

#: Setting -> (config overrides on top of configs/bc5cdr.yaml, the setting it is paired with).
SETTINGS: dict[str, tuple[dict[str, Any], str]] = {
    "shipped": ({}, "shipped"),
    **{f"docs-{n}": ({"data.max_documents": n}, "shipped") for n in (50, 100, 166, 250, 375)},
    "docs-166-share": ({"data.max_documents": 166, "dft.R": 0.2, "dft.crossfit": 0},
                       "docs-166"),
}


def run_setting(overrides: dict[str, Any], work: Path, cache: Path
                ) -> tuple[dict[str, Any], dict[str, tuple[list[str], Any]]]:
    """The record of one train -> dev run and its per-document counts at each level."""
    (record,) = run_experiment(BC5CDR, {}, [SEED], work, dict(overrides), cache_dir=cache,
                               progress=True)
    counts = {}
    for level in BC5CDR_LEVELS:
        got = pooled_counts([record], level)
        if got is None:
            raise ValueError(f"{work}/runs.jsonl: the run lacks per-document {level} counts")
        counts[level] = got
    return record, counts


def run(names: list[str], work: Path, cache: Path) -> dict[str, Any]:
    """Every setting of ``names`` (and the settings they are paired with) on dev."""
    wanted = list(dict.fromkeys(SETTINGS[n][1] for n in names)) + names
    runs = {name: run_setting(SETTINGS[name][0], work / name, cache)
            for name in dict.fromkeys(wanted)}
    out: dict[str, Any] = {}
    for name in names:
        overrides, against = SETTINGS[name]
        record, counts = runs[name]
        _, base = runs[against]
        entry: dict[str, Any] = {
            "overrides": overrides, "paired_with": against,
            "training_documents": record["train_documents"],
            "dictionary_entries_added": record["dft"]["entries_added"],
            "hrm": {level: record["metrics"]["hrm"][level]["recall"]
                    for level in ("span", "concept")},
            "threshold": record["threshold"], "cell_seconds": record["seconds"]["total"]}
        for level in BC5CDR_LEVELS:
            ids, got = counts[level]
            base_ids, base_counts = base[level]
            if ids != base_ids:
                raise ValueError(f"{name} and {against} were scored on different documents")
            entry[level] = paired_scores(base_counts, got)
        out[name] = entry
        print(name, {level: round(entry[level]["f1"], 4) for level in BC5CDR_LEVELS},
              flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("settings", nargs="*", default=list(SETTINGS),
                        type=one_of(list(SETTINGS)))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-data-size"))
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = run(args.settings, args.work, args.cache)
    write_result("data_size", {
        "protocol": f"{BC5CDR} trained on the first N documents of train.pubtator (file order), "
                    f"scored on all of dev.pubtator (seed {SEED}); pooled counts per level",
        "test": "paired bootstrap over dev documents against the setting named in "
                "paired_with, 1000 resamples, two-sided p",
        "results": merge_entries(results, "data_size"),
        "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
