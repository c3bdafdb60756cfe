"""Torch device selection shared by every transformer stage (filter, tagger, encoders)."""

from __future__ import annotations

import torch

from xlnel.errors import ConfigError


def resolve_device(name: str, option: str = "device") -> torch.device:
    """``cpu``, ``cuda`` or ``auto`` (CUDA when available) as a torch device.

    Args:
        name: The configured device.
        option: The config key it came from, for the error message.

    Raises:
        ConfigError: If ``cuda`` is asked for and no CUDA device is available.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"{option}='cuda' but no CUDA device is available; use 'cpu' or "
                          "'auto'")
    return torch.device(name)
