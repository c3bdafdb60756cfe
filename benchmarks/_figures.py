"""Figures quoted in running text, filled from the results files like the tables.

A figure in a sentence is written between marker comments that name its file, its path in the
file and its format::

    threshold <!-- fig protocol_bc5cdr-dev.json results.threshold f3 -->0.275<!-- /fig -->

``FILE`` is a file of ``benchmarks/results/`` (or ``benchmarks/reference_figures.json``);
``PATH`` is dotted (list items by index; keys may hold ``@``, as ``accuracy@1``, and ``>``, as
the ending alternation ``ים>``), several paths joined by ``+`` are added up; ``FORMAT``
is one of :data:`FORMATS`. The comments do not show in the rendered page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIGURE = re.compile(r"(<!-- fig (?P<file>[\w.-]+) (?P<path>[\w.+@>-]+) (?P<fmt>\w+) -->)"
                    r"(?P<value>[^<]*)(<!-- /fig -->)")

FORMATS: dict[str, Callable[[float], str]] = {
    "pct": lambda x: f"{100 * x:.1f}",  # a share as a percentage, one decimal
    "dpct": lambda x: f"{100 * x:+.1f}",  # a difference of shares, in points, signed
    "num": lambda x: f"{x:,.0f}",  # a count with thousands separators
    "f0": lambda x: f"{x:.0f}",
    "f1": lambda x: f"{x:.1f}",
    "f2": lambda x: f"{x:.2f}",
    "f3": lambda x: f"{x:.3f}",
    "minutes": lambda x: f"{x / 60:.0f}",  # seconds as whole minutes
    "million": lambda x: f"{x / 1e6:.2f} million",
    "M": lambda x: f"{x / 1e6:.1f}M",
}


def lookup(data: Any, path: str, where: str) -> Any:
    """The value at dotted ``path`` of ``data`` (list items by index).

    Raises:
        KeyError: ``path`` does not exist; the message names ``where``.
    """
    node = data
    for part in path.split("."):
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise KeyError(f"{where}: no {path!r} (stops at {part!r})") from None
    return node


def render_figures(text: str, where: str, results: Path) -> str:
    """``text`` with every marked figure refilled from its results file.

    Raises:
        KeyError: A marker names an unknown format or a path its file lacks, or is malformed
            (a figure whose marker the pattern does not read would silently never be filled).
        FileNotFoundError: A marker names a file that does not exist.
    """
    cache: dict[str, Any] = {}
    for opening in re.finditer(r"<!-- fig .*?-->", text):
        if not FIGURE.match(text, opening.start()):
            raise KeyError(f"{where}: malformed figure marker {opening.group()!r} (expected "
                           "'<!-- fig FILE PATH FORMAT -->VALUE<!-- /fig -->')")

    def one(m: re.Match[str]) -> str:
        name, fmt = m.group("file"), m.group("fmt")
        if fmt not in FORMATS:
            raise KeyError(f"{where}: unknown figure format {fmt!r}; known: {', '.join(FORMATS)}")
        if name not in cache:
            path = next((p for p in (results / name, results.parent / name) if p.is_file()),
                        None)
            if path is None:
                raise FileNotFoundError(f"{where}: figure from {name}, which is not in {results}")
            cache[name] = json.loads(path.read_text(encoding="utf-8"))
        value = sum(lookup(cache[name], p, f"{where}: {name}")
                    for p in m.group("path").split("+"))
        return m.group(1) + FORMATS[fmt](value) + m.group(6)

    return FIGURE.sub(one, text)
