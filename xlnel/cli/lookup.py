"""``xlnel dictionary lookup``: the best concepts of terms, looked up in a dictionary.

A thin wrapper over :func:`xlnel.analysis.terms.lookup_terms`; registered on the dictionary app
by :mod:`xlnel.cli.main`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from xlnel.cli.coverage import (
    DictionaryArg,
    EncoderOpt,
    EncoderWeightOpt,
    FoldAccentsOpt,
    LangOpt,
    RankOpt,
    StopwordsOpt,
    WeightOpt,
)
from xlnel.errors import FormatError, XlnelError
from xlnel.io._atomic import iter_lines


def read_terms(file: Path) -> list[str]:
    """The non-blank lines of a UTF-8 file (``-``: standard input), trimmed.

    Raises:
        FileNotFoundError: If the file does not exist.
        FormatError: On a line that is not valid UTF-8 (naming file and line).
    """
    if str(file) != "-":
        return [line.strip() for _, line in iter_lines(file) if line.strip()]
    terms = []
    for number, raw in enumerate(sys.stdin.buffer, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(f"not valid UTF-8 ({e.reason})", "<stdin>", number) from e
        if line.strip():
            terms.append(line.strip())
    return terms


def lookup_cli(
    dictionary: DictionaryArg,
    terms: Annotated[list[str] | None, typer.Argument(help="Terms to look up.")] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", help="UTF-8 file of terms, one a line (blank lines skipped; '-': standard "
                       "input).")] = None,
    lang: LangOpt = None,
    k: Annotated[int, typer.Option("--k", min=1, help="Concepts per term.")] = 5,
    rank: RankOpt = "cosine",
    weight: WeightOpt = 0.1,
    encoder: EncoderOpt = None,
    encoder_weight: EncoderWeightOpt = 8.0,
    stopwords: StopwordsOpt = None,
    fold_accents: FoldAccentsOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """Best concepts of TERMS (and of --file's lines): term, rank, concept, score, name."""
    from xlnel.analysis.terms import lookup_terms

    try:
        texts = list(terms or []) + (read_terms(file) if file is not None else [])
        if not texts and file is not None:
            raise ValueError(f"--file {file} holds no term (blank lines are skipped)")
        if not texts:
            raise ValueError("give terms as arguments or with --file")
        found = lookup_terms(dictionary, texts, lang, k, rank, weight, encoder, encoder_weight,
                             stopwords, fold_accents)
    except (XlnelError, OSError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from e
    if as_json:
        typer.echo(json.dumps([t.to_dict() for t in found], ensure_ascii=False, indent=2))
        return
    for term in found:
        text = " ".join(term.text.split("\t"))  # a tab in a term would shift the columns
        if not term.concepts:
            typer.echo(f"{text}\t-\t\t\t")
        for i, c in enumerate(term.concepts, 1):
            typer.echo(f"{text}\t{i}\t{c.concept_id}\t{c.score:.4f}\t{c.name}")
