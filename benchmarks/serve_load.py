"""Bounded load test of `xlnel serve` on 127.0.0.1: N concurrent clients for a fixed time.

For 1 and 2 worker processes, the default pipeline (English HPO) is served on a free local port
and N clients each POST one text to /link, one request after another, for S seconds: a short
text (one sentence) and a long one (an abstract-sized text made of the shipped sample's
documents). Reported per run: requests/s, latency p50/p95/p99 in milliseconds, failures
(non-200 answers and errors), and the machine's load average before and after, since the
clients share the CPU with the server (and the machine with other work).

    python -m benchmarks serve_load --clients 8 --seconds 10 --workers 1 2

Writes benchmarks/results/serve_load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import numpy as np

from benchmarks._common import write_result

SHORT = "The patient had seizures, hypertension and type 2 diabetes."


def long_text(min_chars: int = 1500) -> str:
    """An abstract-sized text: the shipped sample's documents joined until ``min_chars``."""
    from xlnel.defaults import sample_documents

    parts: list[str] = []
    for doc in sample_documents():
        parts.append(doc.text)
        if sum(len(p) + 1 for p in parts) >= min_chars:
            break
    return " ".join(parts)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(workers: int, timeout: float = 180.0) -> tuple[subprocess.Popen[bytes], str]:
    """`xlnel serve default` on a free port of 127.0.0.1, once /health answers."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "xlnel.cli.main", "serve", "default",
                             "--host", "127.0.0.1", "--port", str(port), "--workers",
                             str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}"
                               if proc.stderr else "server exited")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.terminate()
    raise RuntimeError(f"server on {url} did not answer /health in {timeout} s")


async def _client(http: httpx.AsyncClient, url: str, text: str, stop: float,
                  latencies: list[float], failures: list[str]) -> None:
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        try:
            r = await http.post(f"{url}/link", json={"text": text})
            if r.status_code == 200:
                latencies.append(time.perf_counter() - t0)
            else:
                failures.append(f"HTTP {r.status_code}")
        except httpx.HTTPError as exc:
            failures.append(type(exc).__name__)


async def load(url: str, text: str, clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` concurrent clients posting ``text`` for ``seconds``; the figures."""
    latencies: list[float] = []
    failures: list[str] = []
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        await http.post(f"{url}/link", json={"text": text})  # warm-up, not counted
        load_before = os.getloadavg()
        t0 = time.perf_counter()
        stop = t0 + seconds
        await asyncio.gather(*(_client(http, url, text, stop, latencies, failures)
                               for _ in range(clients)))
        elapsed = time.perf_counter() - t0
    ms = np.asarray(latencies) * 1000
    pct = (lambda q: round(float(np.percentile(ms, q)), 1)) if ms.size else (lambda q: None)
    return {"requests": len(latencies), "failures": len(failures),
            "failure_kinds": sorted(set(failures)), "seconds": round(elapsed, 2),
            "requests_per_s": round(len(latencies) / elapsed, 2),
            "latency_ms": {"p50": pct(50), "p95": pct(95), "p99": pct(99)},
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default="serve_load")
    args = parser.parse_args()
    texts = {"short": SHORT, "long": long_text()}
    runs = []
    for workers in args.workers:
        proc, url = start_server(workers)
        try:
            for kind, text in texts.items():
                result = asyncio.run(load(url, text, args.clients, args.seconds))
                runs.append({"workers": workers, "text": kind, "chars": len(text), **result})
                print(f"workers={workers} {kind}: {result['requests_per_s']} req/s, "
                      f"p50 {result['latency_ms']['p50']} ms, failures {result['failures']}",
                      file=sys.stderr)
        finally:
            proc.terminate()
            proc.wait(30)
    path = write_result(args.out, {
        "what": "xlnel serve default on 127.0.0.1: concurrent clients POST /link one text each, "
                "one request after another, for a fixed time; clients and server share the CPU",
        "clients": args.clients, "seconds_per_run": args.seconds, "runs": runs})
    print(path, file=sys.stderr)


if __name__ == "__main__":
    main()
