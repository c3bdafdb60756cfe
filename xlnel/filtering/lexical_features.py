"""Span features that generalise past the exact text (option ``lexical`` of the GBDT filter).

A span whose text never occurred in the training documents has no mention prior, yet its last
word ("... failure", "... syndrome") and the ending of that word ("-emia", "-itis", "-pine")
often were annotated elsewhere: :data:`LEXICAL_FEATURES` gives the share of gold spans among the
training spans with the same last word (and how many were seen) and with the same last
:data:`SUFFIX_CHARS` characters. Two flags say whether the document defines the span as an
abbreviation ("long form (SF)", :func:`xlnel.linkers.abbreviations.find_abbreviations`): the
span is such a short form, or ends a long form, which authors define for the terms they go on
to discuss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from xlnel.linkers.abbreviations import find_abbreviations

#: The columns, in order.
LEXICAL_FEATURES = ("head_prior", "head_seen", "suffix_prior", "short_form", "long_form")
#: Characters of the last word that make its ending.
SUFFIX_CHARS = 4


class _Rates(Protocol):
    def rate(self, table: str, key: str, alpha: float = 1.0) -> tuple[float, int]: ...


def lexical_keys(norm: str) -> tuple[str, str]:
    """Keys of the ``lexical`` prior table for a normalised span text: its last word
    (``h:`` prefix) and that word's last :data:`SUFFIX_CHARS` characters (``s:`` prefix)."""
    words = norm.split()
    head = words[-1] if words else ""
    return "h:" + head, "s:" + head[-SUFFIX_CHARS:]


def lexical_columns(text: str, spans: Sequence[tuple[int, int]], norms: Sequence[str],
                    priors: _Rates) -> np.ndarray:
    """The :data:`LEXICAL_FEATURES` of each span ``(start, end)`` of a document with text
    ``text`` (``norms``: the spans' normalised texts), in float64."""
    out = np.zeros((len(spans), len(LEXICAL_FEATURES)))
    if not len(spans):
        return out
    abbreviations = find_abbreviations(text)
    shorts = {text[a.short_start:a.short_end] for a in abbreviations}
    long_forms = [(a.long_start, a.long_end) for a in abbreviations]
    for g, ((s, e), norm) in enumerate(zip(spans, norms, strict=True)):
        head, suffix = lexical_keys(norm)
        head_prior, head_seen = priors.rate("lexical", head)
        is_long = any(e == le and s >= ls for ls, le in long_forms)
        out[g] = (head_prior, math.log1p(head_seen), priors.rate("lexical", suffix)[0],
                  float(text[s:e] in shorts), float(is_long))
    return out
