"""FAISS inner-product indexes over unit vectors: exact, IVF or HNSW.

On L2-normalised vectors the inner product is the cosine. ``flat`` (``IndexFlatIP``) is exact
and fine up to a few hundred thousand names; ``ivf`` (``IndexIVFFlat``, ``nlist`` k-means cells,
``nprobe`` searched) and ``hnsw`` (``IndexHNSWFlat``, ``M`` links per node, ``ef_search``
candidates explored) trade a little recall for speed on dictionaries of millions of names.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np

from xlnel.errors import ArtifactError

logger = logging.getLogger(__name__)

IndexKind = Literal["flat", "ivf", "hnsw"]
_MIN_POINTS_PER_CELL = 39  # FAISS warns when k-means has fewer training points per centroid


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("the dense linker needs faiss: pip install faiss-cpu "
                          "(or the 'neural' extra)") from e
    return faiss


def build_index(vectors: np.ndarray, kind: IndexKind = "flat", nlist: int = 1024,
                nprobe: int = 16, hnsw_m: int = 32, ef_construction: int = 80,
                ef_search: int = 64, seed: int = 0) -> Any:
    """An inner-product index holding ``vectors`` (rows of a float32 matrix), row i = id i.

    ``nlist`` is lowered for small inputs so every k-means cell has enough training points.

    Raises:
        ValueError: On an unknown kind or a matrix that is not two-dimensional.
    """
    faiss = _faiss()
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-d matrix of vectors, got shape {vectors.shape}")
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = x.shape
    t0 = time.perf_counter()
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "ivf":
        cells = max(1, min(nlist, n // _MIN_POINTS_PER_CELL))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, cells, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        if n:
            index.train(x)
        index.nprobe = min(nprobe, cells)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        index.hnsw.efSearch = ef_search
    else:
        raise ValueError(f"unknown index kind {kind!r}; allowed: flat, ivf, hnsw")
    if n:
        index.add(x)
    logger.debug("built %s index of %d vectors in %.2f s", kind, n, time.perf_counter() - t0)
    return index


def set_search_params(index: Any, nprobe: int | None = None,
                      ef_search: int | None = None) -> None:
    """Change the search-time settings of a built or loaded index (no-op where meaningless)."""
    if nprobe is not None and hasattr(index, "nprobe"):
        index.nprobe = min(nprobe, index.nlist)
    if ef_search is not None and hasattr(index, "hnsw"):
        index.hnsw.efSearch = ef_search


def search(index: Any, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, ids) per query, best first; missing hits have id -1 and score -inf.

    Scores are float64 cosines in [-1, 1] rounded to 6 decimals, as the TF-IDF matcher's are:
    float32 inner products of unit vectors stray on both sides of 1 for the very same text
    (0.99999994, 1.0000001), so a threshold of 1 would drop some exact names and keep others.
    """
    q = np.ascontiguousarray(queries, dtype=np.float32)
    if q.shape[0] == 0 or index.ntotal == 0:
        return (np.full((q.shape[0], k), -np.inf, dtype=np.float64),
                np.full((q.shape[0], k), -1, dtype=np.int64))
    raw, ids = index.search(q, min(k, index.ntotal))
    scores = np.where(ids >= 0, np.round(np.clip(raw.astype(np.float64), -1.0, 1.0), 6),
                      -np.inf)
    if scores.shape[1] < k:  # pad to k columns so callers see one shape
        pad = k - scores.shape[1]
        scores = np.pad(scores, ((0, 0), (0, pad)), constant_values=-np.inf)
        ids = np.pad(ids, ((0, 0), (0, pad)), constant_values=-1)
    return scores, ids


def write_index(index: Any, path: Path) -> None:
    """Write an index with ``faiss.write_index``."""
    _faiss().write_index(index, str(path))


def read_index(path: Path) -> Any:
    """Read an index written by :func:`write_index`.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        ArtifactError: If it is not a FAISS index (FAISS's parser refuses it).
    """
    if not path.is_file():
        raise FileNotFoundError(f"FAISS index not found: {path}")
    try:
        return _faiss().read_index(str(path))
    except RuntimeError as e:  # FAISS reports a foreign or truncated file so
        raise ArtifactError(f"{path} is not a FAISS index ({str(e).splitlines()[0][-120:]}); "
                            "save the generator again") from None
