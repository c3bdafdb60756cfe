"""Dense linker speed: names embedded per second, and FAISS queries per second.

1. The real multilingual-e5-small (``xlnel models build multilingual-e5-small``) embeds
   ``--names`` MeSH names on the CPU with ``--threads`` torch threads (mean pooling, prefix
   ``"query: "``, as the dense generator does).
2. A synthetic index of ``--n`` unit vectors (dimension 384, drawn around ``--clusters``
   random centres so that nearest neighbours are meaningful, as real name embeddings are) is
   searched by ``--queries`` new vectors with the exact ``IndexFlatIP``, IVF and HNSW indexes
   (see :func:`clustered_vectors`);
   recall@10 of the approximate indexes is measured against the exact top 10.

Writes ``benchmarks/results/dense_speed.json``. Run from the repository root::

    nice -n 10 python -m benchmarks dense_speed
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import write_result

MESH = Path("../shared/data/kb/mesh_names.tsv")


def _peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def embedding_speed(n_names: int, threads: int, batch_size: int) -> dict[str, Any]:
    """Names per second of the real e5-small on the CPU."""
    import torch

    from xlnel.io import load_kb
    from xlnel.linkers.encoder import EntityEncoder
    from xlnel.normalization import normalize_string

    torch.set_num_threads(threads)
    names: list[str] = []
    for concept in load_kb(f"tsv:{MESH}"):
        names.extend(normalize_string(n) for n in concept.names)
        if len(names) >= n_names:
            break
    names = names[:n_names]
    encoder = EntityEncoder("multilingual-e5-small", device="cpu", batch_size=batch_size)
    encoder.encode(names[:batch_size])  # warm-up
    t0 = time.perf_counter()
    encoder.encode(names)
    seconds = time.perf_counter() - t0
    return {"model": "multilingual-e5-small", "names": len(names), "seconds": round(seconds, 2),
            "names_per_second": round(len(names) / seconds, 1), "torch_threads": threads,
            "batch_size": batch_size, "pooling": encoder.pooling, "prefix": encoder.prefix,
            "mean_tokens": round(float(np.mean([len(x) for x in
                                                encoder.tokenize(names)["input_ids"]])), 1)}


def clustered_vectors(n: int, dim: int, clusters: int, seed: int, latent: int = 32,
                      spread: float = 0.5, noise: float = 0.05,
                      chunk: int = 100_000) -> np.ndarray:
    """``n`` unit vectors of a Gaussian mixture with low intrinsic dimension (float32).

    Points are drawn around ``clusters`` centres in a ``latent``-dimensional space, mapped to
    ``dim`` dimensions by a fixed random projection, given a little isotropic noise and
    normalised: like name embeddings, the data lie near a low-dimensional manifold, so nearest
    neighbours are well defined (isotropic noise in 384 dimensions makes all neighbours of a
    cluster equidistant and recall meaningless). The projection and centres depend only on
    ``clusters`` and ``dim``; ``seed`` draws the points.
    """
    base = np.random.default_rng(12345)
    centres = base.standard_normal((clusters, latent), dtype=np.float32)
    projection = base.standard_normal((latent, dim), dtype=np.float32) / np.sqrt(latent)
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        z = centres[rng.integers(0, clusters, hi - lo)]
        z = z + spread * rng.standard_normal((hi - lo, latent), dtype=np.float32)
        block = z @ projection
        block += noise * rng.standard_normal((hi - lo, dim), dtype=np.float32)
        out[lo:hi] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    hits = sum(len(set(f) & set(t)) for f, t in zip(found.tolist(), truth.tolist(), strict=True))
    return round(hits / truth.size, 4)


def _timed_search(index: Any, queries: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    t0 = time.perf_counter()
    _, ids = index.search(queries, k)
    return ids, time.perf_counter() - t0


def faiss_speed(n: int, dim: int, clusters: int, n_queries: int, threads: int,
                nlist: int, hnsw_m: int, ef_construction: int) -> dict[str, Any]:
    """Build times, queries per second and recall@10 of flat, IVF and HNSW indexes."""
    import faiss

    from xlnel.linkers.faiss_index import build_index

    faiss.omp_set_num_threads(threads)
    t0 = time.perf_counter()
    data = clustered_vectors(n, dim, clusters, seed=0)
    queries = clustered_vectors(n_queries, dim, clusters, seed=1)
    out: dict[str, Any] = {"vectors": n, "dim": dim, "clusters": clusters,
                           "queries": n_queries, "k": 10, "faiss_threads": threads,
                           "faiss_version": faiss.__version__,
                           "data_seconds": round(time.perf_counter() - t0, 1)}
    t0 = time.perf_counter()
    flat = build_index(data, "flat")
    build = time.perf_counter() - t0
    truth, secs = _timed_search(flat, queries, 10)
    out["flat"] = {"build_seconds": round(build, 2), "qps": round(n_queries / secs, 1)}
    del flat
    print(f"flat: {out['flat']}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    ivf = build_index(data, "ivf", nlist=nlist)
    out["ivf"] = {"nlist": nlist, "build_seconds": round(time.perf_counter() - t0, 2),
                  "by_nprobe": {}}
    for nprobe in (4, 16, 64):
        ivf.nprobe = nprobe
        ids, secs = _timed_search(ivf, queries, 10)
        out["ivf"]["by_nprobe"][str(nprobe)] = {"qps": round(n_queries / secs, 1),
                                                "recall_at_10": _recall(ids, truth)}
    del ivf
    print(f"ivf: {out['ivf']}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    hnsw = build_index(data, "hnsw", hnsw_m=hnsw_m, ef_construction=ef_construction)
    out["hnsw"] = {"M": hnsw_m, "ef_construction": ef_construction,
                   "build_seconds": round(time.perf_counter() - t0, 2), "by_ef_search": {}}
    for ef in (16, 64, 256):
        hnsw.hnsw.efSearch = ef
        ids, secs = _timed_search(hnsw, queries, 10)
        out["hnsw"]["by_ef_search"][str(ef)] = {"qps": round(n_queries / secs, 1),
                                                "recall_at_10": _recall(ids, truth)}
    print(f"hnsw: {out['hnsw']}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--nlist", type=int, default=1024)
    parser.add_argument("--hnsw-m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=40)
    parser.add_argument("--skip-embedding", action="store_true")
    args = parser.parse_args()
    t0 = time.perf_counter()
    result: dict[str, Any] = {}
    if not args.skip_embedding:
        result["embedding"] = embedding_speed(args.names, args.threads, args.batch_size)
        print(f"embedding: {result['embedding']}", file=sys.stderr, flush=True)
    result["faiss"] = faiss_speed(args.n, args.dim, args.clusters, args.queries, args.threads,
                                  args.nlist, args.hnsw_m, args.ef_construction)
    result["peak_rss_mib"] = _peak_mib()
    result["wall_seconds"] = round(time.perf_counter() - t0, 1)
    result["note"] = ("2-core machine shared with other jobs during the run: absolute figures "
                      "are pessimistic; ratios between indexes are the useful part")
    print(write_result("dense_speed", result))


if __name__ == "__main__":
    main()
