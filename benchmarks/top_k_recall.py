"""How many names per span the transformer filter must read: candidate recall against top k.

The matcher keeps up to m = 50 names per span for recall; the cross-encoder reads only the
``top_k_per_span`` best of them (``xlnel.filtering._pairs.top_k_mask``: distinct names ranked
by matcher score, ``name_ranks``). For a trained pipeline this script regenerates the candidates
of the *filter's training documents* (the config's training documents minus the held-out split and
minus the DFT share, never the held-out ones) and reports, for each k, the share of gold
mentions still reachable (span level: some candidate at the gold offsets; concept level: the
gold concept among the kept candidates there) and the (span, name) pairs left to score.

Run from the repository root, e.g.
``python -m benchmarks top_k_recall --pipeline RUNS/diabetes --name camoni-diabetes``; results
are merged into ``benchmarks/results/top_k_recall.json`` under NAME.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks._common import read_figures, write_result
from xlnel.dictionary.dft import split_documents
from xlnel.evaluation import hrm_recall
from xlnel.filtering._pairs import name_ranks
from xlnel.pipeline import Pipeline, load_training_documents


def measure(pipeline_dir: str, ks: list[int]) -> dict[str, Any]:
    pipeline = Pipeline.load(pipeline_dir)
    config = pipeline.config
    train, _held_out = load_training_documents(config)
    _dft, docs = split_documents(train, config.dft.R, config.dft.seed)
    t0 = time.perf_counter()
    candidates = pipeline.candidates(docs)
    seconds = time.perf_counter() - t0
    levels = ("span", "concept") if config.filter.select_level == "concept" else ("span",)
    ranks = [name_ranks(cands) for cands in candidates]  # once; each k is a cut of them
    rows = []
    for k in [*ks, None]:
        kept = {d.id: [c for c, r in zip(cands, rank, strict=True) if k is None or r <= k]
                for d, cands, rank in zip(docs, candidates, ranks, strict=True)}
        row: dict[str, Any] = {"k": k if k is not None else "all",
                               "pairs": sum(len(c) for c in kept.values())}
        for level in levels:
            report = hrm_recall(docs, kept, level)
            row[f"{level}_recall"] = round(report.recall, 4)
            row[f"{level}_found"] = report.found
            row[f"{level}_total"] = report.total
        rows.append(row)
    return {"pipeline": pipeline_dir, "documents": len(docs),
            "documents_note": "the filter's training documents (no held-out, no DFT share)",
            "select_level": config.filter.select_level, "candidate_seconds": round(seconds, 1),
            "by_k": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", required=True, help="A pipeline folder from xlnel train.")
    parser.add_argument("--name", required=True, help="Key of this run in the results file.")
    parser.add_argument("--ks", default="1,2,3,5,10,20",
                        type=lambda s: [int(x) for x in s.split(",")])
    args = parser.parse_args()
    result = measure(args.pipeline, args.ks)
    for row in result["by_k"]:
        print(row)
    previous = read_figures("top_k_recall", {"runs": {}})["runs"]
    write_result("top_k_recall", {"runs": {**previous, args.name: result}})


if __name__ == "__main__":
    main()
