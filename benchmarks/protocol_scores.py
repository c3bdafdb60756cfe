"""The reference system's sampled-classifier protocol (``galperin2022``) beside strict end-to-end
scores, for trained pipelines and gold files.

For each ``--run NAME=PIPELINE_DIR:GOLD_FILE`` this script scores the pipeline's candidates and
filter on GOLD by the protocol (as :func:`xlnel.evaluation.galperin2022_pipeline` does; also with
positives keeping their context candidate's matcher score) for each seed, links GOLD with
the pipeline (with every decision of its ``linker`` section, as ``xlnel link`` does) and scores
it end to end (:func:`xlnel.evaluation.evaluate`, strict offsets) at the
filter's level, and writes ``benchmarks/results/protocol_<NAME>.json``. GOLD must be documents
the pipeline was not trained on (its ``test.jsonl``, or BC5CDR ``dev.pubtator``).

Run from the repository root, e.g. ``python -m benchmarks protocol_scores --run
bc5cdr-dev=runs/bc5cdr:../shared/data/bc5cdr/dev.pubtator``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks._common import write_result
from xlnel.analysis.protocol import ProtocolSample, matcher_scorer, protocol_sample
from xlnel.evaluation import evaluate
from xlnel.io import read_documents
from xlnel.linkers.decide import decide_as
from xlnel.pipeline import Pipeline


def measure(pipeline_dir: str, gold_file: str, seeds: list[int],
            batch_size: int = 64) -> dict[str, Any]:
    """Protocol scores for each seed and end-to-end scores of one pipeline on one gold file."""
    pipe = Pipeline.load(pipeline_dir)
    level = pipe.config.filter.select_level
    docs = read_documents(gold_file)
    t0 = time.perf_counter()
    scorer = matcher_scorer(pipe.generator)
    linker = pipe.config.linker  # linked as `xlnel link` links: every decision of the config
    rescored, kept, linked = [], [], []
    for lo in range(0, len(docs), batch_size):
        batch = docs[lo:lo + batch_size]
        cands = pipe.candidates(batch)
        scores = pipe.filter.score_batch(batch, cands)  # scored once for all three
        rescored.append(protocol_sample(batch, cands, pipe.filter, level, scorer, scores))
        kept.append(protocol_sample(batch, cands, pipe.filter, level, plain_scores=scores))
        linked += [decide_as(d, c, s, pipe.filter.threshold, linker, pipe.lexicon)
                   if len(d.text) <= linker.window_chars else pipe.link_batch([d])[0]
                   for d, c, s in zip(batch, cands, scores, strict=True)]
    end_to_end = {lvl: evaluate(docs, linked, lvl).to_dict()
                  for lvl in dict.fromkeys(("span", level))}
    return {
        "pipeline": pipeline_dir, "gold": gold_file, "documents": len(docs),
        "filter": pipe.config.filter.name, "level": level, "threshold": pipe.filter.threshold,
        "galperin2022": _by_seed(rescored, seeds),
        "galperin2022_context_score": {
            "note": "positives keep the matcher score of their context candidate instead of "
                    "the score of (span, gold term)", **_by_seed(kept, seeds)},
        "end_to_end": end_to_end, "seconds": round(time.perf_counter() - t0, 1),
    }


def _by_seed(parts: list[ProtocolSample], seeds: list[int]) -> dict[str, Any]:
    sample = ProtocolSample.concat(parts)
    rows = [sample.draw(seed).to_dict() for seed in seeds]
    return {"mean": _mean(rows), "by_seed": rows}


def _mean(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {k: round(statistics.fmean(r[k] for r in rows), 4)
            for k in ("precision", "recall", "f1")}


def _run(spec: str) -> tuple[str, str, str]:
    name, _, rest = spec.partition("=")
    pipeline_dir, _, gold = rest.partition(":")
    if not (name and pipeline_dir and gold):
        raise argparse.ArgumentTypeError(f"--run wants NAME=PIPELINE_DIR:GOLD_FILE, got {spec!r}")
    return name, pipeline_dir, gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=_run, action="append", required=True,
                        help="NAME=PIPELINE_DIR:GOLD_FILE (repeatable).")
    parser.add_argument("--seeds", default="0,1,2,3,4",
                        type=lambda s: [int(x) for x in s.split(",")])
    args = parser.parse_args()
    for name, pipeline_dir, gold in args.run:
        result = measure(pipeline_dir, gold, args.seeds)
        path = write_result(f"protocol_{name}", {
            "protocol_doc": "docs/evaluation-protocols.md", **result})
        print(f"{name}: galperin2022 {result['galperin2022']['mean']}  end-to-end "
              f"{ {k: round(v['f1'], 4) for k, v in result['end_to_end'].items()} } -> {path}")


if __name__ == "__main__":
    main()
