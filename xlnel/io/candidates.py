"""Candidates and filter scores of many documents on disk: JSON lines and a numpy ``.npz``.

Used by the experiment stage cache and the benchmarks' caches; no pickle.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xlnel.io._atomic import atomic_path, atomic_write
from xlnel.types import Candidate, Span

__all__ = ["read_candidates", "read_scores", "write_candidates", "write_scores"]


def write_candidates(path: Path, candidates: Sequence[Sequence[Candidate]]) -> None:
    """Candidates per document as JSON lines of ``[start, end, text, prefix, cid, name, score,
    source, entry_score]``."""
    with atomic_write(path) as f:
        for cands in candidates:
            rows = [[c.span.start, c.span.end, c.span.text, c.span.stripped_prefix,
                     c.concept_id, c.name, c.score, c.source, c.entry_score] for c in cands]
            f.write(json.dumps(rows, ensure_ascii=False) + "\n")


def read_candidates(path: Path) -> list[list[Candidate]]:
    """Candidates written by :func:`write_candidates` (rows without ``source`` and
    ``entry_score`` give ``None`` for both)."""
    out: list[list[Candidate]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            spans: dict[tuple[int, int, str], Span] = {}
            cands = []
            for start, end, text, prefix, cid, name, score, *origin in json.loads(line):
                span = spans.setdefault((start, end, prefix), Span(start, end, text, prefix))
                source, entry_score = origin or (None, None)
                cands.append(Candidate(span, cid, name, float(score), source,
                                       None if entry_score is None else float(entry_score)))
            out.append(cands)
    return out


def write_scores(path: Path, scores: Sequence[np.ndarray]) -> None:
    """Score arrays of several documents in one ``.npz`` (read back by :func:`read_scores`)."""
    lengths = np.array([len(s) for s in scores], dtype=np.int64)
    flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in scores] or [np.zeros(0)])
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, lengths=lengths, scores=flat)


def read_scores(path: Path) -> list[np.ndarray]:
    """Score arrays written by :func:`write_scores` (no pickle)."""
    with np.load(path, allow_pickle=False) as z:
        bounds = np.concatenate([[0], np.cumsum(z["lengths"])])
        flat = z["scores"]
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
