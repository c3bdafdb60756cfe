"""Experiments: grid runs over config keys with cached stages, and their report."""

from __future__ import annotations

from xlnel.experiments.runner import (
    Cell,
    format_summary,
    parse_grid,
    read_runs,
    run_experiment,
    summarize,
)

__all__ = ["Cell", "format_summary", "parse_grid", "read_runs", "run_experiment", "summarize"]
