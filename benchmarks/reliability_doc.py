"""Fill the figures of ``docs/reliability-load.md`` from the results files.

Each block between ``<!-- figures NAME -->`` and ``<!-- /figures -->`` is replaced by the table
that :data:`TABLES` builds from ``benchmarks/results/NAME.json``; the text around the blocks is
left as written. ``--check`` fails when the document differs from what the results give.

    python -m benchmarks reliability_doc            # rewrite docs/reliability-load.md
    python -m benchmarks reliability_doc --check
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "reliability-load.md"
_BLOCK = re.compile(r"(<!-- figures (\w+) -->\n).*?(<!-- /figures -->)", re.S)


def _load(d: tuple[float, ...]) -> str:
    return " / ".join(f"{x:.1f}" for x in d)


def _source(r: dict[str, Any], name: str) -> str:
    return (f"\n*From `benchmarks/results/{name}.json` (`{r['command']}`, commit "
            f"`{str(r['commit'])[:10]}`, {r['date'][:10]}, {r['machine']['cpus']} CPUs).*\n")


def busy_machine(r: dict[str, Any]) -> str:
    runs = r["runs"]
    rows = [f"| `--threads {v['threads_option']}` ({k.replace('_', ' ')}) | {v['seconds']:.1f} |"
            for k, v in runs.items()]
    return ("| run | seconds |\n|---|---|\n" + "\n".join(rows) + "\n\n"
            f"Slow-down of the library defaults: **{r['slowdown_ratio']:.2f}x**; identical "
            f"output: {r['outputs_identical']}; {r['documents']} documents, "
            f"{r['burner_processes']} CPU-burning processes on {r['cores']} cores; load average "
            f"(1/5/15 min) {_load(r['load_average_before'])} before, "
            f"{_load(r['load_average_after'])} after.\n" + _source(r, "busy_machine"))


def long_document(r: dict[str, Any]) -> str:
    long, check = r["long"], r["check"]
    return ("| document | characters | link seconds | peak RSS (MiB) |\n|---|---|---|---|\n"
            f"| synthetic, in windows | {long['chars']:,} | {long['link_seconds']:.1f} | "
            f"{long['peak_rss_mib']:.0f} |\n"
            f"| prefix, whole | {check['whole']['chars']:,} | "
            f"{check['whole']['link_seconds']:.1f} | {check['whole']['peak_rss_mib']:.0f} |\n"
            f"| prefix, in windows | {check['windows']['chars']:,} | "
            f"{check['windows']['link_seconds']:.1f} | {check['windows']['peak_rss_mib']:.0f} |\n"
            f"\nLinks of the prefix identical whole and in windows: {check['identical_links']}; "
            f"{long['links']:,} links in the long document; peak under 1 GiB: "
            f"{r['peak_rss_under_1_gib']}.\n" + _source(r, "long_document"))


def _rerun(r: dict[str, Any]) -> list[str]:
    """The readers that the run writing the file fuzzed (those at its commit)."""
    return [k for k, v in r["readers"].items() if v.get("commit") == r["commit"]]


def _kept_commits(r: dict[str, Any]) -> list[str]:
    """The commits of the readers kept from earlier runs."""
    return sorted({str(v.get("commit"))[:10] for v in r["readers"].values()
                   if v.get("commit") != r["commit"]})


def fuzz_readers(r: dict[str, Any]) -> str:
    rows = [f"| {name} | {v['inputs_tried']['valid']:,} | {v['inputs_tried']['changed']:,} | "
            f"{v['inputs_tried']['changed_rejected']:,} | {len(v['failures'])} |"
            for name, v in r["readers"].items()]
    return ("| reader | valid inputs | changed inputs | of which rejected | failures |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
            f"{r['inputs_tried']:,} inputs, {r['failures']} failures "
            f"({r['examples_per_property']:,} examples asked per reader and property)"
            + (f"; not run: {', '.join(r['readers_left'])}" if r.get("readers_left") else "")
            + (f"; {', '.join(_rerun(r))} run again by the command below (`--update`), the "
               f"others kept from the run before it (commit {', '.join(_kept_commits(r))})"
               if "--update" in r["command"] else "")
            + ".\n"
            + _source(r, "fuzz_readers"))


def fault_injection(r: dict[str, Any]) -> str:
    return ("| runs | workers killed mid-shard | failures | seconds |\n|---|---|---|---|\n"
            f"| {r['runs']} | {r['kills']} | {r['failures']} | {r['seconds']:.0f} |\n\n"
            f"{r['shards']} shards of {r['documents_per_shard']} documents, "
            f"{r['workers']} workers. A failure is an output that differs from the "
            "uninterrupted run, a temporary file left behind, or a killed run that exited 0.\n"
            + _source(r, "fault_injection"))


TABLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "busy_machine": busy_machine, "long_document": long_document,
    "fuzz_readers": fuzz_readers, "fault_injection": fault_injection,
}


def render(text: str, results: Path = RESULTS) -> str:
    """``text`` with every figures block rebuilt from its results file."""
    def block(m: re.Match[str]) -> str:
        name = m.group(2)
        path = results / f"{name}.json"
        if name not in TABLES or not path.is_file():
            return m.group(0)
        data = json.loads(path.read_text(encoding="utf-8"))
        # the tables read the figures and the provenance side by side
        flat = {**data["results"], **{k: v for k, v in data.items() if k != "results"}}
        return m.group(1) + TABLES[name](flat) + m.group(3)
    return _BLOCK.sub(block, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = DOC.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        sys.exit(0 if new == text
                 else f"{DOC} is out of date: run python -m benchmarks reliability_doc")
    DOC.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
