"""The development rows of benchmarks/hybrid_weight.py: never the rows adapt_new_language scores."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.adapt_new_language import by_cosine, sample_rows
from benchmarks.hybrid_weight import dev_rows
from xlnel.analysis.gold import GoldItem


def _args(**over: object) -> argparse.Namespace:
    values = {"limit": 5, "whole_up_to": 10, "seed": 0, "dev_rows": 4, "dev_seed": 1, **over}
    return argparse.Namespace(**values)


def test_dev_rows_leave_out_the_scored_rows() -> None:
    rows = [GoldItem(f"t{i}", (f"C{i}",)) for i in range(30)]
    scored = {id(r) for r in sample_rows(rows, 5, 0, 10)}
    dev = dev_rows(rows, _args())
    assert len(dev) == 4 and not scored & {id(r) for r in dev}
    assert [r.text for r in dev] == [r.text for r in dev_rows(rows, _args())]  # seeded
    assert len(dev_rows(rows, _args(dev_rows=100))) == 25  # at most the rows left


def test_a_language_scored_whole_has_no_dev_rows() -> None:
    rows = [GoldItem(f"t{i}", (f"C{i}",)) for i in range(8)]  # at most whole_up_to: all scored
    with pytest.raises(SystemExit, match="no development rows"):
        dev_rows(rows, _args())


def test_by_cosine_ranks_best_first_keeping_ties_in_order() -> None:
    assert by_cosine({"a": 0.5, "b": 0.9, "c": 0.5}) == ["b", "a", "c"]
