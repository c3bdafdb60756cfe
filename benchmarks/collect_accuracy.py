"""Collect the figures written by ``benchmarks/accuracy.sh RUNS`` into results/accuracy.json.

    python -m benchmarks collect_accuracy RUNS
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks._common import command_line, read_times, write_result

COMMANDS = {
    "camoni": ("xlnel train configs/camoni-{c}.yaml --out RUNS/{c} && xlnel link RUNS/{c} "
               "RUNS/{c}/test.jsonl --out RUNS/{c}-pred.jsonl && "
               "xlnel evaluate RUNS/{c}/test.jsonl "
               "RUNS/{c}-pred.jsonl --level span --json"),
    "bc5cdr": ("xlnel train configs/bc5cdr.yaml --out RUNS/bc5cdr && xlnel link RUNS/bc5cdr "
               "../shared/data/bc5cdr/dev.pubtator --out RUNS/bc5cdr-pred.jsonl && xlnel evaluate "
               "../shared/data/bc5cdr/dev.pubtator RUNS/bc5cdr-pred.jsonl --level concept --json"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="?", type=Path, default=Path("runs"),
                        help="the RUNS folder benchmarks/accuracy.sh wrote (default: runs)")
    runs = parser.parse_args().runs
    times = read_times(runs)
    out: dict[str, dict] = {}
    for name in ("diabetes", "sclerosis", "depression", "bc5cdr"):
        if name not in times:
            continue
        entry: dict = {"seconds": times[name]}
        for f in sorted(runs.glob(f"{name}.*.json")):
            text = f.read_text().strip()
            if text:
                kind = f.name.split(".")[1]
                data = json.loads(text.splitlines()[-1])
                # `xlnel evaluate --json` keys its report by level; `candidates --json` does not.
                entry[kind] = data[kind]["scores"] if kind in data else data
        report = runs / name / "train_report.json"
        if report.is_file():
            entry["train_report"] = json.loads(report.read_text())
        kind = "bc5cdr" if name == "bc5cdr" else "camoni"
        entry["command"] = COMMANDS[kind].format(c=name)
        out[name] = entry
    path = write_result("accuracy", {"results": out},
                        command=f"bash benchmarks/accuracy.sh {runs} && {command_line()}")
    for name, e in out.items():
        main_level = "concept" if name == "bc5cdr" else "span"
        s = e.get(main_level, {})
        hrm = e.get("hrm", {}).get(main_level, {}).get("recall")
        print(f"{name:11} {main_level:8} P {s.get('precision', 0):.3f} R {s.get('recall', 0):.3f} "
              f"F1 {s.get('f1', 0):.3f}  HRM recall {hrm}  {e['seconds']}")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
