"""``xlnel encoder``: synonym alignment of an entity encoder, and its accuracy on gold mentions.

Thin wrappers over :func:`xlnel.linkers.align.align_encoder` and
:func:`xlnel.linkers.align.evaluate_encoder`. Register on the main app with
``app.add_typer(encoder_app, name="encoder")``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from xlnel.cli import command_group
from xlnel.errors import XlnelError

app = command_group("Entity encoders of the dense linker: align and evaluate.")

KbOpt = Annotated[list[str] | None, typer.Option(
    "--kb", help="Knowledge base: 'tsv:PATH', 'term2cui:PATH', 'hpo'... (repeatable); "
    "'?types=...' keeps concepts of those types, '?groups=...' those of UMLS semantic groups.")]
DictOpt = Annotated[list[Path] | None, typer.Option(
    "--dictionary", help="Dictionary TSV (name, concept_id, source), e.g. DFT pairs.")]
ModelOpt = Annotated[str, typer.Option(help="Registered name, Hugging Face id or folder.")]
# choices typed here, so a bad value is reported as the option the user typed (--pooling)
PoolingOpt = Annotated[Literal["cls", "mean"] | None, typer.Option(
    help="cls or mean (default: model's).")]
PrefixOpt = Annotated[str | None, typer.Option(help="Text prefix (default: model's).")]
LangOpt = Annotated[str, typer.Option(help="Language rules of name normalisation.")]
DeviceOpt = Annotated[Literal["cpu", "cuda", "auto"], typer.Option(help="cpu, cuda or auto.")]


def _run_options(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _fail(e: Exception) -> typer.Exit:
    typer.echo(f"error: {e}", err=True)
    return typer.Exit(1)


@app.command("align")
def align_cli(
    out: Annotated[Path, typer.Option("--out", "-o", help=(
        "Model folder to write: new, empty or an earlier aligned encoder (replaced); never "
        "an input."))],
    kb: KbOpt = None,
    dictionary: DictOpt = None,
    model: ModelOpt = "multilingual-e5-small",
    pooling: PoolingOpt = None, prefix: PrefixOpt = None, lang: LangOpt = "en",
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the pairs.")] = 1,
    batch_size: Annotated[int, typer.Option(
        min=2, help="Names per batch, at least 8 (the loss compares those of one batch, up "
                    "to 4 a concept).")] = 64,
    lr: Annotated[float, typer.Option(help="Learning rate (AdamW).")] = 2e-5,
    max_pairs: Annotated[int | None, typer.Option(help="Most (name, concept) pairs.")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Most batches.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the pair sampling and of torch.")] = 0,
    device: DeviceOpt = "auto",
) -> None:
    """Fine-tune an encoder so that synonyms of a concept embed together; save it to OUT."""
    from xlnel.linkers.align import align_encoder

    options = _run_options(model=model, pooling=pooling, prefix=prefix, lang=lang,
                           epochs=epochs, batch_size=batch_size, lr=lr, max_pairs=max_pairs,
                           max_steps=max_steps, seed=seed, device=device)
    try:
        report = align_encoder(kb or [], out, dictionary or [], options, progress=True)
    except (XlnelError, OSError, ValueError) as e:
        raise _fail(e) from e
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
    typer.echo(f"aligned encoder saved to {out}", err=True)


@app.command("evaluate")
def evaluate_cli(
    gold: Annotated[Path, typer.Option(help="Gold documents (JSONL, PubTator, BRAT).")],
    kb: KbOpt = None,
    dictionary: DictOpt = None,
    model: ModelOpt = "multilingual-e5-small",
    pooling: PoolingOpt = None, prefix: PrefixOpt = None, lang: LangOpt = "en",
    k: Annotated[int, typer.Option(min=1, help="Second cut-off (accuracy@k).")] = 5,
    device: DeviceOpt = "auto",
    batch_size: Annotated[int, typer.Option(min=1, help="Texts per encoder pass.")] = 128,
) -> None:
    """Accuracy@1/@k of linking GOLD mentions (text only) to their concept by nearest name."""
    from xlnel.linkers.align import evaluate_encoder

    options = _run_options(pooling=pooling, prefix=prefix, device=device,
                           batch_size=batch_size)
    try:
        report = evaluate_encoder(model, kb or [], gold, dictionary or [], lang, k, options,
                                  progress=True)
    except (XlnelError, OSError, ValueError) as e:
        raise _fail(e) from e
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
