"""The ``xlnel`` command line: one sub-command per job, each a thin wrapper."""

from __future__ import annotations

import json
import logging
import sys
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Annotated, Any

import typer

from xlnel import __version__
from xlnel.cli.dictionary import adapt_cli
from xlnel.cli.dictionary import app as dictionary_app
from xlnel.cli.encoder import app as encoder_app
from xlnel.cli.experiment import experiment_cli, report_cli
from xlnel.errors import XlnelError
from xlnel.threads import DEFAULT_THREADS, set_threads

app = typer.Typer(help="Cross-lingual biomedical named-entity linking.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)

_EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}


def _overrides(pairs: list[str] | None, extra: list[str]) -> dict[str, Any]:
    """``--set a.b=1`` items plus ``--a.b 1`` / ``--a.b=1`` extra arguments."""
    from xlnel.config import parse_overrides

    items = list(pairs or [])
    i = 0
    while i < len(extra):
        arg = extra[i]
        if not arg.startswith("--") or len(arg) == 2:
            raise typer.BadParameter(f"unexpected argument {arg!r}")
        key = arg[2:]
        if "=" in key:
            items.append(key)
            i += 1
        elif i + 1 < len(extra):
            items.append(f"{key}={extra[i + 1]}")
            i += 2
        else:
            raise typer.BadParameter(f"{arg} needs a value")
    return parse_overrides(items)


def _pipeline_dir(name: str) -> Path:
    from xlnel.defaults import DEFAULT_PIPELINES, default_pipeline_dir

    return default_pipeline_dir(progress=True) if name in DEFAULT_PIPELINES else Path(name)


@app.command("train", context_settings=_EXTRA)
def train_cli(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="Pipeline config (YAML).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Pipeline folder to write.")],
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override: key.path=value.")]
    = None,
) -> None:
    """Train a pipeline from CONFIG and save it to OUT (extra ``--key.path value`` override)."""
    from xlnel.config import load_config
    from xlnel.pipeline import train

    cfg = load_config(config, _overrides(set_, ctx.args))
    report = train(cfg, out, progress=True)
    typer.echo(json.dumps(report, indent=2))
    typer.echo(f"pipeline saved to {out}", err=True)


@app.command("link")
def link_cli(
    pipeline: Annotated[str, typer.Argument(help="Pipeline folder, or 'default' (HPO).")],
    source: Annotated[Path | None, typer.Argument(help="JSONL or PubTator documents.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output (default stdout).")]
    = None,
    text: Annotated[str | None, typer.Option("--text", help="Link this text instead.")] = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 64,
    workers: Annotated[int, typer.Option(min=1, help="Processes (or Ray actors).")] = 1,
    shards: Annotated[bool, typer.Option(
        "--shards", help="SOURCE is a folder or glob of shard files, OUT a folder; one output "
        "per shard, finished shards skipped.")] = False,
    ray: Annotated[str | None, typer.Option(
        "--ray", help="Link the shards on Ray: auto, ADDRESS, or local (implies --shards).")]
    = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Change a search or inference setting of the trained pipeline for this "
        "run: key.path=value under candidates, filter or linker (e.g. "
        "candidates.workers=4, filter.options.inference_dtype=bfloat16).")] = None,
) -> None:
    """Link documents (or --text) and write JSONL (or PubTator for a .pubtator output).

    The input is streamed and OUT written atomically (.gz in and out by name).
    """
    from xlnel.config import parse_overrides
    from xlnel.io import document_to_dict, write_jsonl
    from xlnel.io.documents import iter_documents
    from xlnel.pipeline import SavedPipeline, link, link_documents
    from xlnel.stream import link_shards
    from xlnel.types import Document

    if (source is None) == (text is None):
        raise typer.BadParameter("give either SOURCE or --text")
    saved = SavedPipeline.of(_pipeline_dir(pipeline), parse_overrides(set_ or []))
    if shards or ray is not None:
        if source is None or out is None:
            raise typer.BadParameter("--shards and --ray need SOURCE and --out FOLDER")
        results = link_shards(saved, str(source), out, batch_size, workers, ray, progress=True)
        done = [r for r in results if not r.skipped]
        typer.echo(f"linked {sum(r.documents for r in done)} documents in {len(done)} shards "
                   f"({len(results) - len(done)} already done) into {out}", err=True)
        return
    if source is not None and out is not None:
        n = link(saved, source, out, batch_size, True, workers)
        typer.echo(f"linked {n} documents", err=True)
        return
    if source is not None:  # JSON lines on stdout, one document as soon as its batch is linked
        docs = iter_documents(source)
        for doc in link_documents(saved, docs, batch_size, workers=workers):
            typer.echo(json.dumps(document_to_dict(doc), ensure_ascii=False))
        return
    pipe = saved.load()
    if text is not None:
        linked = pipe.link_batch([Document("text-0", text)])
        if out is None:
            names = pipe.dictionary.preferred_names()
            for ent in linked[0].entities:
                cid = ent.concept_id or ""
                typer.echo(f"{ent.start}\t{ent.end}\t{ent.text}\t{cid}\t{names.get(cid, '')}"
                           f"\t{ent.score or 0.0:.3f}")
        else:
            write_jsonl(out, linked)


