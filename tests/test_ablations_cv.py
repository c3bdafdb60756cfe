from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks._common import pooled_hrm
from benchmarks.ablations_cv import SETTINGS
from benchmarks.cv_accuracy import CAMONI
from xlnel.config import load_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", [n for n in SETTINGS if n != "shipped"])
def test_every_setting_changes_the_shipped_configs(name: str) -> None:
    _, overrides = SETTINGS[name]
    for path in CAMONI.values():
        shipped = load_config(ROOT / path).model_dump(mode="json")
        changed = load_config(ROOT / path, dict(overrides)).model_dump(mode="json")
        for key, value in overrides.items():
            section, *rest = key.split(".")
            got, before = changed[section], shipped[section]
            for part in rest:
                got, before = got[part], before.get(part)
            assert got == value and before != value, (path, key)


def test_hrm_span_recall_pools_the_folds() -> None:
    def record(found: int, total: int) -> dict[str, object]:
        return {"metrics": {"hrm": {"span": {"found": found, "total": total,
                                             "candidates": 10}}}}

    got = pooled_hrm([record(9, 10), record(1, 10)], "span")
    assert got == {"recall": 0.5, "found": 10, "total": 20, "candidates": 20}
    assert pooled_hrm([], "span")["recall"] == 0.0
