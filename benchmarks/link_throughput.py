"""Whole-pipeline linking throughput: documents per second and peak memory, 1/2 workers and Ray.

Builds a corpus from the BC5CDR dev documents (``../shared/data/bc5cdr/dev.pubtator``) repeated,
with fresh ids and no annotations, up to ``--documents`` (the issue's target is 50,000), written
as gzipped JSONL: one file for ``xlnel link --workers N`` and a shard set for the Ray run. Each
configuration runs in a fresh process; a sampler adds up the resident memory of that process and
all its descendants (pool workers; for Ray the local cluster's processes too) every 0.2 s.

    xlnel train configs/bc5cdr.yaml --out /tmp/bc5cdr-gbdt
    python -m benchmarks link_throughput --pipeline /tmp/bc5cdr-gbdt --documents 50000
    python -m benchmarks link_throughput --pipeline P --transformer-pipeline T \\
        --transformer-documents 200
    python -m benchmarks link_throughput --transformer-pipeline T --transformer-documents 2000 \\
        --workers 1,2 --skip-ray --name link_throughput_transformer_gpu    # on a GPU machine
    ... --set filter.options.inference_dtype=bfloat16 --set filter.options.inference_batch_size=512

Figures include start-up (loading the pipeline in every worker, starting Ray): that is what a
user waits for. ``load_seconds`` gives the pipeline load time of one process for reference.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks._common import result_name, run_isolated, write_result
from xlnel.io import read_documents, write_documents  # noqa: E402
from xlnel.types import Document  # noqa: E402

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "bc5cdr" / "dev.pubtator"


def build_corpus(folder: Path, n_docs: int, shard_size: int) -> dict[str, Any]:
    """Write ``all.jsonl.gz`` and ``shards/part-NNNN.jsonl.gz`` with ``n_docs`` documents."""
    dev = read_documents(DEV)
    docs = [Document(f"{d.id}-r{i // len(dev)}", d.text)
            for i, d in ((i, dev[i % len(dev)]) for i in range(n_docs))]
    write_documents(folder / "all.jsonl.gz", docs)
    for k, lo in enumerate(range(0, n_docs, shard_size)):
        write_documents(folder / "shards" / f"part-{k:04d}.jsonl.gz", docs[lo:lo + shard_size])
    return {"documents": n_docs, "dev_documents": len(dev), "shard_size": shard_size,
            "shards": -(-n_docs // shard_size),
            "characters": sum(len(d.text) for d in docs)}


def _tree_rss_kib(root: int) -> int:
    """Resident memory of ``root`` and all its descendants, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:  # the process ended meanwhile
            continue
        pid = int(entry)
        children.setdefault(int(fields.get("PPid", "0").strip()), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0])
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


