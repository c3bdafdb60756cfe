"""The ``xlnel`` command line: one sub-command per job, each a thin wrapper."""

from __future__ import annotations

import json
import logging
import sys
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from xlnel.cli import EXTRA_ARGS, command_group, config_overrides
from xlnel.cli.coverage import coverage_cli
from xlnel.cli.dictionary import adapt_cli
from xlnel.cli.dictionary import app as dictionary_app
from xlnel.cli.encoder import app as encoder_app
from xlnel.cli.experiment import experiment_cli, report_cli
from xlnel.cli.kb import kb_cli, models_app
from xlnel.cli.lookup import lookup_cli
from xlnel.errors import XlnelError
from xlnel.threads import DEFAULT_THREADS, set_threads
from xlnel.version import __version__

if TYPE_CHECKING:
    from xlnel.pipeline import Pipeline

app = command_group("Cross-lingual biomedical named-entity linking.")

def _pipeline_dir(name: str) -> Path:
    from xlnel.defaults import DEFAULT_PIPELINES, default_pipeline_dir, default_pipeline_path

    if name not in DEFAULT_PIPELINES:
        return Path(name)
    if not (default_pipeline_path() / "config.yaml").is_file():
        typer.echo(f"xlnel: training the default English->HPO pipeline once into "
                   f"{default_pipeline_path()} (up to a minute; later runs load it)", err=True)
    return default_pipeline_dir(progress=True)


def _pipeline_path(name: str) -> Path:
    """The folder ``name`` stands for, without training the default pipeline."""
    from xlnel.defaults import DEFAULT_PIPELINES, default_pipeline_path

    return default_pipeline_path() if name in DEFAULT_PIPELINES else Path(name)


@app.command("train", context_settings=EXTRA_ARGS)
def train_cli(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="Pipeline config (YAML).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Pipeline folder to write.")],
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override: key.path=value.")]
    = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace OUT even if it is a non-empty folder that is not an xlnel "
        "pipeline (inputs are never overwritten).")] = False,
) -> None:
    """Train a pipeline from CONFIG and save it to OUT (extra ``--key.path value`` override).

    OUT must be a new or empty folder or an earlier pipeline folder; it is checked before
    training.
    """
    from xlnel.config import load_config
    from xlnel.pipeline import train

    cfg = load_config(config, config_overrides(set_, ctx.args))
    report = train(cfg, out, progress=True, overwrite=overwrite, inputs=[config])
    typer.echo(json.dumps(report, indent=2))
    typer.echo(f"pipeline saved to {out}", err=True)


