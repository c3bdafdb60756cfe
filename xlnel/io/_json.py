"""JSON decoding for the corpus readers, stricter than :mod:`json`: an object that gives a key
twice is refused (:mod:`json` would keep the last value and silently drop the others, a second
``entities``), and so are ``NaN``, ``Infinity`` and numbers too large for a float, which
:mod:`json` reads but other JSON tools refuse; and the search for lone surrogates, which JSON
escapes can hold but no UTF-8 file can."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["DuplicateKeyError", "NotJsonError", "lone_surrogate", "strict_decoder"]


class NotJsonError(ValueError):
    """Text that :mod:`json` would decode but that is not JSON, or not faithfully."""


class DuplicateKeyError(NotJsonError):
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


def _refuse_constant(name: str) -> Any:
    raise NotJsonError(f"{name} is not JSON (JSON has no NaN or infinity; numbers such as a "
                       "score must be finite)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJsonError(f"the number {text} is too large for a float (numbers such as a "
                           "score must be finite)")
    return value


def strict_decoder() -> json.JSONDecoder:
    """A decoder that raises :class:`DuplicateKeyError` for an object giving a key twice, and
    :class:`NotJsonError` for ``NaN``, ``Infinity`` and ``-Infinity`` (which :mod:`json` reads
    though they are not JSON) and for a number too large for a float (``1e999``)."""
    return json.JSONDecoder(object_pairs_hook=_object, parse_constant=_refuse_constant,
                            parse_float=_finite_float)


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
