from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.cv_accuracy import BC5CDR
from benchmarks.data_size import SETTINGS
from xlnel.config import load_config

ROOT = Path(__file__).resolve().parent.parent


def _value(config: dict[str, object], key: str) -> object:
    got: object = config
    for part in key.split("."):
        assert isinstance(got, dict)
        got = got.get(part)
    return got


@pytest.mark.parametrize("name", [n for n in SETTINGS if n != "shipped"])
def test_every_setting_changes_the_shipped_config(name: str) -> None:
    overrides, against = SETTINGS[name]
    assert against in SETTINGS
    shipped = load_config(ROOT / BC5CDR).model_dump(mode="json")
    changed = load_config(ROOT / BC5CDR, dict(overrides)).model_dump(mode="json")
    assert any(_value(shipped, k) != v for k, v in overrides.items())
    for key, value in overrides.items():
        assert _value(changed, key) == value, key

