"""How a span differs from the name it matched (option ``edits`` of the GBDT filter).

A span that is not exactly a dictionary name is scored by how closely it matches (the TF-IDF
cosine), which says nothing of *how* it differs. A span differing from a known name by an
attached article or preposition (Hebrew הסכרת / סכרת), a plural or case ending (*kidney
stones* / *kidney stone*) or a spelling letter (התכוצויות / התכווצויות) is usually the same
term, while a span of the same cosine that shares a few letters with an unrelated name is not.
The difference itself is learned from the annotations, so no language rule is written down:
:func:`edit_key` reduces a (span, name) pair to the one edit left once their common beginning
and ending are taken away (``start:ה>``: the span has a ה the name lacks at its start), and
:data:`EDIT_FEATURES` give the share of gold spans among the training spans whose best match
differed from its name by the same edit, and how many such spans were seen.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Protocol

import numpy as np

#: The columns, in order.
EDIT_FEATURES = ("edit_prior", "edit_seen")
#: Most characters, on both sides together, that an edit may change to get a key of its own;
#: larger differences share the key :data:`FAR`.
MAX_EDIT_CHARS = 4
#: Key of a span and name that are the same text.
SAME = "="
#: Key of a span and name that differ by more than :data:`MAX_EDIT_CHARS` characters.
FAR = "far"


class _Rates(Protocol):
    def rate(self, table: str, key: str, alpha: float = 1.0) -> tuple[float, int]: ...


def edit_key(span: str, name: str) -> str:
    """The edit that turns normalised ``span`` into normalised ``name``, as a prior key.

    The common beginning and ending are removed; what is left of the span (``x``) and of the
    name (``y``) is the edit, placed by where it happens: ``start`` (nothing in common before
    it), ``end`` (nothing in common after it) or ``inside``. The key is ``WHERE:x>y``,
    :data:`SAME` for equal texts and :data:`FAR` when ``x`` and ``y`` have more than
    :data:`MAX_EDIT_CHARS` characters together.

    >>> edit_key("הסכרת", "סכרת"), edit_key("kidney stones", "kidney stone")
    ('start:ה>', 'end:s>')
    >>> edit_key("tumour", "tumor"), edit_key("fever", "fever"), edit_key("ache", "seizure")
    ('inside:u>', '=', 'far')
    """
    if span == name:
        return SAME
    prefix = len(os.path.commonprefix([span, name]))
    room = min(len(span), len(name)) - prefix
    suffix = 0
    while suffix < room and span[-1 - suffix] == name[-1 - suffix]:
        suffix += 1
    x, y = span[prefix:len(span) - suffix], name[prefix:len(name) - suffix]
    if len(x) + len(y) > MAX_EDIT_CHARS:
        return FAR
    where = "start" if prefix == 0 else "end" if suffix == 0 else "inside"
    return f"{where}:{x}>{y}"


def edit_columns(keys: Sequence[str], priors: _Rates) -> np.ndarray:
    """The :data:`EDIT_FEATURES` of each candidate, given its :func:`edit_key`, in float64."""
    rates: dict[str, tuple[float, float]] = {}
    for key in dict.fromkeys(keys):
        prior, seen = priors.rate("edit", key)
        rates[key] = (prior, math.log1p(seen))
    return np.array([rates[key] for key in keys], dtype=np.float64).reshape(len(keys), 2)
