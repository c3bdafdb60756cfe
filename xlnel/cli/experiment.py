"""``xlnel experiment`` (grid runs with cached stages) and ``xlnel report`` (figures).

Thin wrappers over :func:`xlnel.experiments.run_experiment` and
:func:`xlnel.experiments.report.report`; registered on the main app with
``app.command("experiment")(experiment_cli)`` and ``app.command("report")(report_cli)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xlnel.cli import config_overrides


def experiment_cli(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="Base pipeline config (YAML).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for runs.jsonl and cache.")],
    grid: Annotated[list[str] | None, typer.Option(
        "--grid", help="Axis key.path=v1,v2,... (repeatable; cells are the cross product; "
                       "each value once).")]
    = None,
    seeds: Annotated[str, typer.Option(
        help="N: seeds 0..N-1 per grid point; or a list such as 3,4 (to split a sweep between "
             "processes or machines, each with its own --out).")] = "1",
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override: key.path=value.")]
    = None,
    cache: Annotated[Path | None, typer.Option(
        help="Stage cache folder (default $XLNEL_CACHE/experiments, else OUT/cache).")] = None,
    folds: Annotated[int | None, typer.Option(
        "--folds", min=2, help="K-fold cross-validation by document over data.train "
                               "(folds seeded by data.split_seed).")] = None,
    fold_ids: Annotated[str | None, typer.Option(
        "--fold-ids", help="With --folds: run only these folds, such as 0,1 (to split a "
                           "cross-validation between processes or machines, each with its own "
                           "--out; concatenate their runs.jsonl into one folder to resume "
                           "and summarise all folds).")] = None,
) -> None:
    """Run every grid cell x seed [x fold] (skipping those in OUT/runs.jsonl); print a summary
    (extra ``--key.path value`` override).

    Seed s sets seed and every stage seed (dft.seed; the filter's, a cascade prefilter's and
    a trained tagger's options.seed where they take one). Without --folds the held-out
    test documents (data.test, or the data.split_seed split) stay the same, so every run is
    scored on them; with --folds K each cell trains on K-1 folds of data.train and is scored
    on the remaining one, and the summary gives the mean over folds with a 95% t-interval and
    the pooled out-of-fold scores with 95% document-bootstrap intervals.
    A finished cell is skipped only if it ran with the same config; a setting that a later
    xlnel version added counts as the same when it holds its default.
    """
    from xlnel.experiments import format_summary, parse_grid, run_experiment, summarize

    records = run_experiment(config, parse_grid(grid or []), parse_seeds(seeds), out,
                             overrides=config_overrides(set_, ctx.args), cache_dir=cache,
                             progress=True, folds=folds,
                             fold_ids=None if fold_ids is None else parse_ids(fold_ids))
    typer.echo(format_summary(summarize(records)))
    typer.echo(f"{len(records)} runs in {out / 'runs.jsonl'}", err=True)


def parse_seeds(text: str) -> int | list[int]:
    """``"5"`` -> 5 (seeds 0..4); ``"3,4"`` -> [3, 4].

    Raises:
        typer.BadParameter: On anything but a positive count or a list of seeds >= 0.
    """
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise typer.BadParameter(f"--seeds takes a count or a comma-separated list of integers, "
                                 f"got {text!r}") from None
    if "," not in text:
        if len(values) != 1 or values[0] < 1:
            raise typer.BadParameter(f"--seeds count must be at least 1, got {text!r}")
        return values[0]
    if not values or min(values) < 0 or len(set(values)) != len(values):
        raise typer.BadParameter(f"--seeds list must hold distinct seeds >= 0, got {text!r}")
    return values


def parse_ids(text: str) -> list[int]:
    """``"0,2"`` -> [0, 2] (the folds of ``--fold-ids``; checked against ``--folds`` by
    :func:`xlnel.experiments.run_experiment`).

    Raises:
        typer.BadParameter: On anything but comma-separated integers.
    """
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise typer.BadParameter(f"--fold-ids takes comma-separated integers, got {text!r}"
                                 ) from None


def report_cli(
    dirs: Annotated[list[Path], typer.Argument(help="Experiment folders (one line each).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for PNGs and report.md.")],
    x: Annotated[str, typer.Option("--x", help="Grid axis on the x axis.")] = "dft.R",
    pool: Annotated[list[str] | None, typer.Option(
        "--pool", help="Grid axis whose values are replicates of one point, such as "
                       "data.subset_seed (repeatable).")] = None,
) -> None:
    """Draw HRM recall, F1 and added dictionary entries against R, and write report.md."""
    from xlnel.experiments.report import report

    for path in report(dirs, out, x_key=x, pool=pool or ()):
        typer.echo(str(path))
