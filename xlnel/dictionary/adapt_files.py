"""The files ``xlnel adapt`` writes, and the staging folder they are written in.

An adapt run writes several files that belong together (the dictionary, the linking
dictionary, the stop words, the pipeline config naming them, the report). They are written into
a staging folder beside the output folder and moved into place only when all of them are
complete (:func:`staged_output`), so an interrupted run leaves the output folder as it was.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from xlnel.io._atomic import (
    atomic_write,
    check_writable,
    create_temp_dir,
    remove_stale_files,
    sigterm_as_interrupt,
)

logger = logging.getLogger(__name__)

__all__ = ["ZERO_SHOT_THRESHOLD", "staged_output", "write_json", "write_pipeline_config",
           "write_stopwords"]

#: Cosine a candidate of that pipeline needs: 1.0, an exact match of the normalised span and a
#: name (with no annotated documents there is nothing to choose a threshold on; a looser match
#: of a generated name is mostly an everyday word). ``benchmarks/zero_annotation.py`` compares
#: it with thresholds chosen on annotated posts.
ZERO_SHOT_THRESHOLD = 1.0


def write_json(path: str | Path, payload: Mapping[str, Any]) -> None:
    """Write a JSON report atomically (UTF-8, indented, non-ASCII kept)."""
    with atomic_write(path) as f:
        json.dump(payload, f, ensure_ascii=False, indent=2)
        f.write("\n")


def write_stopwords(path: Path, words: Sequence[str], lang: str, pairs: str | Path) -> None:
    """Write a stop-word file (one word a line, ``#`` comments) atomically."""
    with atomic_write(path) as f:
        f.write(f"# {lang} stop words: renderings of English stop words in {pairs} "
                "(xlnel.dictionary.stopwords); use with candidates.stopwords\n")
        f.writelines(f"{word}\n" for word in words)


def write_pipeline_config(path: Path, lang: str, dictionary: Path, stopwords: Path,
                          named: Path | None = None) -> None:
    """Write a pipeline config that links ``lang`` text with a built dictionary, no annotations.

    Its only names are the dictionary's (which holds the KB's English names too, source ``kb``,
    unless they were left out); spans starting or ending with a word of ``stopwords`` are not
    candidates; the filter keeps a candidate whose cosine reaches
    :data:`ZERO_SHOT_THRESHOLD` (``xlnel.similarity.v1``, nothing learned). Paths are written
    absolute, so the config works from any directory (and not after the files move). Written
    atomically.

    Args:
        path: The file to write.
        lang: Language of the texts.
        dictionary: The dictionary the pipeline links with.
        stopwords: Its stop-word file.
        named: The path the config is used from, named in its comment (``path`` when
            ``None``; the final path when ``path`` is in a staging folder).
    """
    body = {"lang": lang,
            "dictionary": {"kb": [], "extra": [str(dictionary.resolve())]},
            "dft": {"R": 0.0},
            "candidates": {"stopwords": str(stopwords.resolve())},
            "filter": {"name": "xlnel.similarity.v1", "threshold": ZERO_SHOT_THRESHOLD},
            "linker": {"propagate": False}}
    shown = (path if named is None else named).resolve()
    with atomic_write(path) as f:
        f.write(f"# Links {lang} text with the dictionary `xlnel adapt` built, before any "
                "annotation:\n#   xlnel train " + str(shown) + " --out PIPELINE\n"
                "#   xlnel link PIPELINE DOCS.jsonl --out LINKED.jsonl\n"
                "# With annotated documents (data.train), include configs/pipelines/gbdt.yaml "
                "and put this file's\n# dictionary and candidates sections over it instead.\n")
        f.write(yaml.safe_dump(body, allow_unicode=True, sort_keys=False))


def _staging_pattern(out: Path) -> re.Pattern[str]:
    # the names create_temp_dir gives, and the old folders a swap leaves
    return re.compile(re.escape(f".{out.name}.") + r"(?:[a-z0-9_]{8}|old-\d+)")


@contextlib.contextmanager
def staged_output(out: Path, names: Sequence[str]) -> Iterator[Path]:
    """A staging folder whose files ``names`` replace those of ``out`` when the block succeeds.

    The staging folder lies beside ``out`` (``.OUT.xxxxxxxx``). On success, a missing ``out``,
    or one holding nothing but ``names``, is replaced by the staging folder in one rename;
    otherwise (``out`` also holds other files, which are kept, or is the working folder or
    holds it) each name is moved in on its own, the last one of ``names`` last (give the file
    that marks a finished run last), and a name of an earlier run that this one did not write
    is removed, since the new files no longer describe it. On an exception (SIGTERM included)
    the staging folder is removed and ``out`` is left as it was. Staging folders that a
    killed run left are removed first.

    Args:
        out: The output folder (absolute, checked by the caller).
        names: The files and folders the command writes into ``out``.

    Yields:
        The staging folder (created, empty).
    """
    check_writable(out, folder=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_files(out.parent, _staging_pattern(out))
    with sigterm_as_interrupt():
        stage = create_temp_dir(out)
        try:
            yield stage
            _install(stage, out, names)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    logger.debug("wrote %s", out)


def _install(stage: Path, out: Path, names: Sequence[str]) -> None:
    """Move the staged files into ``out`` (see :func:`staged_output`)."""
    if not out.exists():
        os.rename(stage, out)
        return
    cwd = Path.cwd().resolve()
    holds_cwd = cwd == out.resolve() or out.resolve() in cwd.parents
    # only an earlier run's files: swap the folders (never the working folder: the process
    # would be left in a deleted one; nor a link, whose target folder would keep the old files)
    if set(os.listdir(out)) <= set(names) and not holds_cwd and not out.is_symlink():
        old = out.with_name(f".{out.name}.old-{time.time_ns()}")
        os.rename(out, old)
        os.rename(stage, out)
        shutil.rmtree(old, ignore_errors=True)
        return
    for name in names:
        staged, target = stage / name, out / name
        if staged.exists() and target.is_dir() and not target.is_symlink():
            os.rename(target, stage / f".old-{name}")  # removed with the staging folder
        if staged.exists():
            os.replace(staged, target)
        elif target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
            logger.info("removed %s, left by an earlier run", target)
        elif target.exists() or target.is_symlink():
            target.unlink()
            logger.info("removed %s, left by an earlier run", target)
    shutil.rmtree(stage, ignore_errors=True)
