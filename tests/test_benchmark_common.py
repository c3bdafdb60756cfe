"""The helpers every benchmark shares (benchmarks/_common.py): the paired comparison each
variant benchmark writes, on hand-worked counts, and the argument and file readers."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from benchmarks._common import (
    counts_by_document,
    level_counts,
    one_of,
    paired_scores,
    read_times,
    scores_with_ci,
)


def test_paired_scores_scores_the_variant_and_its_delta() -> None:
    # shipped: tp 1, fp 1, fn 1 -> P = R = F1 = 0.5; variant: tp 2, fp 0, fn 0 -> F1 = 1.
    shipped = np.array([[1, 1, 0], [0, 0, 1]])
    variant = np.array([[1, 0, 0], [1, 0, 0]])
    got = paired_scores(shipped, variant)
    assert got["f1"] == pytest.approx(1.0)
    assert got["delta_f1"] == pytest.approx(0.5)
    assert got["f1_ci"] == pytest.approx([1.0, 1.0])


def test_paired_scores_with_itself_has_no_delta() -> None:
    counts = np.array([[2, 1, 0], [1, 0, 2], [0, 1, 1]])
    got = paired_scores(counts, counts)
    assert got["delta_f1"] == 0.0
    assert got["delta_f1_ci"] == [0.0, 0.0]
    assert got["p"] == pytest.approx(1.0)


def test_counts_by_document_pairs_runs_whose_folds_differ() -> None:
    # two runs over documents a, b, c, listed in other orders by their folds
    one = [{"per_document": {"ids": ["b", "a"], "counts": {"span": [[1, 0, 0], [0, 1, 0]]}}},
           {"per_document": {"ids": ["c"], "counts": {"span": [[0, 0, 1]]}}}]
    two = [{"per_document": {"ids": ["c", "a", "b"],
                             "counts": {"span": [[1, 0, 0], [2, 0, 0], [0, 0, 0]]}}}]
    assert counts_by_document(one, "span").tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    assert counts_by_document(two, "span").tolist() == [[2, 0, 0], [0, 0, 0], [1, 0, 0]]
    with pytest.raises(ValueError, match="per-document counts of the overlap level"):
        counts_by_document(one, "overlap")
    assert scores_with_ci(np.array([[1, 1, 0], [0, 0, 1]]))["f1"] == pytest.approx(0.5)


def test_one_of_keeps_the_default_of_an_empty_positional_list() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*", default=["a", "b"], type=one_of(["a", "b", "c"]))
    assert parser.parse_args([]).names == ["a", "b"]
    assert parser.parse_args(["c", "a"]).names == ["c", "a"]
    with pytest.raises(SystemExit):
        parser.parse_args(["d"])


def test_level_counts_pools_each_level_and_names_the_run_lacking_one(tmp_path: Path) -> None:
    def record(doc: str, tp: int) -> dict[str, object]:
        return {"per_document": {"ids": [doc], "counts": {"span": [[tp, 0, 1]]}}}

    got = level_counts([record("a", 1), record("b", 2)], ["span"], tmp_path)
    ids, counts = got["span"]
    assert list(ids) == ["a", "b"] and np.asarray(counts)[:, 0].tolist() == [1, 2]
    with pytest.raises(ValueError, match="runs.jsonl.*document"):
        level_counts([record("a", 1)], ["document"], tmp_path)


def test_read_times_reads_the_runs_and_names_a_bad_line(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="times.txt"):
        read_times(tmp_path)
    (tmp_path / "times.txt").write_text("diabetes train_s=12.34 link_s=5\n\nbc5cdr train_s=7\n")
    assert read_times(tmp_path) == {"diabetes": {"train_s": 12.3, "link_s": 5.0},
                                    "bc5cdr": {"train_s": 7.0}}
    (tmp_path / "times.txt").write_text("diabetes train_s=1\nsclerosis train_s\n")
    with pytest.raises(ValueError, match=r"times.txt:2: .*sclerosis train_s"):
        read_times(tmp_path)
