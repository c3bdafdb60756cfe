"""Encoders known to xlnel by name, built locally into the cache on first use.

Configs refer to a transformer either by a registered name (``"multilingual-e5-small"``), by a
Hugging Face hub id or by a local folder. :func:`resolve_model` turns a registered name into the
folder it builds under ``cache_dir()/models/<name>`` and leaves anything else to transformers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import xlnel.models.e5 as e5
from xlnel.cache import cache_dir
from xlnel.errors import ConfigError

logger = logging.getLogger(__name__)

ModelBuilder = Callable[[Path, bool], Path]
"""Writes a model folder: called as ``builder(out_dir, force)``, returns the folder.

A builder returns at once when ``out_dir`` already holds a finished build and ``force`` is
False, and writes atomically, so a folder that exists is complete.
"""


class ModelRegistry:
    """Named model builders and the cache folders they build into."""

    def __init__(self) -> None:
        self._builders: dict[str, ModelBuilder] = {}

    def register(self, name: str, builder: ModelBuilder, overwrite: bool = False) -> None:
        """Register ``builder`` under ``name``.

        Args:
            name: The name configs use; also the cache folder's name.
            builder: Called as ``builder(out_dir, force)``; returns the built folder.
            overwrite: Replace an existing registration instead of failing.

        Raises:
            ConfigError: The name is empty, contains a path separator, or is taken.
        """
        if not name or name.strip() != name or any(sep in name for sep in ("/", "\\")):
            raise ConfigError(
                f"model name {name!r} is not allowed: it must be non-empty, without surrounding "
                "spaces or '/' and '\\' (it names a cache folder)"
            )
        if name in self._builders and not overwrite:
            raise ConfigError(f"model name {name!r} is already registered; pass overwrite=True")
        self._builders[name] = builder

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        return sorted(self._builders)

    def folder(self, name: str) -> Path:
        """Return where the registered model ``name`` is (or will be) built."""
        return cache_dir() / "models" / name

    def build(self, name: str, force: bool = False) -> Path:
        """Build the registered model ``name`` into the cache, if needed or forced.

        Raises:
            ConfigError: ``name`` is not registered.
        """
        if name not in self._builders:
            raise ConfigError(
                f"no registered model named {name!r}; registered: {', '.join(self.names())}"
            )
        folder = self.folder(name)
        if not force and folder.exists():
            # The builder still runs: it checks the folder is a finished build.
            return self._builders[name](folder, False)
        logger.info("Building registered model %r into %s (first use or forced)", name, folder)
        started = time.perf_counter()
        folder = self._builders[name](folder, force)
        logger.debug("Built %r in %.1f s", name, time.perf_counter() - started)
        return folder

    def resolve(self, name_or_path: str) -> str:
        """Return a local folder for a registered name; anything else unchanged.

        A registered name wins over a folder of the same name in the working directory.
        """
        if name_or_path not in self._builders:
            return name_or_path
        return str(self.build(name_or_path))


def _default_registry() -> ModelRegistry:
    registry = ModelRegistry()
    registry.register(
        e5.MODEL_NAME, lambda out_dir, force: e5.build_multilingual_e5_small(out_dir, force)
    )
    return registry


_REGISTRY = _default_registry()


def register_model(name: str, builder: ModelBuilder, overwrite: bool = False) -> None:
    """Register a model builder under ``name`` in xlnel's registry.

    Args:
        name: The name configs use; also the folder name under ``cache_dir()/models``.
        builder: Called as ``builder(out_dir, force)``; returns the built folder.
        overwrite: Replace an existing registration instead of failing.

    Raises:
        ConfigError: The name is not allowed or already registered.
    """
    _REGISTRY.register(name, builder, overwrite=overwrite)


def registered_models() -> list[str]:
    """Return the names of the registered models, sorted."""
    return _REGISTRY.names()


def build_model(name: str, force: bool = False) -> Path:
    """Build a registered model into ``cache_dir()/models/<name>`` (``xlnel models build``).

    Args:
        name: A registered name, e.g. ``"multilingual-e5-small"``.
        force: Rebuild even if the folder exists.

    Returns:
        The folder.

    Raises:
        ConfigError: ``name`` is not registered.
    """
    return _REGISTRY.build(name, force=force)


def resolve_model(name_or_path: str) -> str:
    """Turn a model reference from a config into something ``from_pretrained`` accepts.

    Args:
        name_or_path: A registered name, a Hugging Face hub id or a local folder.

    Returns:
        For a registered name, its folder under ``cache_dir()/models``, built on first use;
        anything else is returned unchanged for transformers to handle.
    """
    return _REGISTRY.resolve(name_or_path)
