"""What the GBDT filter's frozen-encoder features cost on CPU; writes encoder_features_cost.json.

For each Camoni community: the distinct texts the ``encoder`` option embeds over all visible
posts (sentence pieces, span texts, dictionary names of the candidates, from the cached folds
of :mod:`_oof`), and the embedding rate of each kind measured on a sample of ``--sample`` texts
of it with a fresh store at the thread count of the environment (run with
``OMP_NUM_THREADS=1``). ``estimated_seconds`` = texts / rate, the one-off cost of embedding a
community; afterwards the store serves every fold and run.

    python benchmarks/encoder_features_cost.py [--sample 300] [COMMUNITY ...]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _oof  # noqa: E402
from _common import write_result  # noqa: E402

from xlnel.filtering.encoder_features import EmbeddingStore, EncoderFeatures  # noqa: E402

MODEL = "multilingual-e5-small"


def distinct_texts(corpus: str) -> dict[str, set[str]]:
    """The distinct texts of each kind that the features of every post need."""
    kinds: dict[str, set[str]] = {"context": set(), "span": set(), "name": set()}
    feats = EncoderFeatures(EmbeddingStore(MODEL))
    fold = _oof.folds(corpus)[0]
    for docs, cands in ((fold.filter_docs, fold.filter_cands), (fold.test_docs, fold.test_cands)):
        for d, c in zip(docs, cands, strict=True):
            kinds["context"].update(feats._contexts(d, c))
            kinds["span"].update(x.span.text for x in c)
            kinds["name"].update(x.name for x in c)
    return kinds


def measure(corpus: str, sample: int) -> dict[str, Any]:
    """Counts, rates and the estimated one-off embedding time of one community."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = EmbeddingStore(MODEL, folder=Path(tmp))
        store.encoder()  # load before timing
        total = 0.0
        for kind, texts in distinct_texts(corpus).items():
            chosen = random.Random(0).sample(sorted(texts), min(sample, len(texts)))
            t0 = time.perf_counter()
            store.add(chosen)
            rate = len(chosen) / (time.perf_counter() - t0)
            out[kind] = {"texts": len(texts), "texts_per_second": round(rate, 1),
                         "estimated_seconds": round(len(texts) / rate, 1)}
            total += len(texts) / rate
    out["estimated_seconds"] = round(total, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("communities", nargs="*", default=["diabetes", "sclerosis", "depression"])
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args()
    results = {c: measure(c, args.sample) for c in args.communities}
    write_result("encoder_features_cost", {
        "model": MODEL, "threads": os.environ.get("OMP_NUM_THREADS", "default"),
        "timing": "wall time on a 2-core machine shared with other jobs",
        "sample": args.sample, "results": results})


if __name__ == "__main__":
    main()
