"""Linking before any annotation without everyday words: ``linking.tsv`` at each cut, on Camoni.

The pipeline ``xlnel adapt`` writes (``pipeline.yaml``: no annotations, no learned filter, a
candidate kept at cosine 1.0) links with ``linking.tsv``: ``dictionary.tsv`` without the
generated one-word names that read as everyday words, the target words of the N most frequent
English words of the pairs (:func:`xlnel.dictionary.adapt.linking_entries`, N =
:data:`~xlnel.dictionary.adapt.EVERYDAY_TOP` by default). This benchmark builds the Hebrew
dictionary as ``benchmarks/zero_annotation.py`` does (English HPO + MeSH and ``muse/en-he.txt``
alone, no ``--corpus``), writes the linking dictionary at every N of :data:`TOPS` (0: the whole
dictionary) and links every visible post of each Camoni community with each. Nothing is learned,
so one pass over the posts gives each post's out-of-fold prediction. Reported per community and
N: strict span precision, recall and F1 with a 95% document-bootstrap interval, and the paired
bootstrap (1,000 resamples) against N = 0; and ``chosen``: N chosen by 5-fold cross-validation
by document (seed 0), each fold taking the N of highest span F1 on its other four folds' posts
(the chosen N per fold recorded), paired against N = 0 too.

    python -m benchmarks zero_annotation_everyday [--communities diabetes ...] [--work DIR]
        [--link-work DIR] [--rebuild] [--adapt-args '...']

Writes ``benchmarks/results/zero_annotation_everyday.json``. Run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._adapt import adapt_options, add_adapt_arguments, run_adapt
from benchmarks._common import paired_scores, scores_with_ci, write_result
from benchmarks.dictionary_coverage import COMMUNITIES, DATA, KBS
from xlnel.config import load_config
from xlnel.dictionary.adapt import (
    DICTIONARY_FILE,
    EVERYDAY_TOP,
    PIPELINE_FILE,
    lexicon_pairs,
    linking_entries,
)
from xlnel.dictionary.dictionary import Dictionary
from xlnel.dictionary.langdata import load_profile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.evaluation.bootstrap import document_counts
from xlnel.evaluation.files import read_corpus
from xlnel.evaluation.folds import assign_folds
from xlnel.runtime import Pipeline
from xlnel.training.recipe import train

#: The cuts compared (0: the whole dictionary, as before the linking dictionary existed).
TOPS = (0, 1000, 2000, 3000, 5000)
FOLDS, SEED, LEVEL = 5, 0, "span"


def linking_file(build: Path, top: int, work: Path, dictionary: Dictionary,
                 pairs: list[tuple[str, str]]) -> tuple[Path, int]:
    """The build's dictionary (read once by the caller, with the pairs) without the everyday
    one-word names of cut ``top``, and how many entries that leaves out."""
    if top == 0:
        return build / DICTIONARY_FILE, 0
    path = work / f"linking-{top}.tsv"
    kept = linking_entries(dictionary, pairs, "he", load_profile("he").prefixes, top)
    Dictionary(kept).save(path)
    return path, len(dictionary) - len(kept)


def linked_counts(build: Path, names: Path, work: Path,
                  corpora: dict[str, list[Any]]) -> dict[str, np.ndarray]:
    """Per-post span counts of ``pipeline.yaml`` linking with ``names``, per community."""
    config = load_config(build / PIPELINE_FILE,
                         overrides={"dictionary.extra": [str(names.resolve())]})
    folder = work / f"pipeline-{names.stem}"
    train(config, folder, overwrite=True)
    pipeline = Pipeline.load(folder)
    return {c: document_counts(docs, pipeline.link_batch(docs), LEVEL)
            for c, docs in corpora.items()}


def _f1(counts: np.ndarray) -> float:
    tp, fp, fn = counts.sum(axis=0).tolist()
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def chosen(per_top: dict[int, np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """Counts of N chosen on each fold's other folds (highest span F1; ties: the smaller N)."""
    n = len(next(iter(per_top.values())))
    folds = np.asarray(assign_folds(n, FOLDS, SEED))
    out = np.zeros_like(next(iter(per_top.values())))
    picks = []
    for f in range(FOLDS):
        best = max(sorted(per_top), key=lambda t: _f1(per_top[t][folds != f]))
        picks.append(best)
        out[folds == f] = per_top[best][folds == f]
    return out, picks


def main() -> None:
    """Build (or reuse) the dictionary, link every post at every cut, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--communities", nargs="+", default=list(COMMUNITIES),
                        choices=COMMUNITIES)
    add_adapt_arguments(parser)
    parser.add_argument("--link-work", type=Path, default=Path("/tmp/xlnel-zero-everyday"),
                        help="Folder of the linking dictionaries and pipelines.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    t0 = time.perf_counter()
    target = args.work / "adapt-he-nocorpus"
    build = run_adapt("he", DATA / "muse/en-he.txt", list(KBS), target, adapt_options(args),
                      args.rebuild)
    args.link_work.mkdir(parents=True, exist_ok=True)
    corpora = {c: read_corpus(DATA / f"camoni/{c}.jsonl") for c in args.communities}
    dictionary = Dictionary.load(target / DICTIONARY_FILE)
    pairs = lexicon_pairs(Lexicon.from_file(DATA / "muse/en-he.txt"))
    counts: dict[int, dict[str, np.ndarray]] = {}
    left_out: dict[int, int] = {}
    for top in TOPS:
        names, left_out[top] = linking_file(target, top, args.link_work, dictionary, pairs)
        counts[top] = linked_counts(target, names, args.link_work, corpora)
    results: dict[str, Any] = {}
    for c in args.communities:
        base = counts[0][c]
        row: dict[str, Any] = {str(t): (scores_with_ci(base) if t == 0
                                        else paired_scores(base, counts[t][c]))
                               for t in TOPS}
        picked, picks = chosen({t: counts[t][c] for t in TOPS})
        row["chosen"] = {**paired_scores(base, picked), "tops": picks}
        results[c] = row
    pooled = {str(t): paired_scores(np.vstack([counts[0][c] for c in args.communities]),
                                    np.vstack([counts[t][c] for c in args.communities]))
              for t in TOPS}
    write_result("zero_annotation_everyday", {
        "benchmark": "zero_annotation_everyday", "level": LEVEL, "tops": list(TOPS),
        "default_top": EVERYDAY_TOP, "folds": FOLDS, "seed": SEED, "build": build,
        "entries_left_out": {str(t): n for t, n in left_out.items()},
        "results": results, "pooled": pooled,
        "seconds": round(time.perf_counter() - t0, 1)},
        settings={"communities": args.communities, "kb": list(KBS),
                  "pairs": str(DATA / "muse/en-he.txt"), "adapt_args": args.adapt_args})
    for c, row in results.items():
        print(f"{c}: " + ", ".join(f"{t} {row[str(t)]['f1']:.3f}" for t in TOPS)
              + f", chosen {row['chosen']['f1']:.3f} ({row['chosen']['tops']})")


if __name__ == "__main__":
    main()
