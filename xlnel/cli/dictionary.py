"""``xlnel dictionary`` (train a name translator, build a dictionary) and ``xlnel adapt``.

Each command is a thin wrapper over a function of :mod:`xlnel.dictionary.translate_kb`
(``train-translator``, ``build``) or :mod:`xlnel.dictionary.adapt` (``adapt``). Register them
on the main app with ``app.add_typer(dictionary_app, name="dictionary")`` and
``app.command("adapt")(adapt_cli)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from xlnel.cli import command_group
from xlnel.errors import XlnelError

app = command_group("Build a source-language dictionary by translating an English KB.")

T = TypeVar("T")

KbOpt = Annotated[list[str], typer.Option(
    "--kb", help="English knowledge base: 'hpo', 'tsv:PATH', 'obo:PATH'... (repeatable); "
    "'?types=...' keeps concepts of those types ('hpo?types=Phenotypic abnormality'), "
    "'?groups=...' those of UMLS semantic groups ('?groups=DISO').")]
LangOpt = Annotated[str, typer.Option(help="Language code of the dictionary.")]
NBestOpt = Annotated[int, typer.Option(min=1, help="Renderings kept per English name.")]
MaxNamesOpt = Annotated[int, typer.Option(min=1, help="Most translated names per concept.")]
LimitOpt = Annotated[int | None, typer.Option(min=1, help="Most concepts taken from each KB.")]
EpochsOpt = Annotated[int | None, typer.Option(min=1, help="Most training epochs.")]
SecondsOpt = Annotated[float | None, typer.Option(help="Training wall-clock budget (seconds).")]
HiddenOpt = Annotated[int | None, typer.Option(min=1, help="GRU size.")]
EmbeddingOpt = Annotated[int | None, typer.Option(min=1, help="Character embedding size.")]
BatchOpt = Annotated[int | None, typer.Option(min=1, help="Training batch size.")]
DeviceOpt = Annotated[str | None, typer.Option(help="Torch device: cpu or cuda.")]
TestOpt = Annotated[float, typer.Option(help="Share of source words held out for evaluation.")]


def _run(job: Callable[[], T]) -> T:
    """Run a job; on bad input print ``error: ...`` and exit with status 1."""
    try:
        return job()
    except (XlnelError, OSError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from e


def _overrides(epochs: int | None, max_seconds: float | None, hidden_size: int | None,
               embedding_dim: int | None, batch_size: int | None,
               device: str | None) -> dict[str, Any]:
    return {"epochs": epochs, "max_train_seconds": max_seconds, "hidden_size": hidden_size,
            "embedding_dim": embedding_dim, "batch_size": batch_size, "device": device}


@app.command("train-translator")
def train_translator_cli(
    pairs: Annotated[Path, typer.Argument(help="Pairs TSV: source<TAB>target[<TAB>kind].")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Translator folder to write.")],
    lang: LangOpt = "he", epochs: EpochsOpt = None, max_seconds: SecondsOpt = None,
    hidden_size: HiddenOpt = None, embedding_dim: EmbeddingOpt = None,
    batch_size: BatchOpt = None, device: DeviceOpt = None, test_fraction: TestOpt = 0.05,
) -> None:
    """Train a character translator on PAIRS, save it to OUT and report held-out accuracy."""
    from xlnel.dictionary.translate_kb import train_translator_from_pairs

    overrides = {**_overrides(epochs, max_seconds, hidden_size, embedding_dim, batch_size,
                              device), "target_lang": lang}
    report = _run(lambda: train_translator_from_pairs(
        pairs, out, overrides, test_fraction=test_fraction, progress=True))
    typer.echo(json.dumps({"held_out": report["held_out"], "data": report["data"],
                           "epochs_run": report["epochs_run"]}, ensure_ascii=False, indent=2))
    typer.echo(f"translator saved to {out}", err=True)


@app.command("build")
def build_cli(
    kb: KbOpt,
    translator: Annotated[Path, typer.Option(help="Folder of a trained translator.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dictionary TSV, or a folder.")],
    lang: LangOpt = "he", n_best: NBestOpt = 3, max_names: MaxNamesOpt = 5,
    limit: LimitOpt = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an existing OUT file that is not a dictionary TSV.")] = False,
) -> None:
    """Translate the names of the KBs with TRANSLATOR into a dictionary TSV (an earlier
    dictionary at OUT is replaced; any other file only with --force)."""
    from xlnel.dictionary.translate_kb import build_dictionary_from_kb

    report = _run(lambda: build_dictionary_from_kb(kb, translator, lang, out, n_best, max_names,
                                                   limit, progress=True, force=force))
    typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
    typer.echo(f"dictionary saved to {report['out']}", err=True)


def _embedder(model: str | None) -> Any:
    """A CPU text embedder of an encoder, its embeddings cached under XLNEL_CACHE."""
    if model is None:
        return None
    from xlnel.linkers.encoder import EntityEncoder, cached_encode

    encoder = EntityEncoder(model, device="cpu")
    return lambda texts: cached_encode(encoder, list(texts))


def adapt_cli(
    lang: Annotated[str, typer.Option(help="Language code of the pair targets.")],
    pairs: Annotated[Path, typer.Option(help="English-to-LANG word pairs TSV (MUSE format).")],
    kb: KbOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")],
    corpus: Annotated[list[Path] | None, typer.Option(
        help="LANG texts (plain text, JSONL, PubTator, BioC files or BRAT folders) to "
             "rank renderings (repeatable).")] = None,
    language_file: Annotated[Path | None, typer.Option(
        help="Language grammar file (YAML) instead of the shipped one.")] = None,
    generic_grammar: Annotated[bool, typer.Option(
        help="Use the generic defaults of a language without a grammar file, even where one "
             "is shipped (how a new language fares).")] = False,
    segment_order: Annotated[str | None, typer.Option(
        help="Order of a modifier-head word chain (keep: before the head, as in English; "
             "reverse: after it; both), instead of the language file's or the word-order "
             "table's.")] = None,
    n_best: NBestOpt = 6, max_names: Annotated[int | None, typer.Option(
        min=1, help="Most names per concept (default: no limit).")] = None,
    limit: LimitOpt = None,
    translit_seconds: Annotated[float, typer.Option(
        min=0.0, help="Training budget of the transliteration model (0: none).")] = 180.0,
    induce: Annotated[bool, typer.Option(
        help="Add corpus n-grams whose back-translation is a KB name.")] = True,
    keep_english: Annotated[bool, typer.Option(
        help="Also keep the English names of the concepts (source kb).")] = True,
    encoder: Annotated[str | None, typer.Option(
        help="Multilingual encoder whose nearest LANG pair word renders a word the pairs "
             "lack (e.g. multilingual-e5-small).")] = None,
    everyday_top: Annotated[int | None, typer.Option(
        min=0, help="The target words of this many of the pairs' most frequent English words "
                    "are everyday words: left out of OUT/linking.tsv as one-word generated "
                    "names (0: none; default: xlnel.dictionary.adapt.EVERYDAY_TOP).")] = None,
) -> None:
    """Adapt to a new language: render the KBs into LANG from word PAIRS.

    Writes OUT/dictionary.tsv (use it as ``dictionary.extra`` of a pipeline config),
    OUT/stopwords.txt (for ``candidates.stopwords``), OUT/linking.tsv (the dictionary without
    the one-word names that read as everyday words), OUT/pipeline.yaml (a config that links
    with it and the stop words before any annotation) and OUT/report.json (counts by source,
    timings, peak memory).
    """
    from xlnel.dictionary.adapt import EVERYDAY_TOP, adapt
    from xlnel.dictionary.render import BuildSettings

    settings = BuildSettings(n_best=n_best, max_names_per_concept=max_names,
                             keep_english=keep_english, encoder=encoder)
    report = _run(lambda: adapt(lang, pairs, kb, out, corpus=corpus or (),
                                language_file=language_file, settings=settings,
                                transliteration_seconds=translit_seconds, limit=limit,
                                progress=True, induce=induce, embed=_embedder(encoder),
                                generic_grammar=generic_grammar,
                                segment_order=segment_order,
                                everyday_top=(EVERYDAY_TOP if everyday_top is None
                                              else everyday_top)))
    summary = {k: report[k]
               for k in ("language_file", "segment_order", "dictionary", "stopwords", "linking",
                         "pipeline",
                         "seconds", "peak_memory_mb")}
    typer.echo(json.dumps(summary, ensure_ascii=False, indent=2))
    typer.echo(f"adapted to {lang!r} in {out}; its stop words: set candidates.stopwords to "
               f"{report['stopwords']['out']}; to link before annotating anything: xlnel train "
               f"{report['pipeline']} --out PIPELINE", err=True)
