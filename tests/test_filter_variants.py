"""The command line of benchmarks/filter_variants.py: which BC5CDR config its variants change."""

from __future__ import annotations

from benchmarks.cv_accuracy import BC5CDR, BC5CDR_DEV
from benchmarks.filter_variants import VARIANTS, _parser


def test_variants_change_the_shipped_config_unless_told_another() -> None:
    args = _parser().parse_args(["concepts"])
    assert (args.variants, BC5CDR_DEV[args.config]) == (["concepts"], BC5CDR)
    args = _parser().parse_args(["--config", "bc5cdr-mesh", "kinds"])
    assert BC5CDR_DEV[args.config] == "configs/bc5cdr-mesh.yaml"
    assert set(_parser().parse_args([]).variants) == set(VARIANTS) - {"shipped"}
