"""Collect the ablations of benchmarks/results/ablations/*/runs.jsonl into ablations.json.

Each folder is one ``xlnel experiment`` run of a config in ``configs/ablations/`` (the folder is
named after the config; the command is the one documented in the config's header). A folder
named ``NAME-gpu`` holds the same config run on a GPU machine (see ``GPU_RUNS``). Run from the
repository root after the experiments: ``python -m benchmarks ablations``. Prints a Markdown
table per ablation (mean ± sample std over seeds) and writes ``benchmarks/results/ablations.json``
with the summaries, the commands, the seeds and the CPU time of the cells.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, write_result
from xlnel.experiments import read_runs, summarize

ROOT = Path(__file__).resolve().parents[1]

# Ablations also run on a lent GPU machine: folder -> how they ran there.
GPU_RUNS = {
    "window-gpu": "one NVIDIA H100 (16 CPU cores), xlnel experiment "
                  "configs/ablations/window.yaml --grid filter.options.window=W --seeds ... with "
                  "4-5 experiments sharing the GPU (OMP_NUM_THREADS=2 each). On a GPU the "
                  "cross-encoder also trains its embeddings (freeze_embeddings: null freezes "
                  "them on CPU only), so these runs differ in recipe from the CPU runs of "
                  "'window'. Seed 0 ran four times and seed 1 (Ws 1) three times with "
                  "identical scores.",
}


def documented_command(config: Path) -> str | None:
    """The ``xlnel experiment ...`` command in the header comment of an ablation config."""
    if not config.is_file():
        return None
    header = [line[1:].strip() for line in config.read_text(encoding="utf-8").splitlines()
              if line.startswith("#")]
    text = " ".join(header).replace("\\ ", "")
    found = re.search(r"xlnel experiment .*?--out \S+(?: --cache \S+)?", text)
    return found.group(0) if found else None


def ablation_summary(runs: Path) -> dict[str, Any]:
    records = read_runs(runs)
    name = runs.parent.name
    config = ROOT / "configs" / "ablations" / f"{name.removesuffix('-gpu')}.yaml"
    return {
        "device": GPU_RUNS.get(name, "CPU"),
        "config": str(config.relative_to(ROOT)) if config.is_file() else None,
        "command": documented_command(config),
        "runs": len(records),
        "seeds": sorted({r["seed"] for r in records}),
        "cell_seconds_total": round(sum(r["seconds"]["total"] for r in records), 1),
        "summary": summarize(records),
    }


def markdown(name: str, summary: dict[str, Any]) -> str:
    rows = summary["summary"]
    if not rows:
        return f"### {name}\n\n(no runs)\n"
    axes = list(rows[0]["axes"])
    # Camoni's reference names carry no concept ids: concept scores there are ~0, not shown
    metrics = ["span_f1", "hrm_span"] + (["concept_f1", "hrm_concept"]
                                         if any(r.get("concept_f1", {}).get("mean", 0) > 0.05
                                                for r in rows) else [])
    lines = [f"### {name}", "", "| " + " | ".join(axes + ["seeds"] + metrics) + " |",
             "|" + "---|" * (len(axes) + 1 + len(metrics))]
    for r in rows:
        cells = [str(r["axes"][a]) for a in axes] + [str(r["seeds"])]
        for m in metrics:
            v = r.get(m)
            cells.append(f"{v['mean']:.3f} ± {v['std']:.3f}" if v else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args(argv)
    ablations = {p.parent.name: ablation_summary(p)
                 for p in sorted((RESULTS / "ablations").glob("*/runs.jsonl"))}
    for name, summary in ablations.items():
        print(markdown(name, summary))
    write_result("ablations", {
        "note": "Mean ± sample std over seeds; seed s sets seed, dft.seed and "
                "filter.options.seed, the held-out documents stay the same. Camoni ablations "
                "are scored at span level on the held-out 20% of diabetes; the BC5CDR one on "
                "dev. CPU cells ran with OMP_NUM_THREADS=1 under nice -n 10 on the 2-core machine "
                "while other sweeps used the other core; '-gpu' ablations say how they ran.",
        "ablations": ablations,
    })


if __name__ == "__main__":
    main(sys.argv[1:])
