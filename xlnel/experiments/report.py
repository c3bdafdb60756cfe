"""Figures and a Markdown summary of experiment runs (the paper's R analysis).

``report(dirs, out)`` reads ``runs.jsonl`` of one or more experiment folders and writes
``hrm_recall_vs_R.png``, ``f1_vs_R.png``, ``entries_added_vs_R.png`` and ``report.md``: the mean
over seeds with the standard deviation as error bars (for a cross-validation, the mean over
folds with the 95% t-interval), one line per folder (and per value of the other grid axes, if
any). Axes named in ``pool`` are replicates rather than settings: their runs join those of the
other seeds (``data.subset_seed``: a learning curve's mean over draws of documents). A point
without a number on the x axis (``data.max_documents: null``, all documents) is left out of
the figures with a warning and kept in the tables. Needs matplotlib (the ``report`` extra).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xlnel.experiments.runner import format_summary, iter_runs, summarize
from xlnel.io import atomic_path, atomic_write

logger = logging.getLogger(__name__)

FIGURES = {
    "hrm_recall_vs_R.png": (("hrm_span", "span"), ("hrm_concept", "concept"),
                            "HRM recall (test)"),
    "f1_vs_R.png": (("span_f1", "span"), ("concept_f1", "concept"), "end-to-end F1 (test)"),
    "entries_added_vs_R.png": (("entries_added", ""), None, "dictionary entries added by DFT"),
}


def _series(label: str, rows: Sequence[Mapping[str, Any]], x_key: str
            ) -> dict[str, list[Mapping[str, Any]]]:
    """Rows grouped into lines: one per value of the grid axes other than ``x_key`` (rows
    whose ``x_key`` is not a number are left out, with a warning)."""
    lines: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if x_key not in r["axes"]:
            continue
        x = r["axes"][x_key]
        if isinstance(x, bool) or not isinstance(x, int | float):
            logger.warning("%s: the point %s=%r has no place on the x axis; it is left out of "
                           "the figures (report.md lists it)", label, x_key, x)
            continue
        rest = ", ".join(f"{k}={v}" for k, v in r["axes"].items() if k != x_key)
        lines.setdefault(f"{label} ({rest})" if rest else label, []).append(r)
    for group in lines.values():
        group.sort(key=lambda r: float(r["axes"][x_key]))
    return lines


def _plot(path: Path, lines: Mapping[str, Sequence[Mapping[str, Any]]], x_key: str,
          metrics: Sequence[tuple[str, str] | None], ylabel: str) -> None:
    """One panel per measured metric (span, concept level), one line per experiment."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = [m for m in metrics if m is not None
             and any(m[0] in r for rows in lines.values() for r in rows)]
    fig, axes = plt.subplots(1, max(len(specs), 1), figsize=(6 * max(len(specs), 1), 4),
                             squeeze=False)
    for ax, (metric, level) in zip(axes[0], specs, strict=False):
        for k, (name, rows) in enumerate(lines.items()):
            pts = [(float(r["axes"][x_key]), r[metric]) for r in rows if metric in r]
            if pts:  # one colour per experiment across panels
                ax.errorbar([p[0] for p in pts], [p[1]["mean"] for p in pts],
                            yerr=[_error(p[1]) for p in pts], fmt="-o", capsize=3, label=name,
                            color=f"C{k % 10}")
        ax.set_xlabel(x_key)
        ax.set_ylabel(f"{ylabel}, {level} level" if level else ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def _error(stats: Mapping[str, Any]) -> float:
    """Error bar: half the 95% interval over folds in a cross-validation, else the sd."""
    if stats.get("ci_low") is not None:
        return float(stats["ci_high"] - stats["ci_low"]) / 2
    return float(stats["std"])


def _fmt(row: Mapping[str, Any], metric: str, digits: int = 4) -> str:
    v = row.get(metric)
    return "-" if v is None else f"{v['mean']:.{digits}f} ± {_error(v):.{digits}f}"


def _dft_table(experiments: Sequence[tuple[str, list[dict[str, Any]]]], x_key: str) -> str:
    """Per experiment: without DFT (R = 0) against the R with the best mean F1 (concept level
    where concept F1 is measured and not ~0, as on BC5CDR; else span level)."""
    head = ("| corpus | R | concepts added | entries added | HRM recall (span) | "
            "HRM recall (concept) | F1 (span) | F1 (concept) |\n"
            "|---|---|---|---|---|---|---|---|\n")
    body = []
    for label, records in experiments:
        rows = [r for r in summarize(records) if set(r["axes"]) == {x_key}]
        if not rows:
            continue
        concepts: dict[Any, list[int]] = {}
        for r in records:
            key = r.get("axes", {}).get(x_key)
            concepts.setdefault(key, []).append(r.get("dft", {}).get("concepts_added", 0))
        zero = [r for r in rows if float(r["axes"][x_key]) == 0.0]
        with_dft = [r for r in rows if float(r["axes"][x_key]) > 0.0]
        metric = ("concept_f1" if any(r.get("concept_f1", {}).get("mean", 0.0) > 0.05
                                      for r in rows) else "span_f1")
        best = [max(with_dft, key=lambda r: r.get(metric, {}).get("mean", -1.0))
                ] if with_dft else []
        for tag, row in ([("without DFT", z) for z in zero[:1]]
                         + [("with DFT, best R", b) for b in best]):
            x = row["axes"][x_key]
            vals = concepts.get(x, [0])
            body.append(f"| {label} ({tag}) | {x} | {sum(vals) / len(vals):.1f} | "
                        f"{_fmt(row, 'entries_added', 1)} | {_fmt(row, 'hrm_span')} | "
                        f"{_fmt(row, 'hrm_concept')} | {_fmt(row, 'span_f1')} | "
                        f"{_fmt(row, 'concept_f1')} |")
    return head + "\n".join(body) + "\n" if body else ""


def pool_axes(records: Sequence[dict[str, Any]], pool: Sequence[str]) -> list[dict[str, Any]]:
    """``records`` with the grid axes ``pool`` dropped, so that :func:`summarize` takes their
    runs as replicates of one point."""
    if not pool:
        return list(records)
    return [{**r, "axes": {k: v for k, v in r.get("axes", {}).items() if k not in pool}}
            for r in records]


def report(dirs: Sequence[str | Path], out: str | Path, x_key: str = "dft.R",
           pool: Sequence[str] = ()) -> list[Path]:
    """Draw the R figures and write ``report.md`` for the experiments in ``dirs``.

    Args:
        dirs: Experiment folders (or ``runs.jsonl`` files); each becomes one line per figure.
        out: Output folder.
        x_key: The grid axis on the x axis.
        pool: Grid axes whose values are replicates of one point (see the module docstring).

    Returns:
        The files written.

    Raises:
        FileNotFoundError: If a folder has no ``runs.jsonl``.
        ValueError: If no run has ``x_key`` as a grid axis, or ``pool`` holds ``x_key`` or an
            axis no run has.
    """
    if x_key in pool:
        raise ValueError(f"{x_key!r} is the x axis; it cannot also be pooled")
    runs = list(iter_runs(dirs))
    missing = [k for k in pool
               if not any(k in r.get("axes", {}) for _, records in runs for r in records)]
    if missing:
        raise ValueError(f"no run in {', '.join(map(str, dirs))} has {', '.join(missing)} as a "
                         "grid axis to pool")
    experiments = [(label, pool_axes(records, pool)) for label, records in runs]
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[Mapping[str, Any]]] = {}
    for label, records in experiments:
        lines.update(_series(label, summarize(records), x_key))
    if not lines:
        raise ValueError(f"no run in {', '.join(map(str, dirs))} has {x_key!r} as a grid axis")
    written = []
    for name, (first, second, ylabel) in FIGURES.items():
        _plot(out_dir / name, lines, x_key, [first, second], ylabel)
        written.append(out_dir / name)
    md = _markdown(experiments, x_key, pool)
    with atomic_write(out_dir / "report.md") as f:
        f.write(md)
    written.append(out_dir / "report.md")
    return written


