from __future__ import annotations

import json

import pytest

from xlnel.experiments.report import best_point, report
from xlnel.experiments.runner import Cell


def _write_runs(folder, f1_by_r):
    folder.mkdir(parents=True)
    lines = []
    for r, f1s in f1_by_r.items():
        for seed, f1 in enumerate(f1s):
            lines.append({"cell": Cell((("dft.R", r),), seed).id, "axes": {"dft.R": r},
                          "seed": seed, "dictionary_entries_added": int(100 * r),
                          "dft": {"concepts_added": int(80 * r)},
                          "metrics": {"span": {"f1": f1}, "concept": {"f1": f1 / 2},
                                      "hrm": {"span": {"recall": 0.9 + r / 10},
                                              "concept": {"recall": 0.5 + r}}},
                          "seconds": {"total": 2.0}})
    (folder / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_report_writes_figures_and_markdown(tmp_path):
    _write_runs(tmp_path / "diabetes", {0.0: [0.6, 0.62], 0.2: [0.7, 0.72], 0.4: [0.65, 0.6]})
    _write_runs(tmp_path / "sclerosis", {0.0: [0.5], 0.2: [0.55]})
    files = report([tmp_path / "diabetes", tmp_path / "sclerosis"], tmp_path / "rep")
    names = sorted(p.name for p in files)
    assert names == ["entries_added_vs_R.png", "f1_vs_R.png", "hrm_recall_vs_R.png",
                     "report.md"]
    for p in files:
        assert p.stat().st_size > 0
    assert (tmp_path / "rep" / "f1_vs_R.png").read_bytes()[:4] == b"\x89PNG"
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| diabetes (without DFT) | 0.0 | 0.0 |" in md
    assert "| diabetes (with DFT, best R) | 0.2 | 16.0 |" in md
    assert "0.7100 ± 0.0141" in md and "## sclerosis" in md
    assert not [p for p in (tmp_path / "rep").iterdir() if p.name.startswith(".")]


def test_report_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="runs.jsonl"):
        report([tmp_path / "missing"], tmp_path / "rep")
    _write_runs(tmp_path / "d", {0.1: [0.5]})
    with pytest.raises(ValueError, match="candidates.top_m"):
        report([tmp_path / "d"], tmp_path / "rep", x_key="candidates.top_m")


def test_best_point(tmp_path):
    _write_runs(tmp_path / "d", {0.0: [0.6], 0.3: [0.8], 0.5: [0.7]})
    from xlnel.experiments import read_runs

    best = best_point(read_runs(tmp_path / "d" / "runs.jsonl"))
    assert best is not None and best["axes"] == {"dft.R": 0.3}
    assert best_point([]) is None


def test_report_of_a_cross_validation(tmp_path):
    folder = tmp_path / "cv"
    folder.mkdir()
    lines = []
    for r, f1s in {0.0: [0.5, 0.7], 0.2: [0.6, 0.8]}.items():
        for fold, f1 in enumerate(f1s):
            lines.append({"cell": Cell((("dft.R", r),), 0, fold, 2).id, "axes": {"dft.R": r},
                          "seed": 0, "fold": fold, "folds": 2, "dictionary_entries_added": 3,
                          "metrics": {"span": {"f1": f1}, "hrm": {"span": {"recall": 0.9}}}})
    (folder / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    report([folder], tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    # Two folds 0.6 and 0.8: mean 0.7, t(0.975, 1) * 0.1 = 1.2706.
    assert "t-interval" in md and "0.7000 ± 1.2706" in md


def _learning_curve_runs(folder, f1s):
    """Runs of a grid over data.max_documents x data.subset_seed (one seed each)."""
    folder.mkdir(parents=True)
    lines = []
    for (n, draw), f1 in f1s.items():
        axes = (("data.max_documents", n), ("data.subset_seed", draw))
        lines.append({"cell": Cell(axes, 0).id, "axes": dict(axes), "seed": 0,
                      "dictionary_entries_added": 1,
                      "metrics": {"span": {"f1": f1}, "hrm": {"span": {"recall": 0.9}}}})
    (folder / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_report_pools_subset_draws_and_leaves_null_sizes_out_of_the_figures(tmp_path, caplog):
    _learning_curve_runs(tmp_path / "lc", {(25, 1): 0.5, (25, 2): 0.6, (50, 1): 0.7,
                                           (50, 2): 0.7, (None, 1): 0.8, (None, 2): 0.8})
    with caplog.at_level("WARNING", logger="xlnel.experiments.report"):
        files = report([tmp_path / "lc"], tmp_path / "rep", x_key="data.max_documents",
                       pool=["data.subset_seed"])
    assert (tmp_path / "rep" / "f1_vs_R.png").read_bytes()[:4] == b"\x89PNG"
    assert "data.max_documents=None" in caplog.text and "left out of the figures" in caplog.text
    md = files[-1].read_text()
    assert "`data.subset_seed` count as replicates" in md
    assert "0.5500 ± 0.0707" in md  # the two draws of 25 documents, one point
    assert "subset_seed" not in md.split("## lc")[1]  # no longer a grid axis in the table
    with pytest.raises(ValueError, match="x axis"):
        report([tmp_path / "lc"], tmp_path / "rep", x_key="data.subset_seed",
               pool=["data.subset_seed"])
    with pytest.raises(ValueError, match="dft.seed as a grid axis to pool"):
        report([tmp_path / "lc"], tmp_path / "rep", x_key="data.max_documents",
               pool=["dft.seed"])
