"""What a training step's cache key is made of: the config parts a step depends on and the
content of the files they name (:func:`~xlnel.training.recipe.step_keys` hashes them)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from xlnel.artifacts import PIPELINE_FORMAT
from xlnel.config import PipelineConfig
from xlnel.io.kb import kb_files
from xlnel.version import __version__

__all__ = ["config_parts", "content_hash", "file_fingerprint", "folder_fingerprint",
           "local_inputs"]

_DIGESTS: dict[tuple[str, int, int, int], str] = {}
"""Content hashes of the files already read in this process, by resolved path, inode, size
and modification time."""


def _file_digest(path: Path) -> str:
    """The blake2b hash of a file's bytes, read once per process while the file is unchanged."""
    st = path.stat()
    memo = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
    if memo not in _DIGESTS:
        digest = hashlib.blake2b(digest_size=20)
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
        _DIGESTS[memo] = digest.hexdigest()
    return _DIGESTS[memo]


def file_fingerprint(path: str | None) -> dict[str, Any] | None:
    """Size and content hash of an input file or folder (``None`` if there is none; the path
    of a missing one).

    The content rather than the modification time, so that the same data written again (a
    fresh checkout, a corpus copied anew) keeps its stage-cache keys; a folder (BRAT) hashes
    the relative path and content hash of every file under it.
    """
    if path is None:
        return None
    p = Path(path)
    if not p.exists():
        return {"path": str(p)}
    if not p.is_dir():
        return {"size": p.stat().st_size, "blake2b": _file_digest(p)}
    files = sorted(f for f in p.rglob("*") if f.is_file())
    digest = hashlib.blake2b(digest_size=20)
    for f in files:
        digest.update(f"{f.relative_to(p).as_posix()}\0{_file_digest(f)}\n".encode())
    return {"size": sum(f.stat().st_size for f in files), "blake2b": digest.hexdigest()}


def folder_fingerprint(path: Path) -> dict[str, Any]:
    """A cheap fingerprint of a folder: the relative path, size and modification time of
    every file under it (a model folder may hold gigabytes, too many to hash each time)."""
    digest = hashlib.blake2b(digest_size=20)
    files = sorted(f for f in path.rglob("*") if f.is_file())
    for f in files:
        st = f.stat()
        digest.update(f"{f.relative_to(path).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n"
                      .encode())
    return {"files": len(files), "stat": digest.hexdigest()}


def local_inputs(section: dict[str, Any], where: str) -> dict[str, Any]:
    """Fingerprints of the local files and folders a config section's string values name,
    by dotted key (``candidates.stopwords``, ``ner.pretrained``, ``filter.options.encoder``).

    A value counts when it names an existing path; other strings (hub ids, registered names,
    choices) are left to the section's own values. A file is fingerprinted by content
    (:func:`file_fingerprint`), a folder by :func:`folder_fingerprint`.
    """
    out: dict[str, Any] = {}
    for key, value in section.items():
        dotted = f"{where}.{key}"
        if isinstance(value, dict):
            out.update(local_inputs(value, dotted))
        elif isinstance(value, str) and value.strip() not in ("", ".", ".."):
            p = Path(value)
            if p.is_file():
                out[dotted] = file_fingerprint(value)
            elif p.is_dir():
                out[dotted] = folder_fingerprint(p)
    return out


def _with_inputs(part: dict[str, Any], section: dict[str, Any], where: str) -> dict[str, Any]:
    """``part`` with the fingerprints of the local inputs ``section`` names (under ``files``);
    a section naming none keeps its key."""
    found = local_inputs(section, where)
    return {**part, "files": found} if found else part


def _kb_fingerprints(spec: str) -> list[dict[str, Any] | None]:
    """Fingerprints of the files a KB spec reads (``[None]`` for the bundled HPO)."""
    return [file_fingerprint(str(path)) for path in kb_files(spec)] or [None]


def config_parts(config: PipelineConfig) -> dict[str, Any]:
    """The parts of a config that steps name in :attr:`~xlnel.training.recipe.Step.config`, as
    JSON values.

    ``data`` and ``kb`` include the size and content hash of the files they name (``data``
    leaves out ``extra_train`` when it names none and ``subset_seed`` when it draws nothing);
    ``dft`` drops the seed when no split or fold depends on it (R 1, or R 0 without
    cross-fitting) and ``crossfit`` when it is off (so configs without it keep their keys);
    ``candidates`` drops ``compound_words`` when it is off, for the same reason;
    ``filter`` leaves out the threshold (a fixed one is applied to the finished pipeline, see
    :mod:`xlnel.training.recipe`) and ``select_by`` when it is ``spans``; with ``linker`` it
    holds the ``linker`` section, whose decisions then pick the threshold; ``windows`` holds
    ``linker.window_chars`` and ``linker.window_overlap``, which cut long documents. ``ner``,
    ``candidates`` and ``filter`` also hold, under ``files``, a fingerprint of each local file
    or folder they name (:func:`local_inputs`: a stop-word list, a tagger's pipeline, an
    encoder folder), so that changing its content recomputes what depends on it.
    """
    c = config.model_dump(mode="json")
    dft = dict(c["dft"])
    if config.dft.R == 1.0 or (config.dft.R == 0.0 and not config.dft.crossfit):
        dft["seed"] = 0
    if not config.dft.crossfit:
        del dft["crossfit"]
    data = dict(c["data"])
    if not config.data.extra_train:  # configs without extra documents keep their keys
        del data["extra_train"]
    if config.data.subset_seed is None or config.data.max_documents is None:
        del data["subset_seed"]  # configs without a drawn subset keep theirs too
    candidates = dict(c["candidates"])
    if not config.candidates.compound_words:  # nor do configs counting every word part
        del candidates["compound_words"]
    return {
        "lang": c["lang"],
        "data": {"lang": c["lang"], "data": data,
                 "files": [file_fingerprint(config.data.train),
                           file_fingerprint(config.data.test),
                           *map(file_fingerprint, config.data.extra_train)]},
        "kb": {"dictionary": c["dictionary"],
               "files": [f for s in config.dictionary.kb for f in _kb_fingerprints(s)]
               + [file_fingerprint(p) for p in config.dictionary.extra]},
        "dft": dft,
        "ner": _with_inputs(c["ner"], c["ner"], "ner"),
        "candidates": _with_inputs(candidates, c["candidates"], "candidates"),
        "filter": _with_inputs(_filter_part(c), c["filter"], "filter"),
        "windows": {k: c["linker"][k] for k in ("window_chars", "window_overlap")},
    }


def _filter_part(c: dict[str, Any]) -> dict[str, Any]:
    """The ``filter`` part of :func:`config_parts` from the config's JSON dump ``c``."""
    part = {k: v for k, v in c["filter"].items() if k not in ("threshold", "select_by")}
    if c["filter"]["select_by"] != "spans":  # configs picking it on spans keep their keys
        part["select_by"] = c["filter"]["select_by"]
        part["linker"] = c["linker"]
    return part


def content_hash(*parts: Any) -> str:
    """A short hash of JSON values, the xlnel version and the pipeline format."""
    # The pipeline format too: a stage written in another layout is not reused.
    text = json.dumps([__version__, PIPELINE_FORMAT, *parts], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
