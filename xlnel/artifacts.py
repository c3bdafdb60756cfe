"""What a pipeline folder is: its format version, checked on load, and its identity.

``xlnel.json`` in a pipeline folder records the xlnel version and :data:`PIPELINE_FORMAT` that
wrote it, and a random id drawn at training time, so that outputs can name the exact trained
pipeline that wrote them (a folder trained again gets a new id).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xlnel.errors import ArtifactError
from xlnel.version import __version__

__all__ = ["PIPELINE_FORMAT", "check_pipeline_format", "pipeline_identity"]

#: Layout of a pipeline folder, written into its ``xlnel.json``. A folder of another format is
#: refused with a message to retrain. Format 2: the GBDT filter is saved as plain arrays
#: (``trees.npz``), never pickled.
PIPELINE_FORMAT = 2


def _read_info(folder: Path) -> dict[str, Any]:
    """The folder's ``xlnel.json``; empty when missing or unreadable."""
    try:
        info = json.loads((folder / "xlnel.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def pipeline_identity(folder: str | Path, overrides: Mapping[str, Any] | None = None
                      ) -> dict[str, Any]:
    """What identifies the output of a saved pipeline: its folder, the id written when it was
    trained (a retrained folder gets a new one) and the load overrides."""
    d = Path(folder)
    return {"pipeline": str(d.resolve()), "pipeline_id": _read_info(d).get("pipeline_id"),
            "overrides": {k: (overrides or {})[k] for k in sorted(overrides or {})}}


def check_pipeline_format(folder: Path) -> None:
    """Refuse a pipeline folder written in another format than :data:`PIPELINE_FORMAT`.

    Raises:
        ArtifactError: Naming the folder, the xlnel version and format that wrote it, and the
            format this version reads.
    """
    info = _read_info(folder)
    found = info.get("format", 1)
    if found != PIPELINE_FORMAT:
        raise ArtifactError(
            f"the pipeline in {folder} was written by xlnel {info.get('xlnel_version', '?')} "
            f"in pipeline format {found}; xlnel {__version__} reads format {PIPELINE_FORMAT}: "
            f"retrain it with `xlnel train CONFIG --out {folder}`")
