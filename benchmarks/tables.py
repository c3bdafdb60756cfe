"""Render the result tables of README.md and docs/ from ``benchmarks/results/*.json``.

Every table in those files sits between marker comments::

    <!-- table:link_throughput -->
    ...generated...
    <!-- /table -->

``python -m benchmarks tables`` rewrites what lies between the markers; ``--check`` only
compares and exits with status 1 when a committed table differs from what the results files
give (a test runs it). Each table ends with the results files it was read from.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks import (
    _tables_accuracy,
    _tables_base,
    _tables_dictionary,
    _tables_stages,
    _tables_variants,
)
from benchmarks._tables_base import ROOT

PAGES = ("README.md", "docs/*.md")
MARKER = re.compile(r"(<!-- table:(?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /table -->)",
                    re.DOTALL)


def config_reference() -> str:
    """Every key of a pipeline config with its type, default and meaning."""
    from benchmarks._config_tables import config_reference as table

    return table()


def options_reference() -> str:
    """The ``options`` of each registered stage that takes some."""
    from benchmarks._config_tables import options_reference as table

    return table()


#: The tables by marker name; each module holds one family of them.
TABLES: dict[str, Callable[[], str]] = {
    f.__name__: f for module in (_tables_stages, _tables_dictionary, _tables_accuracy,
                                 _tables_variants)
    for f in module.TABLES} | {f.__name__: f for f in (config_reference, options_reference)}


def render(text: str, where: str) -> str:
    """``text`` with every marked table and figure (``benchmarks/_figures.py``) regenerated.

    Raises:
        KeyError: A marker names no known table, or a figure an unknown path or format.
    """
    def one(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in TABLES:
            raise KeyError(f"{where}: unknown table {name!r}; known: {', '.join(TABLES)}")
        return m.group(1) + TABLES[name]() + m.group(4)

    from benchmarks._figures import render_figures

    return render_figures(MARKER.sub(one, text), where, _tables_base.RESULTS)


def pages(root: Path = ROOT) -> list[Path]:
    """The Markdown files whose tables are generated."""
    out: list[Path] = []
    for pattern in PAGES:
        out += sorted(root.glob(pattern))
    return out


def main(argv: list[str] | None = None) -> int:
    """Regenerate (or with ``--check`` compare) the tables; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="Exit 1 if a committed table differs from the results files.")
    args = ap.parse_args(argv)
    stale = []
    for path in pages():
        text = path.read_text(encoding="utf-8")
        new = render(text, str(path.relative_to(ROOT)))
        if new != text:
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"tables out of date in {', '.join(stale)}; run python -m benchmarks tables",
              file=sys.stderr)
        return 1
    for name in stale:
        print(f"updated {name}")
    return 0


if __name__ == "__main__":
    if not __package__:  # run as a file, python benchmarks/tables.py: run it as the module
        sys.exit(subprocess.call([sys.executable, "-m", "benchmarks.tables", *sys.argv[1:]],
                                 cwd=ROOT))
    sys.exit(main())
