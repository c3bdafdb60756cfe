"""Transformer encoders: a registry of named models built locally, and their converters.

``xlnel.models.testing`` (tiny random models for tests) needs torch and is not imported here.
"""

from __future__ import annotations

from xlnel.models.e5 import build_multilingual_e5_small
from xlnel.models.registry import (
    ModelBuilder,
    ModelRegistry,
    build_model,
    register_model,
    registered_models,
    resolve_model,
)

__all__ = [
    "ModelBuilder",
    "ModelRegistry",
    "build_model",
    "build_multilingual_e5_small",
    "register_model",
    "registered_models",
    "resolve_model",
]
