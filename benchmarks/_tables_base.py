"""What the table modules share (``benchmarks/tables.py``): the results folder, reading a results
file, a Markdown table with its sources, and the formats of figures and intervals."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

Row = Sequence[str]


def _envelope(name: str) -> dict[str, Any]:
    """The whole results file ``name`` (provenance, settings and figures)."""
    from benchmarks._common import read_result

    return read_result(name.removesuffix(".json"), RESULTS)


def _load(name: str) -> dict[str, Any]:
    """The figures (``results``) of the results file ``name``."""
    figures: dict[str, Any] = _envelope(name)["results"]
    return figures


def _table(header: Row, rows: Iterable[Row], sources: Iterable[str],
           source: str | None = "") -> str:
    """A Markdown table, then a line naming where its figures come from (``sources``: results
    files; ``source``: anything else; ``None``: no line)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    files = ", ".join([f"`benchmarks/results/{s}`" for s in sources] + ([source] if source else []))
    return "\n".join(lines) + ("\n" if source is None else f"\n\nSource: {files}.\n")


def pct(x: float) -> str:
    """A share as a percentage with one decimal (0.9615 -> ``96.2``)."""
    return f"{100 * x:.1f}"


def num(x: float, digits: int = 0) -> str:
    """A number with thousands separators."""
    return f"{x:,.{digits}f}"


def mib(x: float) -> str:
    """Memory in MiB, or GiB above 1,024 MiB."""
    return f"{x / 1024:.1f} GiB" if x >= 1024 else f"{x:.0f} MiB"


def mean_std(m: dict[str, float]) -> str:
    """``mean ± std`` with three decimals."""
    return f"{m['mean']:.3f} ± {m['std']:.3f}"


def recalls(tool: dict[str, Any]) -> str:
    """recall@1 / @10 / @50 of a matcher."""
    return " / ".join(f"{tool[f'recall@{k}']:.3f}" for k in (1, 10, 50))


_CAMONI = {"diabetes": "Camoni diabetes", "sclerosis": "Camoni sclerosis",
           "depression": "Camoni depression"}


def _axes(axes: dict[str, Any]) -> str:
    return ", ".join(f"`{k}` {'all' if v is None else v}" for k, v in axes.items())


def _dash(x: float | None) -> str:
    return "–" if x is None else pct(x)


def _with_ci(r: dict[str, Any], key: str) -> str:
    """A share as a percentage, with its 95% interval when the result holds one."""
    ci = r.get(f"{key}_ci95")
    return pct(r[key]) if ci is None else f"{pct(r[key])} ({pct(ci[0])}–{pct(ci[1])})"


def _ci(level: dict[str, Any], bold: bool = True) -> str:
    """A level's F1 (bold unless told otherwise) with its 95% interval."""
    low, high = level["ci"]["f1"]
    f1 = f"**{pct(level['f1'])}**" if bold else pct(level["f1"])
    return f"{f1} [{pct(low)}, {pct(high)}]"


def _protocol(block: dict[str, Any] | None) -> str:
    return "–" if not block else pct(block["mean"]["f1"])


def _delta(value: float, ci: Sequence[float]) -> str:
    """A difference of shares in points with its interval: ``+1.3 [-0.8, +3.3]``."""
    return f"{100 * value:+.1f} [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def _p(p: float) -> str:
    return f"{p:.3f}" if p >= 0.001 else "< 0.001"


def _paired_cells(m: dict[str, Any]) -> list[str]:
    """P, R, F1 [CI], delta F1 [CI] and p of a variant compared with the shipped config."""
    return [pct(m["precision"]), pct(m["recall"]), _f1_ci(m),
            _delta(m["delta_f1"], m["delta_f1_ci"]), _p(m["p"])]


def _delta_p(m: dict[str, Any]) -> str:
    """A variant's delta F1 with its interval and p: ``+0.2 [-0.0, +0.4], p 0.068``."""
    return f"{_delta(m['delta_f1'], m['delta_f1_ci'])}, p {_p(m['p'])}"


def _f1_ci(scores: dict[str, Any]) -> str:
    """F1 with its interval, from an entry with ``f1`` and ``f1_ci``: ``83.3 [81.8, 84.5]``."""
    low, high = scores["f1_ci"]
    return f"{pct(scores['f1'])} [{pct(low)}, {pct(high)}]"
