"""Host (CPU) time per document of the transformer cascade, everything but the forward passes.

On a GPU the cascade's throughput is bound by the work the host does for each document: the
candidates, the GBDT prefilter's features and scores, the context windows, and tokenising and
batching the (window, name) pairs the transformer reads (the GPU was 30-48% busy in
``link_throughput_transformer_gpu.json``).
This script times each of those stages on BC5CDR dev documents, linked in batches as
``xlnel link`` does, with any tokenizer (default: the e5 one that ``xlnel models build
multilingual-e5-small`` writes). The pairs are the top ``--top-k`` names of each span, as the
cascade reads them; the GBDT cut, which keeps 98% of the positives, removes only 1.4% more
(1,064 pairs a document in the GPU run's profile), so it is not applied here.

For comparison the same pairs are also tokenised the plain way: the tokenizer called on
whole pairs, then padded through Python lists into tensors.

    xlnel train configs/bc5cdr.yaml --out /tmp/bc5cdr-gbdt
    python -m benchmarks cascade_host_time --pipeline /tmp/bc5cdr-gbdt --documents 400
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import result_name, write_result
from xlnel.filtering._pair_encoder import PairEncoder  # noqa: E402
from xlnel.filtering._pairs import candidate_windows, top_k_mask  # noqa: E402
from xlnel.io import read_documents  # noqa: E402
from xlnel.models.torch_utils import length_batches  # noqa: E402
from xlnel.pipeline import Pipeline  # noqa: E402

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "bc5cdr" / "dev.pubtator"


def _whole_pairs(tokenizer: Any, windows: list[str], names: list[str], max_length: int,
                 batch_size: int) -> None:
    """Tokenise whole pairs and pad through lists (the reference the encoder is compared with)."""
    import torch

    enc = tokenizer(windows, names, truncation=True, max_length=max_length)
    keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
    feats = [{k: enc[k][i] for k in keys} for i in range(len(windows))]
    for idx in length_batches([len(f["input_ids"]) for f in feats], batch_size):
        rows = [feats[i] for i in idx]
        width = max(len(f["input_ids"]) for f in rows)
        for key in keys:
            fill = tokenizer.pad_token_id if key == "input_ids" else 0
            torch.tensor([f[key] + [fill] * (width - len(f[key])) for f in rows])


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from transformers import AutoTokenizer

    from xlnel.models.registry import resolve_model

    docs = read_documents(DEV)[:args.documents]
    pipeline = Pipeline.load(args.pipeline)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(args.tokenizer))
    encoder = PairEncoder(tokenizer, args.max_length)
    pipeline.candidates(docs[:4])  # compile and warm the matcher
    seconds = dict.fromkeys(("candidates", "gbdt_prefilter", "windows", "pair_encoder",
                             "batches", "tokenizer_whole_pairs_and_list_padding"), 0.0)
    pairs_total = 0
    for lo in range(0, len(docs), args.batch_size):
        batch = docs[lo:lo + args.batch_size]
        t0 = time.perf_counter()
        cands = pipeline.candidates(batch)
        t1 = time.perf_counter()
        pipeline.filter.score_batch(batch, cands)
        t2 = time.perf_counter()
        keys: dict[tuple[str, str], int] = {}
        for doc, cs in zip(batch, cands, strict=True):
            kept = [cs[i] for i in np.flatnonzero(top_k_mask(cs, args.top_k))]
            for w, c in zip(candidate_windows(doc, kept, 2, True), kept, strict=True):
                keys.setdefault((w, c.name), len(keys))
        windows, names = [w for w, _ in keys], [n for _, n in keys]
        t3 = time.perf_counter()
        encoded = encoder(windows, names)
        t4 = time.perf_counter()
        for idx in length_batches(encoded.lengths.tolist(), args.inference_batch_size):
            encoded.batch(idx, tokenizer.pad_token_id)
        t5 = time.perf_counter()
        _whole_pairs(tokenizer, windows, names, args.max_length, args.inference_batch_size)
        t6 = time.perf_counter()
        for key, dt in zip(seconds, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5),
                           strict=True):
            seconds[key] += dt
        pairs_total += len(keys)
    per_doc = {k: round(1000 * v / len(docs), 2) for k, v in seconds.items()}
    host = sum(v for k, v in per_doc.items() if k != "tokenizer_whole_pairs_and_list_padding")
    before = host - per_doc["pair_encoder"] - per_doc["batches"] \
        + per_doc["tokenizer_whole_pairs_and_list_padding"]
    return {"documents": len(docs), "pairs_per_document": round(pairs_total / len(docs), 1),
            "ms_per_document": per_doc, "host_ms_per_document": round(host, 2),
            "host_ms_per_document_with_whole_pair_tokenising": round(before, 2),
            "host_bound_documents_per_second": round(1000 / host, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline", required=True, help="A BC5CDR GBDT pipeline folder.")
    parser.add_argument("--tokenizer", default="multilingual-e5-small")
    parser.add_argument("--documents", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=64, help="Documents per batch.")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--inference-batch-size", type=int, default=128)
    parser.add_argument("--name", type=result_name, default="cascade_host_time")
    args = parser.parse_args()
    result = measure(args)
    result["settings"] = {**vars(args), "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    print(result)
    print(write_result(args.name, result))


if __name__ == "__main__":
    main()
