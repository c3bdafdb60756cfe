"""Fuzz every reader with many examples: the properties of ``tests/io/test_fuzz_readers.py``.

For each reader, ``--examples`` valid files must parse exactly and ``--examples`` changed files
(characters deleted, duplicated or swapped, lines cut, numbers and invalid UTF-8 inserted,
random bytes) must parse consistently or raise ``FormatError``. Writes
``benchmarks/results/fuzz_readers.json``: inputs tried and failures per reader.

    python -m benchmarks fuzz_readers --examples 20000
    python -m benchmarks fuzz_readers --examples 20000 --readers kb_tsv --update   # one again

Each reader's entry records the commit it ran at.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from benchmarks._common import _git_commit, read_figures, write_result
from tests.io.fuzz_cases import CASES, ReaderCase, changed_files, check_mutated, check_valid

ROOT = Path(__file__).resolve().parents[1]


def fuzz(case: ReaderCase, examples: int, seed: int) -> dict[str, Any]:
    """Run both properties on ``case``; counts of inputs tried and the failures found."""
    tried = {"valid": 0, "changed": 0, "changed_parsed": 0, "changed_rejected": 0}
    failures: list[str] = []
    config = settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                      suppress_health_check=list(HealthCheck))

    @config
    @given(case.valid)
    def valid(v: tuple[dict[str, bytes], Any]) -> None:
        tried["valid"] += 1
        check_valid(case, *v)

    @config
    @given(changed_files(case))
    def changed(files: dict[str, bytes]) -> None:
        tried["changed"] += 1
        tried[f"changed_{check_mutated(case, files)}"] += 1

    for prop in (valid, changed):
        try:
            prop()
        except Exception as e:  # the minimal failing input, after shrinking
            failures.append(f"{prop.__name__}: {type(e).__name__}: {e}"[:2000])
    return {"inputs_tried": tried, "failures": failures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000, help="Per reader and property.")
    parser.add_argument("--readers", default=",".join(CASES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--update", action="store_true",
                        help="Rerun --readers only, keeping the others of the results file.")
    args = parser.parse_args()
    names = args.readers.split(",")
    readers: dict[str, Any] = {}
    if args.update:  # keep the other readers of an earlier run with as many examples
        earlier = read_figures("fuzz_readers")
        if earlier["examples_per_property"] != args.examples:
            sys.exit(f"--update needs --examples {earlier['examples_per_property']}")
        readers = {k: v for k, v in earlier["readers"].items() if k not in names}
        names = [*readers, *names]
    t0 = time.perf_counter()
    for name in names:
        if name in readers:
            continue
        t = time.perf_counter()
        readers[name] = {**fuzz(CASES[name], args.examples, args.seed), "commit": _git_commit()}
        readers[name]["seconds"] = round(time.perf_counter() - t, 1)
        print(name, readers[name]["inputs_tried"], len(readers[name]["failures"]), "failures",
              flush=True)
    # once, at the end: a results file written earlier in the run would mark the commit dirty
    _write(args.examples, readers, names, time.perf_counter() - t0)


def _write(examples: int, readers: dict[str, Any], names: list[str], seconds: float) -> None:
    """The results file: inputs tried and failures per reader."""
    total = sum(sum(v for k, v in r["inputs_tried"].items() if k in ("valid", "changed"))
                for r in readers.values())
    failures = sum(len(r["failures"]) for r in readers.values())
    write_result("fuzz_readers", {"examples_per_property": examples, "readers": readers,
                                  "readers_left": [n for n in names if n not in readers],
                                  "inputs_tried": total, "failures": failures,
                                  "seconds": round(seconds, 1)})

if __name__ == "__main__":
    main()