class PeakSampler:
    """Samples the memory of this process tree in a thread; ``peak_mib`` after ``stop``."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval, self.peak_kib = interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, _tree_rss_kib(os.getpid()))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mib(self) -> float:
        return round(self.peak_kib / 1024, 1)


def run_one(mode: str, pipeline: Any, folder: str, workers: int, batch_size: int
            ) -> dict[str, Any]:
    """One measurement (in a fresh process): ``file`` mode with N workers, or ``ray``;
    ``pipeline`` is a :class:`~xlnel.pipeline.SavedPipeline` (folder and ``--set``)."""
    from xlnel.stream import link_file, link_shards

    out = Path(folder) / f"out-{mode}-{workers}"
    t0 = time.perf_counter()
    with PeakSampler() as sampler:
        if mode == "ray":
            results = link_shards(pipeline, Path(folder) / "shards", out, batch_size, workers,
                                  ray_address="local")
            n = sum(r.documents for r in results)
        else:
            n = link_file(pipeline, Path(folder) / "all.jsonl.gz", out / "all.jsonl.gz",
                          batch_size, workers)
    seconds = time.perf_counter() - t0
    return {"mode": mode, "workers": workers, "documents": n, "seconds": round(seconds, 2),
            "documents_per_second": round(n / seconds, 2),
            "peak_tree_rss_mib": sampler.peak_mib}


def load_seconds(pipeline: Any) -> dict[str, Any]:
    """Time to load the pipeline in a fresh process (imports included)."""
    t0 = time.perf_counter()
    pipeline.load()
    return {"load_seconds": round(time.perf_counter() - t0, 2)}


def measure(folder: str, n_docs: int, args: argparse.Namespace) -> dict[str, Any]:
    """All configurations for one pipeline on a fresh corpus of ``n_docs`` documents."""
    from xlnel.config import parse_overrides
    from xlnel.pipeline import SavedPipeline

    pipeline = SavedPipeline.of(folder, parse_overrides(args.set or []))
    with tempfile.TemporaryDirectory(prefix="xlnel-throughput-") as tmp:
        corpus = build_corpus(Path(tmp), n_docs, args.shard_size)
        runs = [run_isolated(load_seconds, pipeline)]
        for workers in args.workers:
            runs.append(run_isolated(run_one, "file", pipeline, tmp, workers, args.batch_size))
            print(runs[-1], flush=True)
        if not args.skip_ray:
            runs.append(run_isolated(run_one, "ray", pipeline, tmp, args.ray_workers,
                                     args.batch_size))
            print(runs[-1], flush=True)
        if args.workers and not args.skip_ray:
            one = Path(tmp) / f"out-file-{args.workers[0]}" / "all.jsonl.gz"
            runs[-1]["same_documents_as_file_mode"] = _same_documents(
                one, Path(tmp) / f"out-ray-{args.ray_workers}")
    return {"pipeline": folder, "overrides": dict(pipeline.overrides), "corpus": corpus,
            "runs": runs}


def _same_documents(single: Path, shard_dir: Path) -> bool:
    """Whether the Ray shard outputs, concatenated in order, equal the single-file output
    (the hidden records beside them, naming their writer, are not outputs)."""
    import gzip

    shards = sorted(shard_dir.glob("[!.]*.jsonl.gz"))
    joined = b"".join(gzip.decompress(p.read_bytes()) for p in shards)
    return joined == gzip.decompress(single.read_bytes())


def _accelerator() -> str | None:
    """The CUDA device that a transformer stage set to ``auto`` would use, if any."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def _worker_counts(text: str) -> list[int]:
    """``"1,2"`` -> [1, 2]; ``"none"`` -> [] (no file-mode run)."""
    return [] if text.strip().lower() == "none" else [int(x) for x in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pipeline", help="Feature (GBDT) filter pipeline folder.")
    ap.add_argument("--documents", type=int, default=50_000)
    ap.add_argument("--transformer-pipeline", help="Transformer-filter pipeline folder.")
    ap.add_argument("--transformer-documents", type=int, default=200)
    ap.add_argument("--workers", type=_worker_counts, default=[1, 2],
                    help="File-mode runs, e.g. 1,2; 'none' runs Ray only (unless --skip-ray).")
    ap.add_argument("--ray-workers", type=int, default=2)
    ap.add_argument("--shard-size", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="Load-time override of the pipelines, as `xlnel link --set` "
                    "(e.g. filter.options.inference_dtype=bfloat16); repeatable.")
    ap.add_argument("--name", type=result_name, default="link_throughput")
    args = ap.parse_args()
    if not args.pipeline and not args.transformer_pipeline:
        ap.error("give --pipeline, --transformer-pipeline or both")
    t0 = time.perf_counter()
    result: dict[str, Any] = {}
    if args.pipeline:
        result["feature_filter"] = measure(args.pipeline, args.documents, args)
    if args.transformer_pipeline:
        result["transformer_filter"] = measure(args.transformer_pipeline,
                                               args.transformer_documents, args)
    result["settings"] = {k: v for k, v in vars(args).items() if k != "name"}
    result["settings"]["omp_num_threads"] = os.environ.get("OMP_NUM_THREADS")
    result["accelerator"] = _accelerator()
    # Throughput on a shared machine says little without the load other jobs put on it.
    result["load_average_1_5_15_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["total_seconds"] = round(time.perf_counter() - t0, 1)
    print(write_result(args.name, result))


if __name__ == "__main__":
    main()
