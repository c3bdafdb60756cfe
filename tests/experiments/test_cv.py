from __future__ import annotations

import json
from dataclasses import replace

import pytest

from xlnel.config import load_config
from xlnel.errors import ConfigError
from xlnel.evaluation import bootstrap_counts
from xlnel.experiments import format_summary, parse_grid, read_runs, run_experiment, summarize
from xlnel.experiments.runner import plan_cells, score_levels
from xlnel.experiments.summary import pooled_counts, t_interval
from xlnel.io import read_documents


def test_t_interval_hand_worked():
    # mean 0.7, sd sqrt(0.025 / 4) = 0.0790569, se = sd / sqrt(5) = 0.0353553,
    # t(0.975, 4) = 2.7764451, half-width 0.0981622.
    mean, low, high = t_interval([0.6, 0.7, 0.8, 0.65, 0.75])
    assert mean == pytest.approx(0.7)
    assert (low, high) == (pytest.approx(0.7 - 0.0981622), pytest.approx(0.7 + 0.0981622))
    # Two folds: se = 0.1, t(0.975, 1) = 12.7062047.
    assert t_interval([0.5, 0.7])[1:] == (pytest.approx(0.6 - 1.27062047),
                                          pytest.approx(0.6 + 1.27062047))
    assert t_interval([0.4, 0.4, 0.4]) == pytest.approx((0.4, 0.4, 0.4))
    with pytest.raises(ValueError, match="at least 2"):
        t_interval([0.5])


def _fold_record(seed: int, fold: int, f1: float, ids: list[str], counts: list[list[int]]
                 ) -> dict:
    return {"cell": f"seed={seed}|fold={fold}/3", "axes": {}, "seed": seed, "fold": fold,
            "folds": 3, "metrics": {"span": {"f1": f1},
                                    "hrm": {"span": {"recall": 1.0, "found": 2, "total": 2}}},
            "dictionary_entries_added": 4,
            "per_document": {"ids": ids, "counts": {"span": counts}}}


def test_cv_summary_golden():
    records = [
        _fold_record(0, 0, 0.5, ["a"], [[1, 1, 0]]),
        _fold_record(0, 1, 0.7, ["b"], [[2, 0, 1]]),
        _fold_record(0, 2, 0.9, ["c", "d"], [[1, 0, 0], [0, 1, 0]]),
        _fold_record(1, 0, 0.7, ["a"], [[0, 1, 1]]),
        _fold_record(1, 1, 0.7, ["b"], [[3, 0, 0]]),
        _fold_record(1, 2, 0.9, ["c", "d"], [[1, 0, 0], [0, 0, 0]]),
    ]
    (row,) = summarize(records)
    assert (row["folds"], row["seeds"], row["runs"]) == (3, 2, 6)
    f1 = row["span_f1"]
    # Seed-averaged fold scores 0.6, 0.7, 0.9: mean 0.7333, sd 0.152753, se 0.0881917,
    # t(0.975, 2) = 4.3026527, half-width 0.3794583.
    assert f1["per_fold"] == pytest.approx([0.6, 0.7, 0.9])
    assert f1["mean"] == pytest.approx(0.7333333)
    assert f1["ci_low"] == pytest.approx(0.7333333 - 0.3794583)
    assert f1["ci_high"] == pytest.approx(0.7333333 + 0.3794583)
    # Pooled: tp 8, fp 3, fn 2 summed over both seeds -> P 8/11, R 8/10.
    ids, counts = pooled_counts(records, "span")
    assert ids == ["a", "b", "c", "d"]
    assert counts.tolist() == [[1, 2, 1], [5, 0, 1], [2, 0, 0], [0, 1, 0]]
    pooled = row["pooled"]["span"]
    assert (pooled["tp"], pooled["fp"], pooled["fn"], pooled["documents"]) == (8, 3, 2, 4)
    assert pooled["precision"] == pytest.approx(8 / 11)
    assert pooled["f1"] == pytest.approx(2 * 8 / (2 * 8 + 3 + 2))
    assert row["pooled"]["hrm"] == {"span": 1.0}
    ci = pooled["ci"]
    assert ci == bootstrap_counts(counts, 1000, 0, 0.95).to_dict()
    assert ci["n_documents"] == 4 and ci["f1"][0] <= pooled["f1"] <= ci["f1"][1]
    table = format_summary([row])
    assert "0.7333 ± 0.3795" in table and "95%" in table


