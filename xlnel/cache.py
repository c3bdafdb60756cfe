"""The one root directory under which xlnel keeps its caches (built models, indexes)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "XLNEL_CACHE"
"""Environment variable naming the cache root; unset or empty means ``~/.cache/xlnel``."""


def cache_dir() -> Path:
    """Return the root of xlnel's cache.

    The root is taken from the ``XLNEL_CACHE`` environment variable when it is set and not
    empty, else ``~/.cache/xlnel``. It is read on every call, so tests can point it elsewhere
    with ``monkeypatch.setenv``. The directory is not created here; writers create what they
    need below it.

    Returns:
        The absolute cache root, with ``~`` expanded.
    """
    value = os.environ.get(CACHE_ENV, "").strip()
    root = Path(value) if value else Path("~") / ".cache" / "xlnel"
    return root.expanduser().absolute()
