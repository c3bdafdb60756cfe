"""The linking service and its web page (``xlnel serve``; extra ``xlnel[serve]``).

``import xlnel.serve`` stays light; FastAPI and uvicorn are imported when the service starts.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xlnel.serve.app import Limits

logger = logging.getLogger(__name__)

__all__ = ["serve"]


def serve(pipeline: str | Path, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
          limits: Limits | None = None, log_level: str = "info",
          overrides: Mapping[str, Any] | None = None) -> None:
    """Serve a pipeline over HTTP until interrupted; each worker process loads it once.

    Args:
        pipeline: A pipeline folder or ``"default"`` (trained into the cache first, once,
            so the workers do not race to build it).
        host: Interface to listen on; the default answers only this machine.
        port: TCP port.
        workers: Worker processes.
        limits: Request limits (text length, batch size, body size).
        log_level: uvicorn's log level.
        overrides: Config keys changed for the served pipeline, as ``xlnel link --set`` takes
            them (``{"linker.alternatives": 3}``); checked before the workers start.

    Raises:
        ImportError: When FastAPI or uvicorn is missing (``pip install 'xlnel[serve]'``).
        ArtifactError: When the folder is not a pipeline folder.
    """
    try:
        import uvicorn

        from xlnel.serve.app import ENV_LIMITS, ENV_OVERRIDES, ENV_PIPELINE, Limits
    except ImportError as exc:
        raise ImportError(f"{exc.name} is missing: pip install 'xlnel[serve]'") from exc
    from xlnel.defaults import DEFAULT_PIPELINES, default_pipeline_dir
    from xlnel.errors import ArtifactError
    from xlnel.runtime import SavedPipeline

    folder = default_pipeline_dir() if str(pipeline) in DEFAULT_PIPELINES else Path(pipeline)
    if not (folder / "config.yaml").is_file():
        raise ArtifactError(f"{folder} is not a pipeline folder (no config.yaml)")
    checked = SavedPipeline.of(folder, overrides)  # a bad key fails here, not in each worker
    os.environ[ENV_PIPELINE] = str(folder.resolve())
    os.environ[ENV_LIMITS] = (Limits() if limits is None else limits).encode()
    os.environ[ENV_OVERRIDES] = json.dumps(dict(checked.overrides))
    logger.info("serving %s on http://%s:%d with %d workers", folder, host, port, workers)
    uvicorn.run("xlnel.serve.app:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level=log_level)
