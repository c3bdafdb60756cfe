"""JSON decoding for the corpus readers: an object that gives a key twice is refused, where
:mod:`json` would keep the last value and silently drop the others (a second ``entities``)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DuplicateKeyError", "strict_decoder"]


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