def _markdown(experiments: Sequence[tuple[str, list[dict[str, Any]]]], x_key: str,
              pool: Sequence[str] = ()) -> str:
    cv = any(r.get("fold") is not None for _, records in experiments for r in records)
    spread = ("Cross-validation by document: mean over folds ± half-width of the 95% "
              "t-interval; every document is scored once per seed, by a model that did not "
              "train on it." if cv else
              "Mean ± standard deviation over seeds. All runs of an experiment are scored on "
              "the same held-out test documents.")
    if pool:
        spread += (f" The runs of every value of {', '.join(f'`{k}`' for k in pool)} count as "
                   "replicates of one point" + (" (within each fold)." if cv else "."))
    parts = ["# Experiment report\n", f"{spread} x axis `{x_key}`.\n",
             "![HRM recall](hrm_recall_vs_R.png)\n", "![F1](f1_vs_R.png)\n",
             "![entries added](entries_added_vs_R.png)\n"]
    table = _dft_table(experiments, x_key) if x_key == "dft.R" else ""
    if table:
        parts += ["## With and without DFT\n", table]
    for label, records in experiments:
        rows = summarize(records)
        parts += [f"## {label}\n", f"{len(records)} runs.\n", "```\n" + format_summary(rows)
                  + "\n```\n"]
        secs = [r.get("seconds", {}).get("total", 0.0) for r in records]
        if secs:
            parts.append(f"Cell wall time: {sum(secs) / len(secs):.1f} s on average, "
                         f"{sum(secs):.0f} s in all.\n")
    return "\n".join(parts)


def best_point(records: Sequence[Mapping[str, Any]], metric: str = "span_f1"
               ) -> dict[str, Any] | None:
    """The grid point with the best mean ``metric`` (``None`` without runs)."""
    rows = [r for r in summarize(records) if metric in r]
    if not rows:
        return None
    return dict(max(rows, key=lambda r: r[metric]["mean"]))

