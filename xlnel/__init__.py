"""xlnel: cross-lingual biomedical named-entity linking."""

from __future__ import annotations

__version__ = "0.1.0"

from xlnel.threads import set_threads, thread_limit  # noqa: E402

__all__ = ["__version__", "set_threads", "thread_limit"]
