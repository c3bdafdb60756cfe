"""``xlnel dictionary coverage``: how well a dictionary covers gold texts.

A thin wrapper over :func:`xlnel.analysis.coverage.coverage`; registered on the dictionary
app by :mod:`xlnel.cli.main`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from xlnel.errors import XlnelError

# Arguments and options shared with ``xlnel dictionary lookup`` (xlnel.cli.lookup).
DictionaryArg = Annotated[str, typer.Argument(
    help="Dictionary TSV, 'xlnel adapt' folder, or KB spec ('hpo', 'names:PATH'...).")]
LangOpt = Annotated[str | None, typer.Option(
    help="Normalisation language (default: the adapt report's, else he/en by script).")]
RankOpt = Annotated[str, typer.Option(
    help="Concept ranking: 'cosine' (best name's cosine), 'weighted' (times the entry's "
         "builder score to the power --weight), 'words' (plus 0.25 times the name's IDF-"
         "weighted word overlap with the text) or 'hybrid' (plus --encoder-weight times the "
         "--encoder cosine among the KB names).")]
WeightOpt = Annotated[float, typer.Option(
    min=0.0, help="Exponent of the builder score in the weighted ranking.")]
EncoderOpt = Annotated[str | None, typer.Option(
    help="Multilingual encoder of --rank hybrid (HF id, folder or 'xlnel models' name, e.g. "
         "multilingual-e5-small).")]
EncoderWeightOpt = Annotated[float, typer.Option(
    min=0.0, help="Weight of the encoder cosine in --rank hybrid.")]
StopwordsOpt = Annotated[Path | None, typer.Option(
    help="Stop-word file (one word a line, e.g. an 'xlnel adapt' folder's stopwords.txt) "
         "whose words names and texts are compared without.")]
FoldAccentsOpt = Annotated[bool, typer.Option(
    "--fold-accents", help="Compare names and texts with the accents of Latin letters "
                           "folded (é -> e).")]


def coverage_cli(
    dictionary: DictionaryArg,
    gold: Annotated[list[Path], typer.Argument(
        help="Gold corpora (JSONL, PubTator) or TSVs of concept_id, english, translation.")],
    lang: LangOpt = None,
    threshold: Annotated[float, typer.Option(min=0.0, max=1.0,
                                             help="Fuzzy TF-IDF cosine threshold.")] = 0.8,
    k: Annotated[int, typer.Option("--k", min=1, help="Larger accuracy cut-off.")] = 10,
    rank: RankOpt = "cosine",
    weight: WeightOpt = 0.1,
    kb: Annotated[str | None, typer.Option(
        help="KB spec ('hpo', 'obo:PATH', an MRCONSO with MRCUI.RRF beside it) whose retired "
             "ids (alt_id, replaced_by; merged CUIs) are mapped "
             "to current ones in the gold.")] = None,
    encoder: EncoderOpt = None,
    encoder_weight: EncoderWeightOpt = 8.0,
    stopwords: StopwordsOpt = None,
    fold_accents: FoldAccentsOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    details: Annotated[Path | None, typer.Option(
        help="Also write one row a distinct gold item to this TSV file: found exactly, "
             "fuzzily, under its concept, the gold concept's rank, the best concept and the "
             "nearest name.")] = None,
) -> None:
    """Share of GOLD texts found in DICTIONARY exactly and fuzzily, and lookup accuracy."""
    from xlnel.analysis.coverage import coverage, format_table
    from xlnel.io.kb import kb_files
    from xlnel.outputs import check_disjoint

    try:
        if details is not None:
            inputs = [Path(dictionary), *kb_files(dictionary), *gold,
                      *([] if kb is None else kb_files(kb)),
                      *([] if stopwords is None else [stopwords])]
            check_disjoint(details, inputs, out_is_folder=False, option="--details")
        report = coverage(dictionary, gold, lang, threshold, k, rank, weight, kb, encoder,
                          encoder_weight, stopwords, fold_accents, details)
    except (XlnelError, OSError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from e
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        typer.echo(format_table(report))
