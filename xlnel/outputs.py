"""Checks that an output never destroys an input or unrelated data, done before any work.

Every command that writes (``train``, ``link``, ``adapt``, ``experiment``, ``encoder align``)
calls these first: an output equal to an input, holding an input, or inside an input folder is
refused; a pipeline or model folder replaces only an empty folder or an earlier one of its kind
(a pipeline unless told to overwrite), never a file; a corpus output needs an extension that
names its format.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from xlnel.errors import OutputError
from xlnel.io.documents import STREAM_FORMATS, WRITABLE_FORMATS, corpus_extension

__all__ = ["CORPUS_EXTENSIONS", "check_disjoint", "check_model_output", "check_output_folder",
           "check_pipeline_output", "check_replaced_folder", "config_inputs",
           "corpus_output_format",
           "is_pipeline_folder", "output_format", "target_path"]

#: Output extensions (before an optional ``.gz``) and the corpus format each writes.
CORPUS_EXTENSIONS = {".jsonl": "jsonl", ".json": "jsonl", ".pubtator": "pubtator",
                     ".txt": "pubtator", ".xml": "bioc", ".bioc": "bioc",
                     ".bioc.json": "biocjson", ".biocjson": "biocjson"}


def target_path(path: str | Path) -> Path:
    """``path`` made absolute with ``..`` and ``.`` removed, symbolic links kept.

    A folder replaced by renaming must be named without ``..`` (``sub/..`` has no usable name),
    and a link named as the output is replaced itself, not what it points to.
    """
    return Path(os.path.normpath(os.path.abspath(path)))


def _real(path: Path) -> Path:
    return path.resolve(strict=False)


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_disjoint(out: str | Path, inputs: Iterable[str | Path], *, out_is_folder: bool,
                   option: str = "--out") -> None:
    """Refuse an output that is an input, holds one (a folder output) or lies inside one.

    Paths are compared after resolving links, so ``./a/../in.jsonl`` and a link to the input
    count as the input.

    Args:
        out: The output file or folder.
        inputs: Files and folders the command reads (missing ones are ignored).
        out_is_folder: ``out`` is a folder that the command fills or replaces, so an input
            inside it would be lost.
        option: The option's name, for the message.

    Raises:
        OutputError: Naming the output and the input.
    """
    real_out = _real(target_path(out))
    for item in inputs:
        real_in = _real(target_path(item))
        if real_out == real_in:
            raise OutputError(f"{option} {out} is the input {item}: writing it would destroy "
                              "the input; choose another output path")
        if out_is_folder and _inside(real_in, real_out):
            raise OutputError(f"{option} {out} holds the input {item}, which writing the "
                              "output would destroy; choose another output folder")
        if real_in.is_dir() and _inside(real_out, real_in):
            raise OutputError(f"{option} {out} lies inside the input folder {item}; write "
                              "outputs outside the folders the command reads")


def is_pipeline_folder(path: str | Path) -> bool:
    """Whether ``path`` is a folder written by ``xlnel train`` (``xlnel.json`` + config)."""
    p = Path(path)
    return (p / "xlnel.json").is_file() and (p / "config.yaml").is_file()


def check_pipeline_output(out: str | Path, inputs: Iterable[str | Path],
                          overwrite: bool = False) -> Path:
    """Check a pipeline folder output before training; return the folder to write.

    Refused: an existing file; the working folder or one holding it; a non-empty folder that
    is not a pipeline folder (unless ``overwrite``); an output equal to, holding or inside an
    input (always, even with ``overwrite``).

    Raises:
        OutputError: Naming the output and why.
    """
    return check_replaced_folder(
        out, inputs, None if overwrite else is_pipeline_folder, "a pipeline", "pipeline",
        "an xlnel pipeline; training would replace all of it. Choose an empty or new folder, "
        "or pass --overwrite to replace it")


def check_model_output(out: str | Path, inputs: Iterable[str | Path], marker: str,
                       what: str) -> Path:
    """Check a model folder that a command replaces whole (``xlnel encoder align``), before
    any work; return the folder to write.

    Refused, as for a pipeline (:func:`check_pipeline_output`): an existing file; the working
    folder or one holding it; an output equal to, holding or inside an input (the model being
    fine-tuned included); a non-empty folder without ``marker``, which an earlier run of the
    command would have left.

    Args:
        out: The output folder.
        inputs: Files and folders the command reads.
        marker: The file every folder the command writes holds.
        what: What the folder is, for the messages ("an encoder").

    Raises:
        OutputError: Naming the output and why.
    """
    def own(path: Path) -> bool:
        return (path / marker).is_file()

    return check_replaced_folder(
        out, inputs, own, what, what.removeprefix("an ").removeprefix("a "),
        f"{what} folder (no {marker}); writing would replace all of it. Choose an empty or "
        "new folder")


def check_replaced_folder(out: str | Path, inputs: Iterable[str | Path],
                           is_own: Callable[[Path], bool] | None, what: str, example: str,
                           not_own: str) -> Path:
    """The checks of a folder output replaced whole; ``is_own`` None allows any folder.

    Refused: an existing file; the working folder or one holding it; an output equal to,
    holding or inside an input; a non-empty folder that ``is_own`` does not accept (the
    message ends with ``not_own``). ``what`` and ``example`` name the folder in messages
    ("an encoder", "encoder").

    Raises:
        OutputError: Naming the output and why.
    """
    target = target_path(out)
    if target.exists() and not target.is_dir():
        raise OutputError(f"--out {out} is a file; {what} is a folder and xlnel does not "
                          "replace a file with a folder: choose a folder name")
    if _inside(_real(Path.cwd()), _real(target)):
        raise OutputError(f"--out {out} is the working folder or holds it; name a new or "
                          f"{example} folder such as runs/NAME")
    check_disjoint(target, inputs, out_is_folder=True)
    if (target.is_dir() and any(target.iterdir()) and is_own is not None
            and not is_own(target)):
        raise OutputError(f"--out {out} is a folder that holds other files and is not "
                          + not_own)
    return target


def check_output_folder(out: str | Path, inputs: Iterable[str | Path], writes: Iterable[str],
                        marker: str | None = None) -> Path:
    """Check a folder that a command writes named files into (``adapt``, ``experiment``).

    Refused: an existing file; an output that is, holds or lies inside an input; a written
    name that is an input; with ``marker``, a folder already holding a written name but not the
    marker (files of something else that would be overwritten).

    Args:
        out: The output folder.
        inputs: Files and folders the command reads.
        writes: Names the command writes inside ``out``.
        marker: A name every earlier run of the command left, proving the folder is its own.

    Raises:
        OutputError: Naming the output and why.
    """
    target = target_path(out)
    if target.exists() and not target.is_dir():
        raise OutputError(f"--out {out} is a file; the command writes a folder: choose a "
                          "folder name")
    inputs = list(inputs)
    check_disjoint(target, inputs, out_is_folder=False)
    names = list(writes)
    for name in names:
        check_disjoint(target / name, inputs, out_is_folder=True)
    if marker is not None and not (target / marker).exists():
        clash = [n for n in names if (target / n).exists()]
        if clash:
            raise OutputError(f"--out {out} already holds {', '.join(clash)}, not written by "
                              "this command (no " + marker + "); choose a new or empty folder")
    return target


def config_inputs(config: Any, config_file: str | Path | None = None) -> list[Path]:
    """Existing files and folders named by the string values of a config (data, knowledge
    bases as ``tsv:PATH``, extra dictionaries, models), and the config file itself."""
    found: list[Path] = [Path(config_file)] if config_file is not None else []
    for value in _strings(config.model_dump(mode="json")):
        for candidate in (value, value.partition(":")[2]):
            if candidate.strip() and Path(candidate).exists():
                found.append(Path(candidate))
    return found


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def corpus_output_format(out: str | Path) -> str:
    """The corpus format an output path asks for: its extension, or BRAT for an existing folder.

    Raises:
        OutputError: When the name has no known extension, listing the allowed ones.
    """
    path = Path(out)
    if path.is_dir():
        return "brat"
    ext = corpus_extension(path)
    if ext not in CORPUS_EXTENSIONS:
        allowed = ", ".join(CORPUS_EXTENSIONS)
        raise OutputError(f"--out {out}: cannot tell the output format from the name; use one "
                          f"of the extensions {allowed} (optionally followed by .gz), or an "
                          "existing folder for BRAT files; or name the format (xlnel's --to)")
    return CORPUS_EXTENSIONS[ext]


def output_format(out: str | Path | IO[str], format: str | None = None) -> str:
    """The corpus format to write to ``out``: ``format`` checked, else the one ``out``'s name
    asks for (see :func:`corpus_output_format`), JSONL for a stream.

    Raises:
        OutputError: When ``format`` is ``None`` and ``out``'s name tells no format.
        ValueError: When ``format`` cannot be written, or not to a stream (BRAT).
    """
    if format is None:
        return corpus_output_format(out) if isinstance(out, str | Path) else "jsonl"
    fmt = format.lower()
    allowed = WRITABLE_FORMATS if isinstance(out, str | Path) else STREAM_FORMATS
    if fmt not in allowed:
        why = (" (BRAT is a folder of files, which the standard output cannot be)"
               if fmt == "brat" else "")
        raise ValueError(f"cannot write the corpus format {format!r}{why}; give one of "
                         f"{', '.join(allowed)}")
    return fmt
