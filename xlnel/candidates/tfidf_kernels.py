"""Compiled (numba) loops of the exact TF-IDF matcher's search.

scipy's sparse product makes two passes over the postings and materialises every partial score
of a chunk of queries as a sparse matrix before the bound is applied; at millions of names that
is tens of millions of entries per chunk. These loops fuse the three steps: they scatter one
query's postings of one block into a dense accumulator that stays in cache, apply the bound to the
names touched, and keep only the survivors; then they score the survivors exactly. They release
the GIL, so ``workers`` threads search chunks in parallel.

``AVAILABLE`` is False where numba cannot be imported; the matcher then uses the scipy path,
which returns the same results (both are tested against brute force).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

try:
    import numba

    AVAILABLE = True
except ImportError:  # pragma: no cover - numba ships wheels for the supported platforms
    numba = None  # type: ignore[assignment]
    AVAILABLE = False
    logger.warning("numba cannot be imported; the TF-IDF matcher falls back to scipy sparse "
                   "products (the same results, several times slower on large dictionaries)")


def _jit(fn: Any) -> Any:
    if not AVAILABLE:
        return fn
    return numba.njit(cache=True, nogil=True)(fn)


@_jit
def _grow(arr: np.ndarray, size: int) -> np.ndarray:  # pragma: no cover - compiled
    out = np.empty(max(2 * arr.size, size), dtype=arr.dtype)
    out[:arr.size] = arr
    return out


@_jit
def candidate_pairs_kernel(q_indptr: np.ndarray, q_indices: np.ndarray, q_data: np.ndarray,
                           norms: np.ndarray, block_indptr: np.ndarray, block_names: np.ndarray,
                           block_data: np.ndarray, rest_norm: np.ndarray,
                           name_bucket: np.ndarray, block_size: int, lim: float
                           ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """(query row, name) pairs whose partial score plus bound reaches ``lim``; the same pairs
    as :func:`xlnel.candidates.tfidf_index.candidate_pairs` (see there for the bound).

    The scatter adds a query's postings of one block into a float32 accumulator (256 KiB, it
    stays in cache). When the query reads many postings of the block, a branch-free scatter and
    a sequential scan of the accumulator find the touched names (their partial scores are
    positive, as every weight is). When it reads few - a real mention against millions of
    names touches a small part of each block - the scan of every name of the block would cost
    more than the scatter, so the scatter also lists the names it touches and only those are
    read back; a name listed twice is read once, as reading it resets its score to zero.
    """
    n_q = q_indptr.size - 1
    n_names = rest_norm.size
    acc = np.zeros(block_size, dtype=np.float32)
    touched = np.empty(4096, dtype=np.int64)
    rows = np.empty(4096, dtype=np.int64)
    cols = np.empty(4096, dtype=np.int64)
    n_out = 0
    for b in range(block_indptr.shape[0]):
        lo = b * block_size
        ptr = block_indptr[b]
        if ptr[0] == ptr[ptr.size - 1]:
            continue
        width = min(block_size, n_names - lo)
        for i in range(n_q):
            n_post = 0
            for k in range(q_indptr[i], q_indptr[i + 1]):
                f = q_indices[k]
                n_post += ptr[f + 1] - ptr[f]
            if n_post == 0:
                continue
            # two read-back loops, not one indexing through ``touched`` or the block: the
            # block scan must stay a plain loop (one shared loop measured slower on MeSH)
            if 4 * n_post < width:  # few postings: list the touched names
                if n_post > touched.size:
                    touched = _grow(touched, n_post)
                n_t = 0
                for k in range(q_indptr[i], q_indptr[i + 1]):
                    f = q_indices[k]
                    w = q_data[k]
                    for p in range(ptr[f], ptr[f + 1]):
                        j = block_names[p]
                        acc[j] += w * block_data[p]
                        touched[n_t] = j
                        n_t += 1
                if n_out + n_t > rows.size:
                    rows = _grow(rows, n_out + n_t)
                    cols = _grow(cols, n_out + n_t)
                for t in range(n_t):
                    j = touched[t]
                    partial = acc[j]
                    if partial > 0:
                        name = lo + j
                        if partial + rest_norm[name] * norms[i, name_bucket[name]] >= lim:
                            rows[n_out] = i
                            cols[n_out] = name
                            n_out += 1
                        acc[j] = 0
                continue
            for k in range(q_indptr[i], q_indptr[i + 1]):
                f = q_indices[k]
                w = q_data[k]
                for p in range(ptr[f], ptr[f + 1]):
                    acc[block_names[p]] += w * block_data[p]
            if n_out + width > rows.size:
                rows = _grow(rows, n_out + width)
                cols = _grow(cols, n_out + width)
            for j in range(width):
                partial = acc[j]
                if partial > 0:
                    name = lo + j
                    if partial + rest_norm[name] * norms[i, name_bucket[name]] >= lim:
                        rows[n_out] = i
                        cols[n_out] = name
                        n_out += 1
                    acc[j] = 0
    return rows[:n_out].copy(), cols[:n_out].copy()


@_jit
def exact_scores_kernel(q_indptr: np.ndarray, q_indices: np.ndarray, q_data: np.ndarray,
                        n_features: int, rows: np.ndarray, cols: np.ndarray,
                        v_indptr: np.ndarray, v_indices: np.ndarray, v_data: np.ndarray
                        ) -> np.ndarray:  # pragma: no cover - compiled
    """Cosine (float64) of each (query row, name) pair; ``rows`` must be sorted."""
    dense = np.zeros(n_features, dtype=np.float64)
    out = np.empty(rows.size, dtype=np.float64)
    current = -1
    for t in range(rows.size):
        i = rows[t]
        if i != current:
            if current >= 0:
                for k in range(q_indptr[current], q_indptr[current + 1]):
                    dense[q_indices[k]] = 0.0
            for k in range(q_indptr[i], q_indptr[i + 1]):
                dense[q_indices[k]] = np.float64(q_data[k])
            current = i
        s = 0.0
        c = cols[t]
        for k in range(v_indptr[c], v_indptr[c + 1]):
            s += dense[v_indices[k]] * np.float64(v_data[k])
        out[t] = s
    return out
