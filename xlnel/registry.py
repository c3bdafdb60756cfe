"""A registry of swappable stage implementations under versioned names (``xlnel.gbdt.v1``)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Generic, TypeVar

from xlnel.errors import ConfigError

T = TypeVar("T", bound=type)


class Registry(Generic[T]):
    """Classes by ``registered_name``; the built-in ones register when their modules import.

    Args:
        kind: What is registered, for error messages ("candidate generator").
        builtin_modules: Modules imported on the first lookup so their classes register.
    """

    def __init__(self, kind: str, builtin_modules: Sequence[str]) -> None:
        self.kind = kind
        self._modules = tuple(builtin_modules)
        self._classes: dict[str, T] = {}
        self._loaded = False

    def register(self, cls: T) -> T:
        """Class decorator: register ``cls`` under its ``registered_name``."""
        name = getattr(cls, "registered_name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{cls.__name__} needs a class attribute registered_name to register")
        self._classes[name] = cls
        return cls

    def get(self, name: str) -> T:
        """The class registered as ``name``.

        Raises:
            ConfigError: If nothing is registered under that name.
        """
        if not self._loaded:
            for module in self._modules:
                importlib.import_module(module)
            self._loaded = True
        try:
            return self._classes[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r}; registered: "
                              f"{', '.join(sorted(self._classes))}") from None
