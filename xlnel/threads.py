"""Threads of the numeric libraries xlnel calls (OpenMP, BLAS, torch), one per process by default.

scikit-learn's gradient boosting, BLAS and torch each start a thread per core. On a shared server,
or in a pool of ``--workers N`` processes, that puts many threads on every core and makes linking
many times slower than one thread would. xlnel therefore limits them itself, to
:data:`DEFAULT_THREADS` per process unless told otherwise:

* :func:`set_threads` sets the limit of this process: the thread pools already loaded (through
  ``threadpoolctl``), torch's intra-op threads when torch is imported, and the environment
  variables (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ...) that libraries loaded later and
  child processes read. ``0`` gives the libraries back their own defaults.
* :func:`ensure_threads` applies the default once; xlnel's entry points (loading or training a
  pipeline, starting workers) call it, so a program that never calls :func:`set_threads` gets
  one thread per process. ``XLNEL_THREADS`` in the environment changes that default.
* :func:`thread_limit` limits a block only, and restores the previous setting afterwards.

xlnel's numba kernels are compiled without ``parallel=True``: each call runs on the calling
thread, and the matcher's own parallelism is ``candidates.workers`` threads, set explicitly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from xlnel.errors import ConfigError

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_THREADS", "THREAD_ENV_VARS", "current_threads", "default_threads",
           "ensure_threads",
           "set_threads", "thread_limit"]

#: Threads per process when neither :func:`set_threads` nor ``XLNEL_THREADS`` says otherwise.
DEFAULT_THREADS = 1

#: Environment variables read by OpenMP and the BLAS libraries when they are loaded.
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                   "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass
class _State:
    """What this process has changed, so that ``set_threads(0)`` can undo it."""

    threads: int | None = None  # None: never applied in this process
    saved_env: dict[str, str | None] = field(default_factory=dict)
    limiter: Any = None  # the threadpoolctl object holding the original limits
    torch_threads: int | None = None


# The thread limit is a property of the process (OpenMP and BLAS keep one setting per process),
# so the record of what xlnel changed lives at module level as well.
_STATE = _State()


def _parse(value: Any, where: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: threads must be a whole number >= 0, got {value!r}") from None
    if n < 0:
        raise ConfigError(f"{where}: threads must be >= 0 (0: the libraries' defaults), got {n}")
    return n


def default_threads() -> int:
    """``XLNEL_THREADS`` when set, else :data:`DEFAULT_THREADS`.

    Raises:
        ConfigError: When ``XLNEL_THREADS`` is not a whole number >= 0.
    """
    value = os.environ.get("XLNEL_THREADS")
    return DEFAULT_THREADS if value in (None, "") else _parse(value, "XLNEL_THREADS")


def current_threads() -> int:
    """The limit in force in this process (the default when none was applied yet)."""
    return default_threads() if _STATE.threads is None else _STATE.threads


def set_threads(n: int) -> None:
    """Limit the numeric libraries of this process to ``n`` threads each; 0 for their defaults.

    Args:
        n: Threads per library (OpenMP, BLAS, torch intra-op); ``0`` undoes xlnel's limits.

    Raises:
        ConfigError: When ``n`` is negative.
    """
    n = _parse(n, "set_threads")
    if n == 0:
        _restore()
    else:
        _limit(n)
    _STATE.threads = n
    logger.info("numeric library threads: %s", n or "library defaults")


def ensure_threads() -> int:
    """Apply the default limit unless this process has a setting already; the limit in force."""
    if _STATE.threads is None:
        set_threads(default_threads())
    return current_threads()


@contextlib.contextmanager
def thread_limit(n: int) -> Iterator[None]:
    """Limit the numeric libraries to ``n`` threads (0: their defaults) inside the block."""
    before = _STATE.threads
    set_threads(n)
    try:
        yield
    finally:
        if before is None:
            set_threads(0)
            _STATE.threads = None
        else:
            set_threads(before)


def _limit(n: int) -> None:
    from threadpoolctl import threadpool_limits

    for var in THREAD_ENV_VARS:
        _STATE.saved_env.setdefault(var, os.environ.get(var))
        os.environ[var] = str(n)
    if _STATE.limiter is None:
        _STATE.limiter = threadpool_limits(limits=n)
    else:
        threadpool_limits(limits=n)
    torch = sys.modules.get("torch")
    if torch is not None:
        if _STATE.torch_threads is None:
            _STATE.torch_threads = torch.get_num_threads()
        torch.set_num_threads(n)


def _restore() -> None:
    for var, value in _STATE.saved_env.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    _STATE.saved_env.clear()
    if _STATE.limiter is not None:
        _STATE.limiter.restore_original_limits()
        _STATE.limiter = None
    torch = sys.modules.get("torch")
    if torch is not None and _STATE.torch_threads is not None:
        torch.set_num_threads(_STATE.torch_threads)
    _STATE.torch_threads = None
