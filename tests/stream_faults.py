"""Fault injection for sharded linking, shared by ``tests/test_stream_faults.py`` and
``benchmarks/fault_injection.py``: kill a worker of ``xlnel link --shards --workers N`` while it
links a shard, run the command again, and compare with an uninterrupted run.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class FaultRun:
    """What one kill-and-rerun did.

    Attributes:
        killed: A worker process was killed while a shard's temporary output existed.
        first_exit: Exit code of the interrupted command (non-zero when the kill hit).
        identical: Every output equals the uninterrupted run's, byte for byte.
        stale: Temporary files left in the output folder after the rerun.
        seconds: Wall time of both commands.
    """

    killed: bool
    first_exit: int
    identical: bool
    stale: tuple[str, ...]
    seconds: float


def link_command(pipeline: Path, source: Path, out: Path, workers: int,
                 batch_size: int) -> list[str]:
    return [sys.executable, "-m", "xlnel.cli.main", "link", str(pipeline), str(source),
            "--shards", "--out", str(out), "--workers", str(workers),
            "--batch-size", str(batch_size)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces: the fields after its closing bracket are fixed
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def _is_pool_worker(pid: int) -> bool:
    """A spawned pool worker, not multiprocessing's resource tracker (also a child)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in cmdline and b"resource_tracker" not in cmdline


def _temporaries(out: Path) -> list[Path]:
    return sorted(out.glob(".*.tmp")) if out.is_dir() else []


def kill_worker_mid_shard(proc: subprocess.Popen[bytes], out: Path, rng: random.Random,
                          timeout: float, max_delay: float = 0.5) -> bool:
    """Wait until a shard's temporary output holds data, then SIGKILL one worker at random.

    Returns:
        Whether a worker was killed (False when the command finished first).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.stat().st_size > 0 for p in _temporaries(out) if p.exists()):
            time.sleep(rng.uniform(0.0, max_delay))  # a random moment inside the shard
            workers = [p for p in children(proc.pid) if _is_pool_worker(p)]
            if workers and proc.poll() is None:
                os.kill(rng.choice(workers), signal.SIGKILL)
                return True
        time.sleep(0.05)
    return False


def kill_and_rerun(pipeline: Path, source: Path, out: Path, reference: Path, workers: int,
                   batch_size: int, rng: random.Random, timeout: float = 300.0,
                   max_delay: float = 0.5) -> FaultRun:
    """One fault-injection round (see the module docstring); ``reference`` holds the outputs
    of an uninterrupted run."""
    t0 = time.perf_counter()
    cmd = link_command(pipeline, source, out, workers, batch_size)
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        killed = kill_worker_mid_shard(proc, out, rng, timeout, max_delay)
        first_exit = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    subprocess.run(cmd, env=_env(), check=True, capture_output=True, timeout=timeout)
    expected = {p.name: p.read_bytes() for p in reference.iterdir() if not p.name.startswith(".")}
    got = {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}
    return FaultRun(killed, first_exit, got == expected,
                    tuple(p.name for p in _temporaries(out)),
                    round(time.perf_counter() - t0, 2))
