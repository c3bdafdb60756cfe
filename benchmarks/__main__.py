"""Run one benchmark: ``python -m benchmarks NAME [ARGS...]`` from the repository root.

``python -m benchmarks --list`` lists the benchmarks with what each measures;
``python -m benchmarks NAME --help`` gives a benchmark's options. Each benchmark writes
``benchmarks/results/*.json`` in the schema of ``benchmarks/results.schema.json``, recording the
command that reproduces it. ``tables`` and ``reliability_doc`` regenerate the tables of the docs
from those files (``--check`` compares only).
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def available() -> dict[str, str]:
    """Benchmark name -> first line of its docstring, for every runnable module here."""
    out = {}
    for path in sorted(HERE.glob("*.py")):
        if path.name.startswith("_"):
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        out[path.stem] = doc.strip().split("\n")[0]
    return out


def main(argv: list[str]) -> int:
    """Run ``argv[0]`` as ``python -m benchmarks.NAME`` with the rest of ``argv``."""
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "--list":
        width = max(map(len, names))
        for name, doc in names.items():
            print(f"{name:<{width}}  {doc}")
        return 0
    name = argv[0]
    if name not in names:
        print(f"unknown benchmark {name!r}; `python -m benchmarks --list` lists them",
              file=sys.stderr)
        return 2
    # a fresh interpreter running the module itself, so that multiprocessing's spawn finds the
    # benchmark's functions under their own module name
    os.execv(sys.executable, [sys.executable, "-m", f"benchmarks.{name}", *argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
