"""xlnel: cross-lingual biomedical named-entity linking.

``import xlnel`` stays light: the pipeline and its dependencies are imported by :func:`load`.

Example:
    >>> import xlnel
    >>> nlp = xlnel.load("default")  # doctest: +SKIP
    >>> [link.concept_id for link in nlp.link("She had seizures.")]  # doctest: +SKIP
    ['HP:0001250']
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xlnel.runtime import Pipeline

from xlnel.threads import set_threads, thread_limit
from xlnel.version import __version__

__all__ = ["__version__", "load", "set_threads", "thread_limit"]


def load(name_or_dir: str | PathLike[str],
         overrides: Mapping[str, Any] | None = None) -> Pipeline:
    """Load a trained pipeline by name or folder.

    Args:
        name_or_dir: ``"default"`` (English text to HPO concepts, trained into the cache
            under ``XLNEL_CACHE`` on first use, in seconds) or a folder written by
            ``xlnel train``.
        overrides: Dotted config keys changed for this load, as ``xlnel link --set`` takes
            them (``{"candidates.workers": 4}``); see :meth:`xlnel.pipeline.Pipeline.load`.

    Returns:
        The pipeline; call :meth:`~xlnel.pipeline.Pipeline.link` on a text or a list of texts.

    Raises:
        ArtifactError: If the folder is not a pipeline folder.
        ConfigError: If an override cannot apply to a trained pipeline.
    """
    from xlnel.defaults import DEFAULT_PIPELINES, default_pipeline_dir
    from xlnel.runtime import Pipeline

    name = str(name_or_dir)
    folder = default_pipeline_dir() if name in DEFAULT_PIPELINES else Path(name_or_dir)
    return Pipeline.load(folder, overrides)