@app.command("link")
def link_cli(
    pipeline: Annotated[str, typer.Argument(help="Pipeline folder, or 'default' (HPO).")],
    source: Annotated[Path | None, typer.Argument(
        help="JSONL, PubTator, BioC XML or BioC JSON documents, a plain .txt (one "
             "document), a folder of .txt (BRAT) files, or - for JSONL on the standard "
             "input.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output file (a folder for BRAT), or - for the standard output "
        "(the default).")] = None,
    text: Annotated[str | None, typer.Option("--text", help="Link this text instead.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Documents per batch.")] = 64,
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
    from_format: Annotated[str | None, typer.Option(
        "--from", help="SOURCE's format when its name does not tell it: jsonl, pubtator, "
        "bioc, biocjson, brat or text (the standard input, -, is otherwise read as JSONL).")]
    = None,
    to_format: Annotated[str | None, typer.Option(
        "--to", help="The output's format when OUT's name does not tell it, or on the "
        "standard output (otherwise JSONL, or one line a link for --text): jsonl, pubtator, "
        "bioc, biocjson, or brat (OUT a folder).")] = None,
) -> None:
    """Link documents (or --text) and write JSONL (PubTator for .pubtator, BioC for .xml or
    .bioc.json, or as --to says).

    The input is streamed and OUT written atomically (.gz in and out by name).
    """
    from xlnel.config import parse_overrides
    from xlnel.corpus.linking import link_shards
    from xlnel.pipeline import SavedPipeline, link

    if (source is None) == (text is None):
        raise typer.BadParameter("give either SOURCE or --text")
    if out is not None and str(out) == "-":
        out = None  # the standard output, as without --out
    if from_format is not None and (source is None or shards or ray is not None):
        raise typer.BadParameter("--from names the format of SOURCE, a file (shards are told "
                                 "by their names)")
    if to_format is not None and (shards or ray is not None):
        raise typer.BadParameter("--to names the format of OUT, a file (shard outputs take "
                                 "their shards' names)")
    _check_link_paths(pipeline, source, out, shards or ray is not None, from_format, to_format)
    saved = SavedPipeline.of(_pipeline_dir(pipeline), parse_overrides(set_ or []))
    if shards or ray is not None:
        if source is None or out is None:
            raise typer.BadParameter("--shards and --ray need SOURCE and --out FOLDER")
        results = link_shards(saved, str(source), out, batch_size, workers, ray, progress=True)
        done = [r for r in results if not r.skipped]
        typer.echo(f"linked {sum(r.documents for r in done)} documents in {len(done)} shards "
                   f"({len(results) - len(done)} already done) into {out}", err=True)
        return
    if source is not None:  # on stdout, each document as soon as its batch is linked
        n = link(saved, source, sys.stdout if out is None else out, batch_size, out is not None,
                 workers, from_format, to_format)
        if out is not None:
            typer.echo(f"linked {n} documents", err=True)
        return
    if text is not None:
        _link_text(saved.load(), text, out, to_format)


def _link_text(pipe: Pipeline, text: str, out: Path | None, to_format: str | None) -> None:
    """Link one text; print a line a link (start, end, text, id, name, score, id kind and, when
    asked for, the alternatives), or write it as a document ``text-0`` to OUT or as --to says."""
    from xlnel.io import write_documents
    from xlnel.io._atomic import ONE_LINE
    from xlnel.outputs import output_format
    from xlnel.scripts import ScriptCheck
    from xlnel.types import Document

    check = ScriptCheck(pipe.config.lang)
    check.add(text)
    check.finish()  # warns on stderr (logging) when the text is of another script
    linked = pipe.link_batch([Document("text-0", text)])
    if out is not None or to_format is not None:
        target = sys.stdout if out is None else out
        write_documents(target, linked, output_format(target, to_format))
        return
    if not linked[0].entities:  # said on stderr, so that standard output stays a table
        typer.echo("no concept linked in the text", err=True)
    for ent in linked[0].entities:
        # the alternatives, when asked for (--set linker.alternatives=K), as an 8th column
        more = ("\t" + ", ".join(f"{c} {score:.3f}" for c, score, _ in ent.alternatives)
                if pipe.config.linker.alternatives else "")
        # a tab or line break inside a mention or name would break the columns
        cells = [ent.text, ent.concept_id or "", ent.concept_name or ""]
        mention, cid, name = (cell.translate(ONE_LINE) for cell in cells)
        typer.echo(f"{ent.start}\t{ent.end}\t{mention}\t{cid}\t{name}\t"
                   f"{ent.score or 0.0:.3f}\t{ent.id_kind or ''}{more}")


def _check_link_paths(pipeline: str, source: Path | None, out: Path | None, shards: bool,
                      from_format: str | None = None, to_format: str | None = None) -> None:
    """Refuse, before any work, an output that would destroy an input (see xlnel.outputs) or
    a format that cannot be written there."""
    from xlnel.corpus.stream import check_link_output
    from xlnel.io.documents import check_source
    from xlnel.outputs import check_disjoint, output_format

    if source is not None and not shards and from_format is None:
        check_source(source)
    if out is None:
        if to_format is not None:
            output_format(sys.stdout, to_format)
        return
    if shards:
        if out.exists() and not out.is_dir():
            raise typer.BadParameter(f"--out {out} is a file; --shards writes a folder")
        # Shard outputs only add files named like the shards (an existing one must have been
        # written by this pipeline, see finished_shards): the folder may hold other things.
        inputs = [_pipeline_path(pipeline)] + ([source] if source and source.is_dir() else [])
        check_disjoint(out, inputs, out_is_folder=False)
        return
    check_link_output(_pipeline_path(pipeline), source, out, to_format)


