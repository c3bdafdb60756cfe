"""Summaries of experiment runs: mean and spread per grid point, over seeds or over folds.

Runs of a plain experiment (one fixed test set) are summarised by the mean and standard
deviation over seeds. Runs of a cross-validation (records with a ``fold``) are summarised per
grid point in two ways:

- over folds: each fold's score (averaged over seeds first, so that ``n`` is the number of
  folds) gives a mean and a 95% t-interval, ``mean ± t(0.975, n-1) * sd / sqrt(n)``;
- pooled out of fold: the per-document counts of all folds, so that every document is
  predicted once per seed (summed over seeds), give micro P/R/F1 with a 95% CI from resampling
  documents (:func:`xlnel.evaluation.bootstrap_counts`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from xlnel.evaluation import bootstrap_counts

SUMMARY_METRICS = ("span_f1", "concept_f1", "hrm_span", "hrm_concept", "entries_added")
"""Columns of :func:`summarize`, each a path into a run record (see :func:`metric_value`)."""

CONFIDENCE = 0.95
"""Coverage of the intervals of cross-validation summaries."""

_KINDS = {"f1": "f1", "precision": "precision", "recall": "recall"}


def metric_value(record: Mapping[str, Any], name: str) -> float | None:
    """A measure of a run record (``None`` when not measured).

    Names are ``entries_added``, ``hrm_LEVEL`` (HRM recall) and ``LEVEL_f1``,
    ``LEVEL_precision``, ``LEVEL_recall`` for any evaluation level in the record
    (``span_f1``, ``span-prefix_recall``...).
    """
    if name == "entries_added":
        return float(record.get("dictionary_entries_added", 0))
    if name.startswith("hrm_"):
        path: tuple[str, ...] = ("hrm", name[4:], "recall")
    else:
        level, _, kind = name.rpartition("_")
        if kind not in _KINDS or not level:
            raise ValueError(f"unknown measure {name!r}: use entries_added, hrm_LEVEL or "
                             "LEVEL_f1 / LEVEL_precision / LEVEL_recall")
        path = (level, _KINDS[kind])
    node: Any = record.get("metrics", {})
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return float(node)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0.0 for a single value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2 or min(values) == max(values):
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE
               ) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of the mean: ``(mean, low, high)``.

    Raises:
        ValueError: With fewer than two values, or ``confidence`` outside (0, 1).
    """
    from scipy.stats import t

    if len(values) < 2:
        raise ValueError(f"a t-interval needs at least 2 values, got {len(values)}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    mean, sd = mean_std(values)
    half = float(t.ppf((1.0 + confidence) / 2.0, len(values) - 1)) * sd / math.sqrt(len(values))
    return mean, mean - half, mean + half


def _group(records: Iterable[Mapping[str, Any]]
           ) -> dict[str, tuple[dict[str, Any], list[Mapping[str, Any]]]]:
    """Records grouped by grid point (and fold count), in first-seen order."""
    groups: dict[str, tuple[dict[str, Any], list[Mapping[str, Any]]]] = {}
    for r in records:
        axes = dict(r.get("axes", {}))
        key = json.dumps([axes, r.get("folds")], sort_keys=True)
        groups.setdefault(key, (axes, []))[1].append(r)
    return groups


def cv_metrics(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The measures of :data:`SUMMARY_METRICS` plus the F1 of every other level in records."""
    levels: list[str] = []
    for r in records:
        for level, value in r.get("metrics", {}).items():
            if level != "hrm" and isinstance(value, Mapping) and level not in levels:
                levels.append(level)
    extra = [f"{lvl}_f1" for lvl in levels if f"{lvl}_f1" not in SUMMARY_METRICS]
    return [*SUMMARY_METRICS[:2], *extra, *SUMMARY_METRICS[2:]]


def summarize(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per grid point, in first-seen order.

    Returns:
        Rows with ``axes``, ``seeds`` (distinct seeds) and, per measure in every run,
        ``{"mean": m, "std": s}``. Rows of cross-validation runs also have ``folds``,
        ``runs``, ``ci_low`` / ``ci_high`` beside each mean (over folds, ``None`` with one
        fold), the measures of :func:`cv_metrics`, and ``pooled`` (see :func:`pooled`).
    """
    rows = []
    for axes, group in _group(records).values():
        cv = any(r.get("fold") is not None for r in group)
        row: dict[str, Any] = {"axes": axes, "seeds": len({r.get("seed") for r in group})}
        if not cv:
            row["seeds"] = len(group)
        names = cv_metrics(group) if cv else SUMMARY_METRICS
        for name in names:
            values = [metric_value(r, name) for r in group]
            if not values or any(v is None for v in values):
                continue
            if cv:
                row[name] = _fold_stats(group, [float(v) for v in values if v is not None])
            else:
                mean, std = mean_std([v for v in values if v is not None])
                row[name] = {"mean": mean, "std": std}
        if cv:
            row["folds"] = len({r["fold"] for r in group})
            row["runs"] = len(group)
            row["pooled"] = pooled(group)
        rows.append(row)
    return rows


def _fold_stats(group: Sequence[Mapping[str, Any]], values: Sequence[float]) -> dict[str, Any]:
    """Mean, sd and t-interval over folds of one measure (seed-averaged within each fold)."""
    by_fold: dict[int, list[float]] = {}
    for r, v in zip(group, values, strict=True):
        by_fold.setdefault(int(r["fold"]), []).append(v)
    per_fold = [sum(vs) / len(vs) for _, vs in sorted(by_fold.items())]
    mean, std = mean_std(per_fold)
    low = high = None
    if len(per_fold) > 1:
        _, low, high = t_interval(per_fold)
    return {"mean": mean, "std": std, "ci_low": low, "ci_high": high, "n": len(per_fold),
            "per_fold": per_fold}


def pooled_counts(records: Iterable[Mapping[str, Any]], level: str
                    ) -> tuple[list[str], np.ndarray] | None:
    """Per-document ``(tp, fp, fn)`` of ``level`` over ``records``, summed over seeds.

    Returns:
        Document ids and an ``(n, 3)`` integer array, or ``None`` when a record lacks
        per-document counts of ``level``.
    """
    totals: dict[str, np.ndarray] = {}
    for r in records:
        per_doc = r.get("per_document") or {}
        counts = per_doc.get("counts", {}).get(level)
        if counts is None:
            return None
        for doc_id, c in zip(per_doc["ids"], counts, strict=True):
            totals[doc_id] = totals.get(doc_id, np.zeros(3, dtype=np.int64)) + np.asarray(c)
    ids = list(totals)
    array = np.array([totals[i] for i in ids], dtype=np.int64).reshape(len(ids), 3)
    return ids, array


def pooled(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Micro P/R/F1 over the out-of-fold predictions of every document, per level.

    Counts of a document predicted under several seeds are summed, which weighs every seed
    alike and keeps a document's runs together when documents are resampled.

    Returns:
        Per level: ``precision``, ``recall``, ``f1``, ``tp``, ``fp``, ``fn``, ``documents``
        and ``ci`` (``{measure: [low, high]}``, the document bootstrap); and ``hrm``: the pooled
        HRM recall per level (``found / total`` over all runs).
    """
    out: dict[str, Any] = {}
    levels = [lvl for lvl in cv_metrics(records) if lvl.endswith("_f1")]
    for level in (name[:-3] for name in levels):
        got = pooled_counts(records, level)
        if got is None:
            continue
        ids, counts = got
        tp, fp, fn = (int(x) for x in counts.sum(axis=0))
        p, rc = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
        out[level] = {"precision": p, "recall": rc, "f1": _ratio(2 * p * rc, p + rc),
                      "tp": tp, "fp": fp, "fn": fn, "documents": len(ids),
                      "ci": bootstrap_interval(counts)}
    hrm: dict[str, float] = {}
    for level in ("span", "concept"):
        parts = [r.get("metrics", {}).get("hrm", {}).get(level) for r in records]
        if parts and all(isinstance(x, Mapping) and "total" in x for x in parts):
            found = sum(int(x["found"]) for x in parts if x is not None)
            total = sum(int(x["total"]) for x in parts if x is not None)
            hrm[level] = _ratio(found, total)
    out["hrm"] = hrm
    return out


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def bootstrap_interval(counts: np.ndarray, n_resamples: int = 1000, seed: int = 0
                       ) -> dict[str, Any] | None:
    """95% document-bootstrap intervals of micro P/R/F1 from per-document ``[tp, fp, fn]``.

    Returns:
        ``{"precision": [low, high], "recall": ..., "f1": ..., "confidence", "n_resamples",
        "n_documents", "seed"}`` (see :func:`xlnel.evaluation.bootstrap_counts`), or ``None``
        without documents.
    """
    if len(counts) == 0:
        return None
    return bootstrap_counts(counts, n_resamples, seed, CONFIDENCE).to_dict()


def format_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary as plain-text tables.

    Plain runs: ``mean ± std`` per measure. Cross-validation runs: ``mean ± h`` over folds,
    ``h`` the half-width of the 95% t-interval, then the pooled out-of-fold P/R/F1 per level
    with their 95% bootstrap intervals.
    """
    if not rows:
        return "no runs"
    if any("folds" in r for r in rows):
        return _format_cv(rows)
    axes = list(rows[0]["axes"])
    metrics = [m for m in SUMMARY_METRICS if any(m in r for r in rows)]
    header = [*axes, "seeds", *metrics]
    body = []
    for r in rows:
        cells = [str(r["axes"].get(a)) for a in axes] + [str(r["seeds"])]
        for m in metrics:
            v = r.get(m)
            fmt = "{:.1f} ± {:.1f}" if m == "entries_added" else "{:.4f} ± {:.4f}"
            cells.append(fmt.format(v["mean"], v["std"]) if v else "-")
        body.append(cells)
    return _table(header, body)


def _table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(line, widths, strict=True))
                     for line in [header, *body])


def _pm(v: Mapping[str, Any] | None, digits: int) -> str:
    if not v:
        return "-"
    if v.get("ci_low") is None:
        return f"{v['mean']:.{digits}f}"
    return f"{v['mean']:.{digits}f} ± {(v['ci_high'] - v['ci_low']) / 2:.{digits}f}"


def _format_cv(rows: Sequence[Mapping[str, Any]]) -> str:
    axes = list(rows[0]["axes"])
    names: list[str] = []
    for r in rows:
        names += [k for k in r if isinstance(r[k], Mapping) and "mean" in r[k]
                  and k not in names]
    head = [*axes, "folds", "seeds", *names]
    body = [[str(r["axes"].get(a)) for a in axes] + [str(r.get("folds")), str(r["seeds"])]
            + [_pm(r.get(m), 1 if m == "entries_added" else 4) for m in names] for r in rows]
    lines = ["mean over folds ± half-width of the 95% t-interval", _table(head, body), "",
             "pooled out-of-fold micro scores [95% document-bootstrap interval]"]
    levels: list[str] = []
    for r in rows:
        levels += [lvl for lvl in r.get("pooled", {}) if lvl != "hrm" and lvl not in levels]
    head2 = [*axes, *(f"{lvl} {k}" for lvl in levels for k in ("P", "R", "F1"))]
    body2 = []
    for r in rows:
        cells = [str(r["axes"].get(a)) for a in axes]
        for lvl in levels:
            p = r.get("pooled", {}).get(lvl)
            for k in ("precision", "recall", "f1"):
                cells.append("-" if p is None else _with_ci(p[k], (p.get("ci") or {}).get(k)))
        body2.append(cells)
    lines.append(_table(head2, body2))
    return "\n".join(lines)


def _with_ci(value: float, ci: Sequence[float] | None) -> str:
    return f"{value:.4f}" if not ci else f"{value:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]"
