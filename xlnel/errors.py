"""Exceptions raised by xlnel for bad input, so callers can catch them specifically."""

from __future__ import annotations

from pathlib import Path


class XlnelError(Exception):
    """Base class of all xlnel errors."""


class FormatError(XlnelError, ValueError):
    """A file does not follow its format; the message names the file, line and bad value."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = None if path is None else str(path)
        self.line = line


class LimitError(FormatError):
    """Input within its format but over a size limit the caller set (a service's request
    limits); the message names the limit."""


class ConfigError(XlnelError, ValueError):
    """A configuration value is missing, of the wrong type or out of range."""


class ArtifactError(XlnelError, FileNotFoundError):
    """A saved pipeline or model folder is missing a file or was written by another version."""


class OutputError(XlnelError, ValueError):
    """An output path would destroy an input or unrelated data, or names no known format."""