@app.command("evaluate")
def evaluate_cli(
    gold: Annotated[Path, typer.Argument(
        help="Gold documents (JSONL, PubTator, BioC XML or JSON, or a BRAT folder).")],
    pred: Annotated[Path | None, typer.Argument(
        help="Predicted documents; - reads the standard input (JSONL unless --from says "
             "otherwise).")] = None,
    level: Annotated[list[str] | None, typer.Option(
        help="span (default), span-prefix, concept, overlap, span+type, concept+type, "
             "document, or all; repeatable.")]
    = None,
    by_type: Annotated[bool, typer.Option("--by-type", help="Add scores per entity type.")]
    = False,
    ci: Annotated[bool, typer.Option("--ci/--no-ci", help="Bootstrap 95% intervals.")] = True,
    bootstrap: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 1000,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the bootstrap and of --protocol's "
                                                 "sampling.")] = 0,
    compare: Annotated[Path | None, typer.Option(
        help="Predictions of a system B: paired bootstrap of F1(B) - F1(PRED).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    pipeline: Annotated[Path | None, typer.Option(
        help="Pipeline folder whose candidates and filter --protocol scores.")] = None,
    protocol: Annotated[str | None, typer.Option(
        help="Score the filter by another system's protocol instead of PRED: galperin2022 "
        "(sampled classifier; not end-to-end, see docs/evaluation-protocols.md).")] = None,
    kb: Annotated[str | None, typer.Option(
        help="KB spec ('hpo', 'obo:PATH', an MRCONSO with MRCUI.RRF beside it) whose retired "
             "ids (alt_id, replaced_by; merged CUIs) are mapped "
             "to current ones in every file before scoring.")] = None,
    errors: Annotated[Path | None, typer.Option(
        help="Also write every false negative and false positive of PRED at each level to "
             "this TSV file, classed: missed, spurious, boundary, wrong_concept, wrong_type, "
             "duplicate.")] = None,
    from_format: Annotated[str | None, typer.Option(
        "--from", help="The format of PRED and --compare when their names do not tell it: "
        "jsonl, pubtator, bioc, biocjson or brat (xlnel link DIR GOLD --to pubtator | xlnel "
        "evaluate GOLD - --from pubtator).")] = None,
) -> None:
    """Precision, recall and F1 of PRED against GOLD, with bootstrap intervals per level
    (or of --pipeline's filter by --protocol)."""
    if protocol is not None:
        _refuse_unused_by_protocol(kb=kb, errors=errors, from_format=from_format, pred=pred,
                                   level=level, compare=compare, by_type=by_type,
                                   bootstrap=bootstrap if ci else None)
        _protocol_report(gold, pipeline, protocol, seed, as_json)
        return
    if pipeline is not None:
        raise typer.BadParameter("--pipeline names the pipeline whose filter --protocol "
                                 "scores; without --protocol, PRED is scored: give --protocol "
                                 "or leave --pipeline out")
    if pred is None:
        raise typer.BadParameter("give PRED, the file of predicted documents (or --protocol "
                                 "with --pipeline)")
    if [str(p) for p in (gold, pred, compare)].count("-") > 1:
        raise typer.BadParameter("only one of GOLD, PRED and --compare can be - (the standard "
                                 "input)")
    if errors is not None:
        from xlnel.outputs import check_disjoint

        check_disjoint(errors, [p for p in (gold, pred, compare) if p is not None],
                       out_is_folder=False, option="--errors")
    _evaluate_prediction_file(gold, pred, level or ["span"], by_type, bootstrap if ci else None,
                              seed, compare, as_json, kb, errors, from_format)


