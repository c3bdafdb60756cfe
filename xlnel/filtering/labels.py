"""Training labels of (span, name) candidates from gold annotations."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xlnel.types import Candidate, Document


def label_candidates(document: Document, candidates: Sequence[Candidate],
                     level: str = "span") -> np.ndarray:
    """Which candidates are real mentions of their concept.

    A candidate is positive when its span equals a gold mention's offsets and, at ``concept``
    level when that mention has concept ids, its concept is one of them. At ``span`` level (or
    for gold mentions without ids) the offsets alone decide.

    Returns:
        A boolean array, one value per candidate.
    """
    gold: dict[tuple[int, int], set[str] | None] = {}
    for ent in document.entities:
        key = (ent.start, ent.end)
        if level == "span" or not ent.concept_ids:
            gold[key] = None
        elif gold.get(key, set()) is not None:
            gold.setdefault(key, set()).update(ent.concept_ids)  # type: ignore[union-attr]
    out = np.zeros(len(candidates), dtype=bool)
    for i, cand in enumerate(candidates):
        key = (cand.span.start, cand.span.end)
        if key in gold:
            ids = gold[key]
            out[i] = ids is None or cand.concept_id in ids
    return out
