"""Accuracy of a tagger-based pipeline and of its tagger alone, into results/tagger_accuracy.json.

Run the CLI first (as benchmarks/accuracy.sh does, with the tagger config), then collect:

    xlnel train configs/pipelines/tagger.yaml --include configs/data/camoni-diabetes.yaml \
        --out RUNS/diabetes
    xlnel link RUNS/diabetes RUNS/diabetes/test.jsonl --out RUNS/diabetes-pred.jsonl
    xlnel evaluate RUNS/diabetes/test.jsonl RUNS/diabetes-pred.jsonl --level span --json \
        > RUNS/diabetes.span.json            (and --level overlap > RUNS/diabetes.overlap.json)
    echo "diabetes train_s=... link_s=..." >> RUNS/times.txt
    python -m benchmarks tagger_accuracy RUNS diabetes

The tagger's own spans on the held-out documents are scored here at span and overlap level.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks._common import read_figures, read_times, write_result
from xlnel.evaluation import evaluate  # noqa: E402
from xlnel.io import read_documents  # noqa: E402
from xlnel.pipeline import Pipeline  # noqa: E402
from xlnel.types import Document, Link  # noqa: E402

COMMANDS = (
    "OMP_NUM_THREADS=1 nice -n 10 xlnel -v train configs/pipelines/tagger.yaml "
    "--include configs/data/camoni-{c}.yaml --out RUNS/{c}",
    "OMP_NUM_THREADS=1 nice -n 10 xlnel link RUNS/{c} RUNS/{c}/test.jsonl "
    "--out RUNS/{c}-pred.jsonl",
    "xlnel evaluate RUNS/{c}/test.jsonl RUNS/{c}-pred.jsonl --level span --json",
    "xlnel evaluate RUNS/{c}/test.jsonl RUNS/{c}-pred.jsonl --level overlap --json",
    "python -m benchmarks tagger_accuracy RUNS {c}",
)
NOTES = (
    "CPU only (2 cores shared with other jobs), real multilingual-e5-small, embedding matrix "
    "frozen (the CPU default), 5 epochs of batch 8 at lr 1e-4 (head 1e-3), max_length 128. "
    "tagger_alone scores the tagger's spans on the held-out documents; pipeline_* the linked "
    "output; baseline_all_spans is the all-spans TF-IDF + gbdt pipeline of accuracy.json on "
    "the same split."
)


def tagger_scores(pipeline: Path) -> dict[str, Any]:
    """Span and overlap P/R/F1 of the pipeline's tagger on its held-out documents."""
    pipe = Pipeline.load(pipeline)
    if pipe.tagger is None:
        raise SystemExit(f"{pipeline} has no tagger (ner.name is not set)")
    gold = read_documents(pipeline / "test.jsonl")
    t0 = time.perf_counter()
    spans = pipe.tagger.predict_batch(gold)
    seconds = time.perf_counter() - t0
    pred = [Document(d.id, d.text, tuple(Link(s.start, s.end, s.text) for s in ss))
            for d, ss in zip(gold, spans, strict=True)]
    return {"documents": len(gold), "tag_s": round(seconds, 1),
            **{level: evaluate(gold, pred, level).to_dict() for level in ("span", "overlap")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", type=Path, help="the folder the commands above wrote (RUNS)")
    parser.add_argument("name", help="the run's name in RUNS (diabetes, ...)")
    args = parser.parse_args()
    runs, name = args.runs, args.name
    times = read_times(runs).get(name, {})
    entry: dict[str, Any] = {"commands": [c.format(c=name) for c in COMMANDS],
                             "notes": NOTES, "seconds": times,
                             "tagger_alone": tagger_scores(runs / name)}
    for level in ("span", "overlap"):
        f = runs / f"{name}.{level}.json"
        if f.is_file() and f.read_text().strip():
            entry[f"pipeline_{level}"] = json.loads(f.read_text().strip().splitlines()[-1])
    meta = json.loads((runs / name / "ner" / "tagger.json").read_text(encoding="utf-8"))
    entry["tagger_options"] = meta["options"]
    entry["tagger_training"] = meta["training"]
    entry["train_report"] = json.loads((runs / name / "train_report.json").read_text())
    baseline = read_figures("accuracy")["results"].get(name, {})
    entry["baseline_all_spans"] = {k: baseline.get(k) for k in ("span", "overlap")}
    previous = read_figures("tagger_accuracy", {"results": {}})["results"]
    write_result("tagger_accuracy", {"results": {**previous, name: entry}})


if __name__ == "__main__":
    main()