def test_fold_keys_are_not_grid_axes_nor_overrides(tiny_config):
    with pytest.raises(ConfigError, match="set by --folds"):
        parse_grid(["data.fold=0,1"])
    with pytest.raises(ConfigError, match="set by folds"):
        plan_cells(tiny_config, {}, [0], {"data.fold": 1}, folds=3)
    with pytest.raises(ConfigError, match="at least 2 folds"):
        plan_cells(tiny_config, {}, [0], folds=1)
    with pytest.raises(ConfigError, match="data.fold must be below"):
        load_config(tiny_config, {"data.folds": 3, "data.fold": 3})


def test_cross_validation_end_to_end(tmp_path, tiny_config, tiny_docs):
    records = run_experiment(tiny_config, {"dft.R": [0.2]}, 1, tmp_path / "out", folds=3,
                             cache_dir=tmp_path / "cache")
    assert [r["cell"] for r in records] == [f"dft.R=0.2|seed=0|fold={f}/3" for f in range(3)]
    all_ids = [d.id for d in read_documents(tiny_docs)]
    tested = [i for r in records for i in r["per_document"]["ids"]]
    # Every document of data.train scored once (test_fraction is not used), 8 per fold.
    assert sorted(tested) == sorted(all_ids)
    assert [(r["test_documents"], r["train_documents"]) for r in records] == [(8, 16)] * 3
    assert records[0]["config"]["data"]["folds"] == 3
    (row,) = summarize(records)
    assert row["folds"] == 3 and row["span_f1"]["ci_low"] is not None
    pooled = row["pooled"]["span"]
    assert pooled["documents"] == 24
    assert pooled["tp"] == sum(r["metrics"]["span"]["tp"] for r in records)
    assert set(row["pooled"]) >= {"span", "overlap", "concept", "document", "hrm"}
    assert row["pooled"]["span"]["ci"]["n_documents"] == 24
    assert "pooled out-of-fold" in format_summary(summarize(records))


def test_nothing_learnt_sees_the_test_fold(tmp_path, tiny_config, monkeypatch):
    """DFT and the filter (with its own threshold selection) only get training-fold
    documents."""
    import xlnel.training.steps as steps
    from xlnel.filtering.gbdt import GradientBoostingFilter

    seen: dict[str, list[str]] = {}
    real_dft, real_fit = steps.fine_tune_dictionary, GradientBoostingFilter.fit

    def spy_dft(dictionary, docs, *args, **kwargs):
        seen["dft"] = [d.id for d in docs]
        return real_dft(dictionary, docs, *args, **kwargs)

    def spy_fit(self, docs, *args, **kwargs):
        seen["filter"] = [d.id for d in docs]
        return real_fit(self, docs, *args, **kwargs)

    def check(record: dict) -> None:
        test = set(record["per_document"]["ids"])
        assert len(seen.pop("dft")) == 16 and len(filt := seen.pop("filter")) == 8
        assert not test & set(filt)
        checked.append(record["fold"])

    monkeypatch.setattr(steps, "fine_tune_dictionary", spy_dft)
    monkeypatch.setattr(GradientBoostingFilter, "fit", spy_fit)
    checked: list[int] = []
    run_experiment(tiny_config, {}, 1, tmp_path / "out", overrides={"dft.R": 0.5}, folds=3,
                   on_cell=check)
    assert checked == [0, 1, 2]


