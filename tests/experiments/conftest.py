from __future__ import annotations

from collections.abc import Iterator

import pytest
import sklearn.ensemble  # noqa: F401  (loads OpenMP, so that threadpool_limits can reach it)
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _one_openmp_thread() -> Iterator[None]:
    """The GBDT's OpenMP threads only fight each other on a small shared machine."""
    with threadpool_limits(1):
        yield
