"""Array kernels of the exact TF-IDF matcher: bounded-memory vectorisation, the split
inverted index and the candidate-generation / verification search of one chunk of queries.

Every n-gram f has a global rank (0 = most frequent). Each name vector y is split, as in
AllPairs/L2AP exact similarity search, into an *unindexed* part y' - its most frequent n-grams,
as many as keep ``||y'|| < threshold`` - and an *indexed* part y''. A unit query x can only reach
the threshold with y if it shares an indexed n-gram, since ``x . y' <= ||y'|| < threshold``. The
partial score ``x . y''`` (by blocks of names so the accumulator stays in cache) plus the
Cauchy-Schwarz bound ``||y'|| * ||x over ranks <= cut(y)||`` prunes further, and the few
survivors are scored exactly. The loops run compiled (:mod:`tfidf_kernels`, numba) or, without
numba, as scipy sparse products; both give the same results.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

import numpy as np
import scipy.sparse as sp

from xlnel.candidates import tfidf_kernels as kernels
from xlnel.errors import ArtifactError

# A cosine is kept if, rounded to 6 decimals, it is >= threshold - _TIE; the candidate bound
# uses a wider margin so float32 storage can never drop a pair the exact score would keep.
_TIE = 1e-6
_BOUND_SLACK = 1e-5

INDEX_ARRAYS = ("idf", "rank", "vec_indptr", "vec_indices", "vec_data", "names_blob",
                "names_offsets")


# ------------------------------------------------------------------------------------ names
class NameList(Sequence[str]):
    """Read-only list of strings stored as one UTF-8 byte array and offsets (memory-mappable)."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self._blob = blob
        self._offsets = offsets

    @classmethod
    def from_strings(cls, names: Sequence[str]) -> NameList:
        """Pack ``names`` into one byte array."""
        encoded = [n.encode("utf-8") for n in names]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    def __len__(self) -> int:
        return self._offsets.size - 1

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"name index {i} out of range for {len(self)} names")
        return bytes(self._blob[self._offsets[i]:self._offsets[i + 1]]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The byte array and the offsets."""
        return self._blob, self._offsets


# ---------------------------------------------------------------------------- vectorisation
def count_ngrams(names: Sequence[str], lo: int, hi: int, vocabulary: dict[str, int],
                 chunk: int = 50_000, pad: bool = False) -> sp.csr_matrix:
    """Raw n-gram counts (names x features, int32 indices, float32 data), built in chunks so
    that Python lists never hold more than ``chunk`` names' n-grams; extends ``vocabulary``.
    ``pad`` takes the n-grams of each name with a space added at both ends."""
    parts = []
    sizes = range(lo, hi + 1)
    get = vocabulary.get
    for start in range(0, len(names), chunk):
        cols: list[int] = []
        lengths = np.zeros(min(chunk, len(names) - start), dtype=np.int64)
        for k, name in enumerate(names[start:start + chunk]):
            if pad:
                name = f" {name} "
            grams = [name[i:i + n] for n in sizes for i in range(len(name) - n + 1)]
            ids = list(map(get, grams))  # C-speed lookups; new n-grams are the rare case
            if None in ids:
                ids = [vocabulary.setdefault(g, len(vocabulary)) for g in grams]
            cols.extend(ids)  # type: ignore[arg-type]
            lengths[k] = len(ids)
        rows = np.repeat(np.arange(lengths.size, dtype=np.int32), lengths)
        m = sp.coo_matrix((np.ones(len(cols), dtype=np.float32),
                           (rows, np.asarray(cols, dtype=np.int32))),
                          shape=(lengths.size, 1 << 30)).tocsr()  # sums duplicate n-grams
        m.sort_indices()
        parts.append(m)
    return _stack_rows(parts, len(vocabulary))


def _stack_rows(parts: list[sp.csr_matrix], n_cols: int) -> sp.csr_matrix:
    nnz = sum(p.nnz for p in parts)
    indptr = np.zeros(sum(p.shape[0] for p in parts) + 1, dtype=np.int64)
    indices = np.empty(nnz, dtype=np.int32)
    data = np.empty(nnz, dtype=np.float32)
    row = pos = 0
    while parts:  # free each chunk once copied
        p = parts.pop(0)
        indptr[row + 1:row + 1 + p.shape[0]] = pos + p.indptr[1:]
        indices[pos:pos + p.nnz] = p.indices
        data[pos:pos + p.nnz] = p.data
        row, pos = row + p.shape[0], pos + p.nnz
    if nnz < np.iinfo(np.int32).max:  # as indices, or scipy copies both to int64 when slicing
        indptr = indptr.astype(np.int32)
    return _csr(data, indices, indptr, (row, n_cols))


def _csr(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray,
         shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix around existing (possibly memory-mapped) arrays, without copies or checks."""
    m = sp.csr_matrix(shape, dtype=data.dtype)
    m.data, m.indices, m.indptr = data, indices, indptr
    return m


def weigh_rows(counts: sp.csr_matrix, idf: np.ndarray, sublinear: bool,
               chunk: int = 200_000) -> sp.csr_matrix:
    """TF-IDF weights with unit-norm rows, in place on ``counts``."""
    data = counts.data
    if sublinear:
        np.log(data, out=data)
        data += 1
    indptr = counts.indptr
    total = 0.0
    for r0 in range(0, counts.shape[0], chunk):  # by rows: float64 temporaries stay small
        r1 = min(r0 + chunk, counts.shape[0])
        a, b = indptr[r0], indptr[r1]
        part = data[a:b]
        part *= idf[counts.indices[a:b]]
        # one running sum over all rows, carried across chunks: the same float64 operations,
        # so the same vectors bit for bit whatever the chunk size
        cum = np.cumsum(np.concatenate(([total], part.astype(np.float64) ** 2)))
        total = cum[-1]
        sq = cum[indptr[r0 + 1:r1 + 1] - a] - cum[indptr[r0:r1] - a]
        norms = np.sqrt(np.where(sq > 0, sq, 1.0))
        part /= np.repeat(norms, np.diff(indptr[r0:r1 + 1])).astype(np.float32)
    return counts


def global_rank(vectors: sp.csr_matrix) -> np.ndarray:
    """Rank of each feature by document frequency, most frequent first (ties by feature id)."""
    df = np.bincount(vectors.indices, minlength=vectors.shape[1])
    order = np.lexsort((np.arange(df.size), -df))
    rank = np.empty(df.size, dtype=np.int32)
    rank[order] = np.arange(df.size, dtype=np.int32)
    return rank


def prefix_norms(vectors: sp.csr_matrix, rank: np.ndarray, chunk: int = 200_000) -> np.ndarray:
    """Per stored entry (y, f): the norm of row y over its features ranked at or before f."""
    out = np.empty(vectors.nnz, dtype=np.float32)
    for r0 in range(0, vectors.shape[0], chunk):
        r1 = min(r0 + chunk, vectors.shape[0])
        a, b = vectors.indptr[r0], vectors.indptr[r1]
        lengths = np.diff(vectors.indptr[r0:r1 + 1])
        row_of = np.repeat(np.arange(r1 - r0, dtype=np.int64), lengths)
        # one int64 key (row, rank) sorts faster than a two-key lexsort
        order = np.argsort(row_of * np.int64(rank.size) + rank[vectors.indices[a:b]])
        cum = np.cumsum(vectors.data[a:b][order].astype(np.float64) ** 2)
        start = np.concatenate(([0.0], cum))[vectors.indptr[r0:r1] - a]
        pn = np.empty(b - a, dtype=np.float64)
        pn[order] = np.sqrt(np.maximum(cum - start[row_of], 0.0))
        out[a:b] = np.nextafter(pn.astype(np.float32), np.float32(2))  # round up: stays a bound
    return out


@dataclass
class SplitIndex:
    """The inverted index of the names' indexed parts for one threshold (see module doc).

    Attributes:
        threshold: The threshold the split is exact for (any search threshold >= it).
        rest_norm: Per name, the norm of its unindexed part (rounded up).
        name_bucket: Per name, the first rank-bucket edge at or past its highest unindexed rank.
        bucket_edges: Rank edges of the buckets, increasing.
        block_indptr: Per name block, the features' postings ranges (absolute positions).
        block_names: Postings: name index within its block (int32).
        block_data: Postings: weight (float32).
        block_size: Names per block.
    """

    threshold: float
    rest_norm: np.ndarray
    name_bucket: np.ndarray
    bucket_edges: np.ndarray
    block_indptr: np.ndarray
    block_names: np.ndarray
    block_data: np.ndarray
    block_size: int
    _packed: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def packed_bounds(self) -> np.ndarray:
        """``rest_norm`` and ``name_bucket`` packed per name for the compiled search (made on
        first use and kept; 4 bytes per name, not saved)."""
        if self._packed is None:
            self._packed = kernels.pack_bounds(self.rest_norm, self.name_bucket)
        return self._packed

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays to save, by file stem."""
        return {f"split_{k}": getattr(self, k) for k in SPLIT_ARRAYS}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], threshold: float,
                    block_size: int) -> SplitIndex:
        """Inverse of :meth:`arrays`."""
        return cls(threshold, block_size=block_size,
                   **{k: arrays[f"split_{k}"] for k in SPLIT_ARRAYS})


SPLIT_ARRAYS = ("rest_norm", "name_bucket", "bucket_edges", "block_indptr", "block_names",
                "block_data")


def split_index(vectors: sp.csr_matrix, rank: np.ndarray, threshold: float,
                block_size: int = 1 << 16) -> SplitIndex:
    """Per name, leave out of the index its most frequent n-grams while their norm stays below
    ``threshold``; index the rest by blocks of ``block_size`` names (a block's score
    accumulator stays in cache, which makes the sparse products several times faster)."""
    pnorm = prefix_norms(vectors, rank)
    # a name sharing no indexed n-gram scores at most its rest norm, which must stay below
    # threshold - _TIE even after rounding to 6 decimals
    limit = np.float32(threshold - 2 * _TIE)
    left_out = pnorm < limit
    del pnorm
    n_rows = vectors.shape[0]
    lengths = np.diff(vectors.indptr)
    row_of = np.repeat(np.arange(n_rows, dtype=np.int32), lengths)
    rest_sq = np.bincount(row_of[left_out], minlength=n_rows,
                          weights=vectors.data[left_out].astype(np.float64) ** 2)
    rest_norm = np.nextafter(np.sqrt(rest_sq).astype(np.float32), np.float32(2))
    rest_norm[rest_sq == 0] = 0
    cut = np.full(n_rows, -1, dtype=np.int64)
    np.maximum.at(cut, row_of[left_out], rank[vectors.indices[left_out]])
    del row_of
    has_cut = cut >= 0
    edges = np.zeros(1, np.int64)
    if has_cut.any():
        qs = np.linspace(0, 1, 129)
        edges = np.union1d(np.unique(np.quantile(cut[has_cut], qs).round()).astype(np.int64),
                           [cut.max()])
    # names without a cut have a zero rest norm; any bucket will do
    name_bucket = np.searchsorted(edges, np.maximum(cut, 0)).astype(np.int32)
    block_indptr, block_names, block_data = _postings_by_block(vectors, ~left_out, block_size)
    return SplitIndex(threshold, rest_norm, name_bucket, edges, block_indptr, block_names,
                      block_data, block_size)


def _postings_by_block(vectors: sp.csr_matrix, kept: np.ndarray, block_size: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per block of names, the postings (name within the block, weight) of each feature over
    the ``kept`` entries; written block by block into the final arrays, so that no second copy
    of the index is ever held."""
    n_rows, n_features = vectors.shape
    n_blocks = -(-n_rows // block_size)
    block_indptr = np.empty((n_blocks, n_features + 1), dtype=np.int64)
    block_names = np.empty(int(np.count_nonzero(kept)), dtype=np.int32)
    block_data = np.empty(block_names.size, dtype=np.float32)
    pos = 0
    for i in range(n_blocks):
        r0, r1 = i * block_size, min((i + 1) * block_size, n_rows)
        a, b = vectors.indptr[r0], vectors.indptr[r1]
        k = kept[a:b]
        indptr = np.concatenate(([0], np.cumsum(k)))[vectors.indptr[r0:r1 + 1] - a]
        rows = _csr(vectors.data[a:b][k], vectors.indices[a:b][k], indptr, (r1 - r0, n_features))
        blk = rows.T.tocsr()  # features x names of the block, names sorted
        block_indptr[i] = blk.indptr.astype(np.int64) + pos
        block_names[pos:pos + blk.nnz] = blk.indices
        block_data[pos:pos + blk.nnz] = blk.data
        pos += blk.nnz
    return block_indptr, block_names, block_data


# ----------------------------------------------------------------------------------- search
def _query_norms_by_bucket(q: sp.csr_matrix, rank: np.ndarray, edges: np.ndarray
                           ) -> np.ndarray:
    """Per query and rank bucket b, the norm of the query over n-grams ranked at most
    ``edges[b]`` (a non-decreasing row)."""
    q_rows = np.repeat(np.arange(q.shape[0]), np.diff(q.indptr))
    bucket = np.searchsorted(edges, rank[q.indices], side="left")
    inside = bucket < edges.size  # n-grams ranked past every edge are past every cut
    sq = np.zeros((q.shape[0], edges.size + 1))
    np.add.at(sq, (q_rows[inside], bucket[inside]), q.data[inside].astype(np.float64) ** 2)
    return np.sqrt(np.cumsum(sq, axis=1))


def candidate_pairs(q: sp.csr_matrix, rank: np.ndarray, index: SplitIndex,
                    threshold: float, compiled: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(query row, name) pairs whose partial score plus bound can reach ``threshold``.

    A name's unindexed part holds only n-grams ranked up to its cut, so it adds at most its
    own norm times the query's norm over those n-grams (Cauchy-Schwarz); cuts are rounded up to
    bucket edges, which only loosens the bound. A name sharing no indexed n-gram with the query
    scores at most its rest norm, below the index threshold. ``compiled`` uses the fused
    numba loop where numba is installed (the same pairs, in another order).
    """
    norms = _query_norms_by_bucket(q, rank, index.bucket_edges)
    lim = threshold - _BOUND_SLACK
    if compiled and kernels.AVAILABLE:
        return kernels.candidate_pairs_kernel(
            q.indptr.astype(np.int64), q.indices, q.data, norms,
            np.asarray(index.block_indptr), np.asarray(index.block_names),
            np.asarray(index.block_data), index.packed_bounds(), index.block_size, lim)
    n_features = q.shape[1]
    rows_out, cols_out = [], []
    for b, ptr in enumerate(index.block_indptr):
        lo = b * index.block_size
        a, e = int(ptr[0]), int(ptr[-1])
        if a == e:
            continue
        hi = min(lo + index.block_size, index.rest_norm.size)
        # int32 positions throughout, or scipy copies the index arrays to int64 on every product
        block = _csr(index.block_data[a:e], index.block_names[a:e],
                     (ptr - a).astype(np.int32), (n_features, hi - lo))
        partial = q @ block  # queries x names of the block: scores over indexed n-grams
        rows = np.repeat(np.arange(q.shape[0]), np.diff(partial.indptr))
        cols = partial.indices + lo
        bound = partial.data + index.rest_norm[cols] * norms[rows, index.name_bucket[cols]]
        keep = (bound >= lim) & (partial.data > 0)
        rows_out.append(rows[keep])
        cols_out.append(cols[keep])
    if not rows_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows_out), np.concatenate(cols_out).astype(np.int64)


def search_chunk(q: sp.csr_matrix, rank: np.ndarray, vectors: sp.csr_matrix,
                 index: SplitIndex, threshold: float, top_m: int, compiled: bool = True
                 ) -> list[list[tuple[int, float]]]:
    """Exact top ``top_m`` (name index, cosine) with cosine >= ``threshold`` per query row;
    ``compiled`` as in :func:`candidate_pairs`."""
    out: list[list[tuple[int, float]]] = [[] for _ in range(q.shape[0])]
    rows, cols = candidate_pairs(q, rank, index, threshold, compiled)
    if rows.size == 0:
        return out
    # exact cosines of the surviving pairs only: row-wise dot products (float64 and rounded,
    # so that equal cosines tie exactly and ties go by name index)
    if compiled and kernels.AVAILABLE:
        by_row = np.argsort(rows, kind="stable")
        rows, cols = rows[by_row], cols[by_row]
        exact = kernels.exact_scores_kernel(
            q.indptr.astype(np.int64), q.indices, q.data, q.shape[1], rows, cols,
            np.asarray(vectors.indptr), np.asarray(vectors.indices), np.asarray(vectors.data))
    else:
        exact = np.asarray(q[rows].astype(np.float64).multiply(vectors[cols]).sum(axis=1))
    vals = np.round(exact.ravel(), 6)
    ok = (vals >= threshold - _TIE) & (vals > 0)
    rows, cols, vals = rows[ok], cols[ok], vals[ok]
    order = np.lexsort((cols, -vals, rows))  # by query, best first, ties by name index
    rows, cols, vals = rows[order], cols[order], vals[order]
    bounds = np.searchsorted(rows, np.arange(q.shape[0] + 1))
    for i in range(q.shape[0]):
        a, b = bounds[i], min(bounds[i + 1], bounds[i] + top_m)
        out[i] = list(zip(cols[a:b].tolist(), np.minimum(vals[a:b], 1.0).tolist(), strict=True))
    return out


# ------------------------------------------------------------------------------ persistence
def save_arrays(directory: Path, arrays: dict[str, np.ndarray]) -> None:
    """One ``.npy`` file per array, loadable memory-mapped."""
    for name, arr in arrays.items():
        np.save(directory / f"{name}.npy", np.ascontiguousarray(arr))


def load_arrays(directory: Path, names: Sequence[str], mmap: bool) -> dict[str, np.ndarray]:
    """Arrays written by :func:`save_arrays`, memory-mapped read-only when ``mmap``.

    Raises:
        ArtifactError: If a file is missing.
    """
    out = {}
    for name in names:
        path = directory / f"{name}.npy"
        if not path.is_file():
            raise ArtifactError(f"saved matcher in {directory} lacks {path.name}")
        out[name] = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    return out


def write_json(path: Path, payload: object) -> None:
    """UTF-8 JSON, non-ASCII kept."""
    path.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
