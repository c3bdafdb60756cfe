"""Thread limits of the numeric libraries: set, restore, default, CLI option, workers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info
from typer.testing import CliRunner

import xlnel
from xlnel import threads as threads_module
from xlnel.cli.main import app
from xlnel.errors import ConfigError
from xlnel.pipeline import SavedPipeline
from xlnel.pool import _init_worker
from xlnel.threads import THREAD_ENV_VARS, current_threads, ensure_threads, set_threads


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no xlnel limit applied; the previous state comes back after."""
    before = threads_module._STATE.threads
    set_threads(0)
    threads_module._STATE.threads = None
    monkeypatch.delenv("XLNEL_THREADS", raising=False)
    yield
    set_threads(0)
    if before is not None:
        set_threads(before)
    threads_module._STATE.threads = before


def _pool_threads() -> set[int]:
    np.ones((4, 4)) @ np.ones((4, 4))  # make sure BLAS is loaded
    return {int(info["num_threads"]) for info in threadpool_info()}


def test_set_threads_limits_pools_and_environment() -> None:
    set_threads(1)
    assert _pool_threads() == {1}
    assert all(os.environ[var] == "1" for var in THREAD_ENV_VARS)
    assert current_threads() == 1


def test_zero_restores_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    set_threads(2)
    assert os.environ["OMP_NUM_THREADS"] == "2"
    set_threads(0)
    assert os.environ["OMP_NUM_THREADS"] == "7"
    assert "MKL_NUM_THREADS" not in os.environ
    assert current_threads() == 0


def test_context_manager_restores_previous_setting() -> None:
    set_threads(1)
    with xlnel.thread_limit(2):
        assert current_threads() == 2
        assert os.environ["OMP_NUM_THREADS"] == "2"
    assert current_threads() == 1
    assert os.environ["OMP_NUM_THREADS"] == "1"


def test_ensure_threads_applies_default_once(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ensure_threads() == 1
    assert _pool_threads() == {1}
    set_threads(3)
    assert ensure_threads() == 3  # an explicit setting is kept


def test_environment_changes_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLNEL_THREADS", "2")
    assert ensure_threads() == 2
    monkeypatch.setenv("XLNEL_THREADS", "many")
    threads_module._STATE.threads = None
    with pytest.raises(ConfigError, match="XLNEL_THREADS.*'many'"):
        ensure_threads()


@pytest.mark.parametrize("bad", [-1, "x", None])
def test_bad_values_raise(bad: object) -> None:
    with pytest.raises(ConfigError):
        set_threads(bad)  # type: ignore[arg-type]


def test_cli_option_sets_threads() -> None:
    result = CliRunner().invoke(app, ["--threads", "2", "models", "list"])
    assert result.exit_code == 0, result.output
    assert current_threads() == 2
    result = CliRunner().invoke(app, ["models", "list"])
    assert result.exit_code == 0
    assert current_threads() == 1


def test_worker_initializer_takes_parents_setting(tmp_path: Path) -> None:
    _init_worker(SavedPipeline(str(tmp_path / "missing")), 3)  # the load fails, kept for later
    assert current_threads() == 3