def _refuse_unused_by_protocol(*, kb: str | None, errors: Path | None,
                               from_format: str | None, pred: Path | None,
                               level: list[str] | None, compare: Path | None, by_type: bool,
                               bootstrap: int | None) -> None:
    """``xlnel evaluate --protocol`` takes GOLD, --pipeline, --seed and --json: refuse the
    options of PRED's evaluation rather than ignore them."""
    if kb is not None:
        raise typer.BadParameter("--kb maps the ids of GOLD and PRED; --protocol scores "
                                 "the pipeline's filter on GOLD as written: give one")
    if errors is not None:
        raise typer.BadParameter("--errors lists the errors of PRED; --protocol scores a "
                                 "sampled classifier, which has none to list")
    if from_format is not None:
        raise typer.BadParameter("--from names the format of PRED; --protocol reads no "
                                 "PRED")
    given = [name for name, unused in (
        (f"PRED ({pred})", pred is not None), ("--level", bool(level)),
        ("--compare", compare is not None), ("--by-type", by_type),
        ("--bootstrap", bootstrap not in (None, 1000)), ("--no-ci", bootstrap is None))
        if unused]
    if given:
        raise typer.BadParameter(
            f"--protocol scores the pipeline's filter on GOLD alone, at the filter's own level "
            f"and without intervals; it does not use {', '.join(given)}: leave "
            f"{'it' if len(given) == 1 else 'them'} out (it takes GOLD, --pipeline, --seed and "
            "--json)")


def _evaluate_prediction_file(gold: Path, pred: Path, levels: list[str], by_type: bool,
                              n_resamples: int | None, seed: int, compare: Path | None,
                              as_json: bool, kb: str | None = None,
                              errors: Path | None = None,
                              from_format: str | None = None) -> None:
    """Evaluate PRED against GOLD and print the report as text tables or one JSON object."""
    from xlnel.evaluation.files import evaluate_files_report
    from xlnel.evaluation.report import format_report

    reports = evaluate_files_report(gold, pred, levels, by_type=by_type,
                                    n_resamples=n_resamples, seed=seed, compare=compare,
                                    kb=kb, errors=errors, pred_format=from_format)
    if as_json:
        typer.echo(json.dumps({name: r.to_dict() for name, r in reports.items()}))
    else:
        typer.echo(format_report(reports))
    if errors is not None:
        typer.echo(f"false negatives and false positives written to {errors}", err=True)


@app.command("serve")
def serve_cli(
    pipeline: Annotated[str, typer.Argument(help="Pipeline folder, or 'default' (HPO).")],
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    max_text_chars: Annotated[int, typer.Option(min=1, help="Longest text accepted.")]
    = 100_000,
    max_batch: Annotated[int, typer.Option(min=1, help="Most texts in one request.")] = 64,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override of the served pipeline: key.path=value "
                      "(linker.alternatives=3).")] = None,
) -> None:
    """Serve PIPELINE over HTTP: POST /link, GET /concepts/ID, /health, /metadata, a web page
    at / and the OpenAPI schema at /docs (needs ``pip install 'xlnel[serve]'``)."""
    from xlnel.config import parse_overrides
    from xlnel.serve import serve
    from xlnel.serve.app import Limits

    serve(pipeline, host, port, workers, Limits(max_text_chars, max_batch),
          overrides=parse_overrides(set_ or []))


def _protocol_report(gold: Path, pipeline: Path | None, protocol: str, seed: int,
                     as_json: bool) -> None:
    """``xlnel evaluate --protocol``: the sampled-classifier scores of a pipeline on GOLD."""
    from xlnel.analysis.protocol import PROTOCOLS, galperin2022_pipeline

    if protocol not in PROTOCOLS:
        raise typer.BadParameter(f"unknown protocol {protocol!r}; allowed: "
                                 f"{', '.join(PROTOCOLS)}", param_hint="--protocol")
    if pipeline is None:
        raise typer.BadParameter(f"--protocol {protocol} needs --pipeline DIR",
                                 param_hint="--pipeline")
    s = galperin2022_pipeline(pipeline, gold, seed=seed, progress=True)
    if as_json:
        typer.echo(json.dumps(s.to_dict()))
    else:
        typer.echo(f"{protocol} ({s.level}, seed {s.seed}; sampled, not end-to-end): "
                   f"P {s.precision:.4f}  R {s.recall:.4f}  F1 {s.f1:.4f}  "
                   f"(tp {s.tp}, fp {s.fp}, fn {s.fn}; {s.positives} positives, "
                   f"{s.negatives} negatives, {s.unreached} unreached)")


