"""Numeric types of config fields that refuse booleans.

pydantic's lax mode reads ``true`` as 1 and ``yes`` (YAML 1.1) as 1.0, so a mistyped
``--set dft.R=yes`` would run with R 1. :data:`Int` takes integers only; :data:`Float` takes
floats, integers (YAML writes ``1`` for 1.0) and numeric strings (YAML 1.1 reads ``2e-1`` as a
string), never booleans, and no infinity or NaN.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

__all__ = ["SEED_LIMIT", "Float", "Int"]

SEED_LIMIT = 2**32
"""Seeds of numpy's and sklearn's random generators lie below this."""


def _not_bool(value: Any) -> Any:
    """``value`` unchanged, unless it is a boolean."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, not the boolean {value!r} (a YAML true/false, "
                         "yes/no or on/off)")
    return value


Int = Annotated[int, Field(strict=True)]
"""An integer (not a boolean, a float or a string)."""

Float = Annotated[float, BeforeValidator(_not_bool), Field(allow_inf_nan=False)]
"""A finite float, an integer or a numeric string, not a boolean (nor YAML's ``.inf`` or
``.nan``, which no setting means)."""
