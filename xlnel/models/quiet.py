"""Loading and saving transformers models without transformers' own progress bars.

transformers 5 draws a bar each time weights are loaded or written ("Loading weights",
"Writing model shards"): once per model per process, so ``xlnel link --workers 8`` or a
service with several workers would print a stack of them for a step of well under a second.
xlnel shows its own progress where a step takes long (training, linking); these are turned off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_progress_bars"]


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """Within the block, transformers draws no progress bars; the setting is restored after."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()