@app.command("evaluate")
def evaluate_cli(
    gold: Annotated[Path, typer.Argument(help="Gold documents (JSONL or PubTator).")],
    pred: Annotated[Path, typer.Argument(help="Predicted documents.")],
    level: Annotated[str, typer.Option(help="span, concept or overlap.")] = "span",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Precision, recall and F1 of PRED against GOLD."""
    from xlnel.evaluation.files import evaluate_files

    scores = evaluate_files(gold, pred, level)
    if as_json:
        typer.echo(json.dumps(scores.to_dict()))
    else:
        typer.echo(f"{level}: P {scores.precision:.4f}  R {scores.recall:.4f}  "
                   f"F1 {scores.f1:.4f}  (tp {scores.tp}, fp {scores.fp}, fn {scores.fn})")


@app.command("candidates")
def candidates_cli(
    pipeline: Annotated[str, typer.Argument(help="Pipeline folder.")],
    gold: Annotated[Path, typer.Argument(help="Annotated documents.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """High-recall-matching recall on GOLD and candidates per span."""
    from xlnel.pipeline import candidate_recall

    report = candidate_recall(_pipeline_dir(pipeline), gold, progress=True)
    if as_json:
        typer.echo(json.dumps(report))
    else:
        for level, r in report.items():
            typer.echo(f"{level}: HRM recall {r['recall']:.4f} ({r['found']}/{r['total']}), "
                       f"{r['candidates_per_span']:.1f} candidates per span")


app.add_typer(dictionary_app, name="dictionary")
app.add_typer(encoder_app, name="encoder")
app.command("adapt")(adapt_cli)
app.command("experiment")(experiment_cli)
app.command("report")(report_cli)

models_app = typer.Typer(help="Encoders usable offline, by registered name.",
                         no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("build")
def models_build_cli(
    name: Annotated[str, typer.Argument(help="Registered name, e.g. multilingual-e5-small.")],
    force: Annotated[bool, typer.Option(help="Rebuild even if already built.")] = False,
) -> None:
    """Build a registered encoder into the cache (XLNEL_CACHE) as a transformers folder."""
    from xlnel.models import build_model

    typer.echo(str(build_model(name, force=force)))


@models_app.command("list")
def models_list_cli() -> None:
    """List the registered encoders."""
    from xlnel.models import registered_models

    for name in registered_models():
        typer.echo(name)


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _main(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version.")] = False,
    threads: Annotated[int, typer.Option(
        "--threads", min=0, envvar="XLNEL_THREADS",
        help="Threads of each numeric library (OpenMP, BLAS, torch) in every process and "
        "worker; 0 leaves the libraries' own defaults.")] = DEFAULT_THREADS,
) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    set_threads(threads)  # before the commands import scikit-learn or torch


def main() -> None:
    """Entry point: run the app; xlnel's own errors become a one-line message and exit 1."""
    try:
        app()
    except (XlnelError, FileNotFoundError, ValueError, BrokenProcessPool) as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
