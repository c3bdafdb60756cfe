from __future__ import annotations

import pytest

from xlnel.evaluation.folds import assign_folds, fold_split


def test_every_document_is_in_exactly_one_test_fold():
    docs = [f"d{i}" for i in range(23)]
    tests = [fold_split(docs, 5, f, seed=0)[1] for f in range(5)]
    flat = [d for t in tests for d in t]
    assert sorted(flat) == sorted(docs)
    assert len(flat) == len(set(flat))
    assert sorted(len(t) for t in tests) == [4, 4, 5, 5, 5]


def test_train_and_test_of_a_fold_are_disjoint_and_cover_all():
    docs = list(range(17))
    for f in range(4):
        train, test = fold_split(docs, 4, f, seed=3)
        assert not set(train) & set(test)
        assert sorted(train + test) == docs
        assert train == sorted(train) and test == sorted(test)  # input order kept


def test_folds_are_deterministic_and_follow_the_seed():
    assert assign_folds(50, 5, 0) == assign_folds(50, 5, 0)
    assert assign_folds(50, 5, 0) != assign_folds(50, 5, 1)
    assert sorted(set(assign_folds(50, 5, 7))) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("n, k, fold, message", [
    (10, 1, 0, "at least 2 folds"), (3, 5, 0, "at least 5 documents"),
    (10, 5, 5, r"fold must be in 0\.\.4"), (10, 5, -1, "fold must be"),
])
def test_bad_folds(n, k, fold, message):
    with pytest.raises(ValueError, match=message):
        fold_split(list(range(n)), k, fold, seed=0)


def test_assign_folds_and_crossfit_deal_the_same_folds():
    from xlnel.folds import deal

    fold_of = assign_folds(23, 4, 3)
    assert deal(23, 4, 3) == [[i for i in range(23) if fold_of[i] == j] for j in range(4)]