def test_an_interrupted_cross_validation_resumes_at_the_missing_fold(tmp_path, tiny_config):
    out, cache = tmp_path / "out", tmp_path / "cache"
    records = run_experiment(tiny_config, {}, 1, out, folds=3, cache_dir=cache)
    runs = out / "runs.jsonl"
    lines = runs.read_text(encoding="utf-8").splitlines()
    runs.write_text(lines[0] + "\n" + lines[1][:50], encoding="utf-8")  # crash in fold 1
    assert [r["fold"] for r in read_runs(runs)] == [0]
    new: list[dict] = []
    again = run_experiment(tiny_config, {}, 1, out, folds=3, cache_dir=tmp_path / "c2",
                           on_cell=new.append)
    assert [r["fold"] for r in new] == [1, 2]
    assert [r["cell"] for r in again] == [r["cell"] for r in records]
    assert [r["metrics"] for r in again] == [r["metrics"] for r in records]
    assert all(json.loads(x)["fold"] == i
               for i, x in enumerate(runs.read_text(encoding="utf-8").splitlines()))


def test_levels_recorded(tiny_docs):
    docs = read_documents(tiny_docs)
    en, he = load_config(None, {"lang": "en"}), load_config(None, {"lang": "he"})
    assert score_levels(en, docs) == ["span", "overlap", "concept", "document"]
    assert score_levels(he, docs) == ["span", "overlap", "span-prefix", "concept", "document"]
    assert score_levels(he, []) == ["span", "overlap", "span-prefix"]
    # "iw", the older code of Hebrew, takes the Hebrew rules everywhere else too
    assert score_levels(load_config(None, {"lang": "iw"}), []) == score_levels(he, [])
    assert score_levels(en, docs, typed=True) == ["span", "overlap", "concept", "document",
                                                  "span+type", "concept+type"]
    untyped = [d.__class__(d.id, d.text, tuple(replace(e, type=None) for e in d.entities))
               for d in docs]
    assert score_levels(en, untyped, typed=True) == ["span", "overlap", "concept", "document"]
    no_ids = [d.__class__(d.id, d.text, tuple(replace(e, concept_ids=()) for e in d.entities))
              for d in docs]
    assert score_levels(en, no_ids, typed=True) == ["span", "overlap", "span+type"]


def test_cells_type_their_links_as_a_trained_pipeline_does(tmp_path, tiny_config):
    records = run_experiment(tiny_config, {"linker.entity_types": [True, False]}, 1,
                             tmp_path / "out", cache_dir=tmp_path / "cache")
    typed, untyped = (r["metrics"] for r in records)
    # one type in the fixture corpus: typing changes nothing but adds the typed levels
    assert typed["span+type"] == typed["span"] and typed["concept+type"] == typed["concept"]
    assert "span+type" not in untyped and untyped["span"] == typed["span"]


def test_folds_split_between_processes_resume_as_one_run(tmp_path, tiny_config):
    """Folds run apart (--fold-ids), their runs.jsonl concatenated, give the same records as
    one run of every fold, and the gathering run trains nothing."""
    whole = run_experiment(tiny_config, {}, 1, tmp_path / "whole", folds=3,
                           cache_dir=tmp_path / "c0")
    parts = [run_experiment(tiny_config, {}, 1, tmp_path / f"p{i}", folds=3, fold_ids=ids,
                            cache_dir=tmp_path / f"c{i + 1}")
             for i, ids in enumerate(([2, 0], [1]))]
    assert [[r["fold"] for r in p] for p in parts] == [[0, 2], [1]]
    gathered = tmp_path / "gathered"
    gathered.mkdir()
    (gathered / "runs.jsonl").write_text(
        "".join((tmp_path / f"p{i}" / "runs.jsonl").read_text(encoding="utf-8")
                for i in range(2)), encoding="utf-8")
    new: list[dict] = []
    again = run_experiment(tiny_config, {}, 1, gathered, folds=3, cache_dir=tmp_path / "c3",
                           on_cell=new.append)
    assert new == []
    assert [r["cell"] for r in again] == [r["cell"] for r in whole]
    assert [r["metrics"] for r in again] == [r["metrics"] for r in whole]


def test_fold_ids_are_checked(tmp_path, tiny_config):
    for ids, folds, match in (([0], None, "need folds"), ([3], 3, "among 0..2"),
                              ([1, 1], 3, "distinct"), ([], 3, "distinct")):
        with pytest.raises(ConfigError, match=match):
            run_experiment(tiny_config, {}, 1, tmp_path / "out", folds=folds, fold_ids=ids)
    assert not (tmp_path / "out").exists()
