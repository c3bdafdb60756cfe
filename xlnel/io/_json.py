"""JSON decoding for the corpus readers: an object that gives a key twice is refused, where
:mod:`json` would keep the last value and silently drop the others (a second ``entities``); and
the search for lone surrogates, which JSON escapes can hold but no UTF-8 file can."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["DuplicateKeyError", "lone_surrogate", "strict_decoder"]


class DuplicateKeyError(ValueError):
    """A JSON object gives ``key`` more than once."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is given twice in one object (JSON would keep only "
                         "the last value)")
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


def strict_decoder() -> json.JSONDecoder:
    """A decoder that raises :class:`DuplicateKeyError` for an object giving a key twice."""
    return json.JSONDecoder(object_pairs_hook=_object)


def lone_surrogate(value: Any, where: str) -> str | None:
    """Where a string in ``value`` (a JSON value, searched through lists and objects) holds a
    lone surrogate, which no UTF-8 file or answer can encode; ``None`` when none does.

    Args:
        value: The value.
        where: What ``value`` is, to start the answer with (``"text of document 'a'"``).

    Returns:
        ``"WHERE holds the lone surrogate '\\ud800' at character N"``, or ``None``.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (f"{where} holds the lone surrogate {value[exc.start]!r} at character "
                    f"{exc.start}")
        return None
    parts: list[tuple[Any, str]] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            parts += [(key, f"a key of {where}"), (item, f"{where} [{key!r}]")]
    elif isinstance(value, list | tuple):
        parts = [(item, f"{where} [{i}]") for i, item in enumerate(value)]
    for part, place in parts:
        found = lone_surrogate(part, place)
        if found is not None:
            return found
    return None
