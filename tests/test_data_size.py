from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks._common import pooled_hrm
from benchmarks.cv_accuracy import CAMONI
from benchmarks.data_size import (
    curve,
    curve_points,
    own_documents,
    series_of,
    settings_of,
    summarize_draws,
)
from xlnel.config import load_config

ROOT = Path(__file__).resolve().parent.parent


def _value(config: dict[str, object], key: str) -> object:
    got: object = config
    for part in key.split("."):
        assert isinstance(got, dict)
        got = got.get(part)
    return got


@pytest.mark.parametrize("corpus", ["bc5cdr", *CAMONI])
def test_every_setting_changes_the_shipped_config(corpus: str) -> None:
    config, settings, _ = settings_of(corpus, (1, 2))
    shipped = load_config(ROOT / config).model_dump(mode="json")
    for name, (overrides, against) in settings.items():
        assert against in settings and settings[against][1] in (against, "shipped"), name
        if name == "shipped":
            continue
        changed = load_config(ROOT / config, dict(overrides)).model_dump(mode="json")
        assert any(_value(shipped, k) != v for k, v in overrides.items()), name
        for key, value in overrides.items():
            assert _value(changed, key) == value, (name, key)


def test_a_paired_setting_differs_from_its_pair_by_its_own_overrides_only() -> None:
    for corpus in ["bc5cdr", "diabetes"]:
        _, settings, _ = settings_of(corpus, (1,))
        for name, (overrides, against) in settings.items():
            base = settings[against][0]
            assert all(overrides.get(k) == v for k, v in base.items()), (corpus, name)


def test_hrm_recall_pools_the_records() -> None:
    def record(found: int, total: int) -> dict[str, object]:
        return {"metrics": {"hrm": {"span": {"found": found, "total": total,
                                             "candidates": 10}}}}

    assert pooled_hrm([record(9, 10), record(1, 10)], "span")["recall"] == 0.5
    assert pooled_hrm([], "span")["recall"] == 0.0


def test_curve_gives_the_f1_gained_per_doubling_of_own_documents() -> None:
    def entry(docs: float, f1: float) -> dict[str, object]:
        return {"training_documents_mean": docs, "span": {"f1": f1}}

    settings = {"shipped": ({}, "shipped"), "own": ({"data.extra_train": []}, "shipped"),
                "own-posts-25": ({"data.max_documents": 25, "data.extra_train": []}, "own"),
                "posts-25": ({"data.max_documents": 25}, "shipped")}
    entries = {"shipped": entry(500.0, 0.7), "own": entry(100.0, 0.6),
               "own-posts-25": entry(25.0, 0.5), "posts-25": entry(425.0, 0.65)}
    own = {name: own_documents(name, settings, entries) for name in settings}
    assert own == {"shipped": 100.0, "own": 100.0, "own-posts-25": 25.0, "posts-25": 25.0}
    for name in entries:
        entries[name]["own_documents_mean"] = own[name]
    got = curve(entries, ["own", "own-posts-25"], "span")
    assert got["points"] == [[25.0, 0.5], [100.0, 0.6]]
    assert got["f1_per_doubling"] == pytest.approx(0.05)  # 0.1 over two doublings
    assert curve(entries, ["own"], "span")["f1_per_doubling"] == 0.0


def test_draws_replicate_every_curve_point_and_pair_like_it() -> None:
    _, settings, _ = settings_of("diabetes", (3,))
    assert curve_points("camoni") == ["posts-25", "posts-50", "posts-100", "own-posts-25",
                                      "own-posts-50", "own-posts-100"]
    assert settings["posts-25-seed3"] == ({"data.max_documents": 25, "data.subset_seed": 3},
                                          "shipped")
    assert settings["own-posts-50-seed3"][1] == "own"
    assert "own-seed3" not in settings and "shipped-seed3" not in settings
    _, bc5, _ = settings_of("bc5cdr", (3,))
    assert "docs-166-share-seed3" not in bc5 and "docs-166-seed3" in bc5
    assert series_of("camoni", (3,))["own-only-seed3"] == [
        "own", "own-posts-25-seed3", "own-posts-50-seed3", "own-posts-100-seed3"]
    assert settings_of("diabetes")[1] == settings_of("diabetes", ())[1]
    assert not any("seed" in n for n in settings_of("diabetes")[1])


def test_summarize_draws_spreads_f1_and_slopes_over_the_draws() -> None:
    seeds = (1, 2)
    f1 = {"posts-25": 0.60, "posts-25-seed1": 0.62, "posts-25-seed2": 0.55}
    out: dict[str, Any] = {n: {"span": {"f1": f1.get(n, 0.5)}}
                           for n in settings_of("diabetes", seeds)[1]}
    out["curves"] = {s: {"span": {"f1_per_doubling": slope}}
                     for s, slope in [("with-others", 0.02), ("with-others-seed1", 0.01),
                                      ("with-others-seed2", 0.03), ("own-only", 0.05),
                                      ("own-only-seed1", 0.05), ("own-only-seed2", 0.05)]}
    summarize_draws(out, "camoni", seeds, ("span",))
    got = out["posts-25"]["draws"]
    assert got["subset_seeds"] == [None, 1, 2]
    assert got["span"]["values"] == [0.60, 0.62, 0.55]
    assert got["span"]["mean"] == pytest.approx(0.59)
    assert (got["span"]["min"], got["span"]["max"]) == (0.55, 0.62)
    assert "draws" not in out["posts-25-seed1"] and "draws" not in out["shipped"]
    slopes = out["curves_draws"]["with-others"]["span"]
    assert slopes["mean"] == pytest.approx(0.02) and slopes["max"] == 0.03
    assert set(out["curves_draws"]) == {"with-others", "own-only"}
