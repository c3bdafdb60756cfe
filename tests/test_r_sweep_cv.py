from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import r_sweep_cv


def test_set_overrides_reach_every_r_and_cannot_name_r(monkeypatch, tmp_path: Path) -> None:
    seen: list[Any] = []

    def fake_sweep(community, values, folds, work, cache, overrides=None):  # noqa: ANN001
        seen.append((community, values, overrides))
        return {}

    written: dict[str, Any] = {}
    monkeypatch.setattr(r_sweep_cv, "sweep", fake_sweep)
    monkeypatch.setattr(r_sweep_cv, "write_result",
                        lambda name, payload: written.update(name=name, **payload))
    r_sweep_cv.main(["diabetes", "--R", "0,0.3", "--set", "data.max_documents=50", "--set",
                     "data.extra_train=[]", "--out", "r_sweep_cv_test"])
    overrides = {"data.max_documents": 50, "data.extra_train": []}
    assert seen == [("diabetes", [0.0, 0.3], overrides)]
    assert written["name"] == "r_sweep_cv_test" and written["overrides"] == overrides
    for bad in (["--set", "dft.R=0.2"], ["--set", "no-equals-sign"]):
        with pytest.raises(SystemExit):
            r_sweep_cv.main(["diabetes", *bad])
    assert len(seen) == 1
