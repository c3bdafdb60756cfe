from __future__ import annotations

from benchmarks.decision_variants import VARIANTS, cells


def test_bc5cdr_train_cells_never_read_dev() -> None:
    configs = cells("bc5cdr-train")
    assert [c.data.fold for c in configs] == [0, 1, 2, 3, 4]
    assert all(c.data.test is None and c.data.folds == 5 for c in configs)
    assert {c.data.train for c in configs} == {cells("bc5cdr")[0].data.train}
    # the shipped decisions are those of the BC5CDR config, not of a cell's own
    assert all(c.linker == cells("bc5cdr")[0].linker for c in configs)


def test_camoni_cells_are_the_five_folds() -> None:
    assert [c.data.fold for c in cells("diabetes")] == [0, 1, 2, 3, 4]


def test_shipped_is_a_variant() -> None:
    assert "shipped" in VARIANTS and "no-lexicon" in VARIANTS