@app.command("candidates")
def candidates_cli(
    pipeline: Annotated[str, typer.Argument(help="Pipeline folder.")],
    gold: Annotated[Path, typer.Argument(help="Annotated documents.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    missed: Annotated[Path | None, typer.Option(
        help="Also write the gold mentions not reached, at each level, to this TSV file: why "
             "(no_span, other_concepts) and the nearest candidate.")] = None,
) -> None:
    """High-recall-matching recall on GOLD and candidates per span."""
    from xlnel.outputs import check_disjoint
    from xlnel.pipeline import candidate_recall

    if missed is not None:
        check_disjoint(missed, [_pipeline_path(pipeline), gold], out_is_folder=False,
                       option="--missed")
    report = candidate_recall(_pipeline_dir(pipeline), gold, progress=True, missed=missed)
    if as_json:
        typer.echo(json.dumps(report))
    else:
        for level, r in report.items():
            typer.echo(f"{level}: HRM recall {r['recall']:.4f} ({r['found']}/{r['total']}), "
                       f"{r['candidates_per_span']:.1f} candidates per span")
    if missed is not None:
        typer.echo(f"gold mentions not reached written to {missed}", err=True)


@app.command("convert")
def convert_cli(
    source: Annotated[Path, typer.Argument(
        help="Corpus: JSONL, PubTator, BioC XML or JSON, or plain .txt (optionally .gz), a "
             "BRAT folder, or - for the standard input (JSONL unless --from says "
             "otherwise).")],
    out: Annotated[Path, typer.Argument(
        help="Output: .jsonl, .pubtator, .xml (BioC), .bioc.json (BioC JSON), optionally "
             ".gz, an existing folder for BRAT files, or - for the standard output (JSONL "
             "unless --to says otherwise).")],
    from_format: Annotated[str | None, typer.Option(
        "--from", help="SOURCE's format when its name does not tell it: jsonl, pubtator, "
        "bioc, biocjson, brat or text.")] = None,
    to_format: Annotated[str | None, typer.Option(
        "--to", help="OUT's format when its name does not tell it, or on the standard "
        "output: jsonl, pubtator, bioc, biocjson, or brat (OUT a folder).")] = None,
) -> None:
    """Convert a corpus from one document format to another, streamed and written
    atomically."""
    from xlnel.corpus import convert

    stdout = str(out) == "-"  # written a document at a time
    counts = convert(source, sys.stdout if stdout else out, from_format, to_format)
    where = "the standard output" if stdout else out
    typer.echo(f"converted {counts['documents']} documents ({counts['entities']} mentions) "
               f"into {where}", err=True)


app.command("kb")(kb_cli)
dictionary_app.command("coverage")(coverage_cli)
dictionary_app.command("lookup")(lookup_cli)
app.add_typer(dictionary_app, name="dictionary")
app.add_typer(encoder_app, name="encoder")
app.command("adapt")(adapt_cli)
app.command("experiment", context_settings=EXTRA_ARGS)(experiment_cli)
app.command("report")(report_cli)
app.add_typer(models_app, name="models")


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
    """Entry point: run the app; xlnel's own errors, bad values and the system's refusals of a
    path (a folder where a file goes, a file where a folder goes) become a one-line message
    and exit 1."""
    try:
        app()
    except (XlnelError, OSError, ValueError, BrokenProcessPool) as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
