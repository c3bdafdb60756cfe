"""Translate knowledge-base names with a character model: train it, then translate a KB.

What ``xlnel dictionary train-translator`` and ``xlnel dictionary build`` run (``xlnel adapt``
renders names from the pairs as a lexicon instead: :mod:`xlnel.dictionary.adapt`):

* :func:`train_translator_from_pairs` reads a bilingual pair file (``source<TAB>target[<TAB>kind]``;
  a missing kind is derived, so transliterations are found without tagging), holds out a share of
  the source words, trains a :class:`~xlnel.dictionary.translator.CharTranslator`, saves it and
  evaluates it on the held-out pairs.
* :func:`build_dictionary_from_kb` translates the English names of one or more knowledge bases with
  a saved translator and writes the source-language dictionary TSV.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from xlnel.dictionary.adapt import DICTIONARY_FILE
from xlnel.dictionary.adapt_files import write_json
from xlnel.dictionary.builder import build_dictionary, evaluate_translator
from xlnel.dictionary.dictionary import HEADER
from xlnel.dictionary.kb_input import load_concepts
from xlnel.dictionary.pairs import WordPair, load_pairs, normalize_name, split_pairs
from xlnel.dictionary.translator import (
    CONFIG_FILE,
    VOCAB_FILE,
    WEIGHTS_FILE,
    CharTranslator,
    TranslatorConfig,
    train_translator,
)
from xlnel.errors import ConfigError, OutputError
from xlnel.io._atomic import check_writable, iter_lines
from xlnel.io.kb import kb_files
from xlnel.outputs import check_disjoint, check_replaced_folder, target_path
from xlnel.types import Concept
from xlnel.version import __version__

logger = logging.getLogger(__name__)

__all__ = ["TRAIN_REPORT_FILE", "build_dictionary_from_kb", "check_dictionary_output",
           "check_translator_output", "dictionary_path", "read_training_pairs",
           "train_translator_from_pairs", "translator_config"]

#: Report written next to a trained translator.
TRAIN_REPORT_FILE = "train_report.json"


def translator_config(overrides: Mapping[str, Any] | None = None,
                      base: TranslatorConfig | None = None) -> TranslatorConfig:
    """A translator config: ``base`` (defaults when ``None``) with ``overrides`` applied.

    ``None`` values in ``overrides`` are ignored, so CLI options left unset keep the defaults.

    Raises:
        ConfigError: On an unknown field or a value out of range.
    """
    values = (TranslatorConfig() if base is None else base).model_dump()
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return TranslatorConfig.model_validate(values)
    except ValidationError as e:
        raise ConfigError(f"invalid translator setting: {e}") from e


def read_training_pairs(pairs_path: str | Path) -> list[WordPair]:
    """Tagged training pairs of a pair file: normalised, deduplicated, copies dropped.

    A pair whose target merely copies the source (an untranslated Latin word) teaches nothing
    and is left out.

    Raises:
        FileNotFoundError: If the file does not exist.
        FormatError: On a malformed line (see :func:`~xlnel.dictionary.pairs.load_pairs`).
        ValueError: If the file holds no usable pair.
    """
    path = Path(pairs_path)
    if path.is_dir():
        raise IsADirectoryError(f"pair file {path} is a folder; give the word-pair file")
    if not path.is_file():
        raise FileNotFoundError(f"pair file not found: {path}")
    seen: set[tuple[str, str, str]] = set()
    pairs: list[WordPair] = []
    for pair in load_pairs(path):
        source, target = normalize_name(pair.source), " ".join(pair.target.split())
        key = (source, target, pair.kind)
        if target.lower() == source or key in seen:
            continue
        seen.add(key)
        pairs.append(WordPair(*key))
    if not pairs:
        raise ValueError(f"{path}: no usable pair (every target copies its source)")
    n_tl = sum(p.kind == "transliteration" for p in pairs)
    logger.info("%s: %d pairs (%d translations, %d transliterations)", path, len(pairs),
                len(pairs) - n_tl, n_tl)
    return pairs


def train_translator_from_pairs(pairs_path: str | Path, out_dir: str | Path,
                                overrides: Mapping[str, Any] | None = None, *,
                                test_fraction: float = 0.05, split_seed: int = 0,
                                progress: bool = False) -> dict[str, Any]:
    """Train a character translator on a pair file, save it and evaluate it on held-out pairs.

    Args:
        pairs_path: ``source<TAB>target[<TAB>kind]`` file (MUSE format works as is).
        out_dir: Folder for the translator; ``train_report.json`` is written into it too.
        overrides: :class:`TranslatorConfig` fields to change (``epochs``, ``max_train_seconds``,
            ``target_lang``...); ``None`` values are ignored.
        test_fraction: Share of source words held out for evaluation, in ``[0, 1)``; 0 skips it.
        split_seed: Seed of the held-out split.
        progress: Show tqdm bars.

    Returns:
        The report: data counts, config, training history, held-out ``exact@1``, ``exact@5``
        and ``cer`` (overall and by kind) and wall times.

    Raises:
        FileNotFoundError: If the pair file does not exist.
        ConfigError: On an invalid translator setting.
        OutputError: When ``out_dir`` cannot take a translator (see
            :func:`check_translator_output`; checked before training).
        ValueError: On an empty pair file, ``test_fraction`` outside ``[0, 1)`` or one that
            holds out every source word.
    """
    config = translator_config(overrides)
    out = check_translator_output(out_dir, [pairs_path])
    pairs = read_training_pairs(pairs_path)
    train, test = split_pairs(pairs, test_fraction, split_seed)
    if not train:
        raise ValueError(f"{pairs_path}: test_fraction {test_fraction} holds out every one of "
                         f"the {len({p.source for p in pairs})} source words, leaving nothing "
                         "to train on; lower it (0 holds out none)")
    started = time.monotonic()
    translator = train_translator(train, config, progress)
    train_seconds = time.monotonic() - started
    translator.save(out)
    started = time.monotonic()
    held_out = evaluate_translator(translator, test) if test else None
    report = {
        "xlnel_version": __version__, "pairs": str(pairs_path), "model_dir": str(out),
        "config": config.model_dump(),
        "data": {"pairs": len(pairs), "train_pairs": len(train), "test_pairs": len(test),
                 "transliteration_pairs": sum(p.kind == "transliteration" for p in pairs),
                 "split": {"by": "source word", "test_fraction": test_fraction,
                           "seed": split_seed}},
        "epochs_run": len(translator.history), "history": translator.history,
        "held_out": held_out, "train_seconds": round(train_seconds, 1),
        "eval_seconds": round(time.monotonic() - started, 1),
    }
    write_json(out / TRAIN_REPORT_FILE, report)
    logger.info("translator saved to %s; held out: %s", out, held_out)
    return report


def check_translator_output(out_dir: str | Path, inputs: Sequence[str | Path]) -> Path:
    """Check a translator folder before training; return it (absolute).

    Refused: an existing file; the working folder or one holding it; a folder that is, holds
    or lies inside an input; a folder holding other files than a translator's and its
    training report (saving replaces the whole folder).

    Raises:
        OutputError: Naming the folder and why.
    """
    target = check_replaced_folder(out_dir, inputs, None, "a translator", "translator", "")
    own = {CONFIG_FILE, VOCAB_FILE, WEIGHTS_FILE, TRAIN_REPORT_FILE}
    others = sorted(set(os.listdir(target)) - own) if target.is_dir() else []
    if others:
        raise OutputError(f"--out {out_dir} is a folder holding other files than a saved "
                          f"translator ({', '.join(others[:5])}), which saving would replace: "
                          "choose a new or empty folder")
    check_writable(target, folder=True)
    return target


def check_dictionary_output(out_path: str | Path, inputs: Sequence[str | Path],
                            force: bool = False) -> Path:
    """Check where ``xlnel dictionary build`` writes, before any work; return the TSV path.

    Refused: an output that is an input (a knowledge-base file) or lies inside an input
    folder (the translator); a folder where the TSV goes; without ``force``, an existing file
    that is not a dictionary TSV (its first line is not the dictionary header), which would
    be lost. An earlier dictionary is replaced.

    Raises:
        OutputError: Naming the output and why.
    """
    path = dictionary_path(target_path(out_path))
    check_disjoint(path, inputs, out_is_folder=False)
    check_writable(path)
    if path.is_file() and not force:
        first = next((line for _, line in iter_lines(path)), "")
        if tuple(first.split("\t")[:3]) != HEADER:
            raise OutputError(f"--out {out_path}: {path} exists and is not a dictionary TSV "
                              f"(its first line is {first[:80]!r}, not "
                              f"'name<TAB>concept_id<TAB>source'); choose another path, or "
                              "pass --force to replace it")
    return path


def dictionary_path(out: str | Path) -> Path:
    """Where a dictionary goes: ``out`` if it ends in ``.tsv``, else ``out/dictionary.tsv``."""
    out = Path(out)
    return out if out.suffix.lower() == ".tsv" else out / DICTIONARY_FILE


def _build_and_save(concepts: Sequence[Concept], translator: CharTranslator, lang: str,
                    out_path: Path, n_best: int, max_names_per_concept: int | None,
                    progress: bool) -> dict[str, Any]:
    started = time.monotonic()
    dictionary = build_dictionary(concepts, translator, lang, n_best, max_names_per_concept,
                                  progress)
    dictionary.save(out_path)
    return {"out": str(out_path), "lang": lang, "concepts": len(concepts),
            "english_names": sum(len(c.names) for c in concepts),
            "entries": len(dictionary), "distinct_names": len(dictionary.names),
            "concepts_covered": len(dictionary.concept_ids()), "n_best": n_best,
            "max_names_per_concept": max_names_per_concept,
            "seconds": round(time.monotonic() - started, 1)}


def build_dictionary_from_kb(kb_specs: Sequence[str], translator_dir: str | Path, lang: str,
                             out_path: str | Path, n_best: int = 3,
                             max_names_per_concept: int | None = 5, limit: int | None = None,
                             progress: bool = False, force: bool = False) -> dict[str, Any]:
    """Translate the names of knowledge bases with a saved translator into a dictionary TSV.

    Args:
        kb_specs: Knowledge-base specs (see :func:`load_concepts`).
        translator_dir: Folder written by ``CharTranslator.save``.
        lang: Language of the dictionary; must be the translator's target language.
        out_path: TSV file, or a folder to write ``dictionary.tsv`` into (written atomically).
        n_best: Renderings kept per English name.
        max_names_per_concept: Most translated names per concept; ``None`` for no limit.
        limit: Most concepts taken from each knowledge base; ``None`` for all.
        progress: Show tqdm bars.
        force: Replace an existing file at the output path that is not a dictionary.

    Returns:
        Report: knowledge bases, concept, name and entry counts, output path and wall time.

    Raises:
        ArtifactError: If ``translator_dir`` does not hold a saved translator.
        ConfigError: If the translator translates into another language than ``lang``.
        FileNotFoundError: When a knowledge-base file does not exist.
        OutputError: When the output would replace an input or another file (see
            :func:`check_dictionary_output`; checked before any work).
    """
    inputs = [Path(translator_dir), *(f for spec in kb_specs for f in kb_files(spec))]
    check_dictionary_output(out_path, inputs, force)
    concepts, sources = load_concepts(kb_specs, limit)
    translator = CharTranslator.load(translator_dir)
    report = _build_and_save(concepts, translator, lang, dictionary_path(out_path), n_best,
                             max_names_per_concept, progress)
    return {"kb": sources, "translator": str(translator_dir), **report}
