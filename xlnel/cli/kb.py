"""``xlnel kb`` (what a knowledge base holds, as xlnel loads it) and ``xlnel models`` (the
encoders usable offline). Registered on the main app as ``app.command("kb")(kb_cli)`` and
``app.add_typer(models_app, name="models")``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from xlnel.cli import command_group


def kb_cli(
    specs: Annotated[list[str], typer.Argument(
        help="Knowledge-base specs: 'hpo', 'tsv:PATH', 'mrconso:PATH?types=T047', "
        "'mrconso:PATH?groups=DISO'...")],
    top: Annotated[int, typer.Option(min=1, help="Most types and vocabularies listed.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object a spec.")]
    = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Also write the concepts of every spec, as loaded (options applied), to "
        "this TSV table (.tsv, optionally .gz), which tsv:FILE reads.")] = None,
) -> None:
    """Concepts, names, types, UMLS semantic groups, cross-references and retired ids of
    knowledge bases, as xlnel loads them."""
    from xlnel.io import load_kb
    from xlnel.io.kb_history import kb_id_history
    from xlnel.io.kb_summary import summarize_concepts
    from xlnel.io.kb_write import write_kb_tsv

    if out is not None:
        _check_kb_table(specs, out)
    loaded = [(spec, load_kb(spec)) for spec in specs]  # each read once, for table and summary
    if out is not None:
        concepts, names = write_kb_tsv(out, (c for _, found in loaded for c in found))
        typer.echo(f"wrote {concepts} concepts ({names} names) to {out}", err=True)
    for spec, found in loaded:
        summary = summarize_concepts(spec, found, top, len(kb_id_history(spec)))
        typer.echo(json.dumps(summary.to_dict(), ensure_ascii=False) if as_json
                   else summary.format())


def _check_kb_table(specs: list[str], out: Path) -> None:
    """``xlnel kb --out``: a ``.tsv`` name that is none of the files the specs read."""
    from xlnel.errors import OutputError
    from xlnel.io.kb import kb_files
    from xlnel.outputs import check_disjoint

    if [s.lower() for s in out.suffixes if s.lower() != ".gz"][-1:] != [".tsv"]:
        raise OutputError(f"--out {out}: a knowledge-base table is written as .tsv (optionally "
                          ".tsv.gz)")
    check_disjoint(out, [path for spec in specs for path in kb_files(spec)],
                   out_is_folder=False)


models_app = command_group("Encoders usable offline, by registered name.")


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
