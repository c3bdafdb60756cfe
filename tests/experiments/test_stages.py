"""Experiment cells link long test documents window by window, as a trained pipeline does,
and their stage cache keys follow the window settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SENTENCES
from tests.linkers.test_windows import long_text
from xlnel.config import load_config
from xlnel.evaluation import evaluate, hrm_recall
from xlnel.experiments import run_experiment
from xlnel.experiments.stages import CellStages, StageCache, TrainingData, stage_keys
from xlnel.io import read_documents
from xlnel.runtime import Pipeline
from xlnel.training import train
from xlnel.types import Document

# (window_chars, window_overlap) under which windowed links differ from whole-document ones
WINDOWS = [(300, 0), (40, 5)]


def _link_keys(docs: list[Document]) -> list[list[tuple[int, int, str, float]]]:
    return [[(e.start, e.end, e.concept_id, round(e.score, 9)) for e in d.entities]
            for d in docs]


@pytest.fixture()
def long_test(tmp_path: Path, tiny_config: Path) -> Path:
    """``tiny_config`` tested on a short document and a long one (no gold links needed)."""
    test = tmp_path / "long-test.jsonl"
    docs = [{"id": "short", "text": "She has diabetes.", "entities": []},
            {"id": "long", "text": long_text(40), "entities": []}]
    test.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    config = tmp_path / "long.yaml"
    config.write_text(f"include: {tiny_config}\ndata:\n  test_fraction: 0.0\n  test: {test}\n",
                      encoding="utf-8")
    return config


def _window_overrides(size: int, overlap: int) -> dict[str, int]:
    return {"linker.window_chars": size, "linker.window_overlap": overlap}


def test_a_cell_links_long_documents_as_the_pipeline_does(tmp_path: Path, long_test: Path
                                                          ) -> None:
    train(load_config(long_test), tmp_path / "pipe")
    test = read_documents(tmp_path / "pipe" / "test.jsonl")
    whole = Pipeline.load(tmp_path / "pipe").link_batch(test)
    cache = StageCache(tmp_path / "cache")  # shared: no window setting reuses another's
    for size, overlap in WINDOWS:
        overrides = _window_overrides(size, overlap)
        linked = Pipeline.load(tmp_path / "pipe", overrides).link_batch(test)
        assert _link_keys(linked) != _link_keys(whole)  # the windows change the links
        cell = CellStages(load_config(long_test, overrides), cache, TrainingData())
        assert _link_keys(cell.test_links()) == _link_keys(linked)
        assert cell.cached["windows"] is False  # computed for this setting, not reused
    # the short document is linked whole: its links are the whole-document ones
    assert _link_keys(cell.test_links())[0] == _link_keys(whole)[0]


def _long_gold(n: int) -> dict[str, object]:
    """The document of ``long_text(n)`` with the gold links of its sentences."""
    text, entities = long_text(n), []
    start = 0
    for i in range(n):
        sentence, mentions = SENTENCES[(i * 5) % len(SENTENCES)]
        start = text.index(sentence, start)
        pos = 0
        for mention, cid in mentions:
            pos = sentence.index(mention, pos)
            entities.append({"start": start + pos, "end": start + pos + len(mention),
                             "text": mention, "concept_id": cid})
            pos += len(mention)
        start += len(sentence)
    return {"id": "long", "text": text, "entities": entities}


def test_an_experiment_scores_the_windowed_links(tmp_path: Path, long_test: Path) -> None:
    (tmp_path / "long-test.jsonl").write_text(json.dumps(_long_gold(40)) + "\n",
                                              encoding="utf-8")
    overrides = _window_overrides(*WINDOWS[1])
    train(load_config(long_test, overrides), tmp_path / "pipe")
    gold = read_documents(tmp_path / "long-test.jsonl")
    linked = Pipeline.load(tmp_path / "pipe").link_batch(gold)
    whole = Pipeline.load(tmp_path / "pipe", _window_overrides(20_000, 1_000)).link_batch(gold)
    [record] = run_experiment(long_test, {}, 1, tmp_path / "exp", overrides,
                              cache_dir=tmp_path / "cache")
    expected = evaluate(gold, linked, "span")
    assert expected != evaluate(gold, whole, "span")  # the windows change the scores
    got = record["metrics"]["span"]
    assert (got["tp"], got["fp"], got["fn"]) == (expected.tp, expected.fp, expected.fn)
    assert "windows" in record["seconds"]


def test_window_settings_are_in_the_windows_stage_key_only(long_test: Path) -> None:
    keys = stage_keys(load_config(long_test))
    for size, overlap in WINDOWS:
        other = stage_keys(load_config(long_test, _window_overrides(size, overlap)))
        assert other["windows"] != keys["windows"]
        # the fitted stages and the whole documents' scores do not depend on them
        assert {k: v for k, v in other.items() if k != "windows"} == \
            {k: v for k, v in keys.items() if k != "windows"}
    assert stage_keys(load_config(long_test, {"linker.window_overlap": 999}))["windows"] \
        != keys["windows"]


def test_candidate_recall_is_of_the_candidates_the_windows_decided_on(tmp_path: Path,
                                                                     long_test: Path) -> None:
    """A long document is decided on its windows' candidates (each window's own spans), so
    the recorded candidate recall is theirs, not that of candidates generated on the whole
    text, which the links never saw."""
    (tmp_path / "long-test.jsonl").write_text(json.dumps(_long_gold(40)) + "\n",
                                              encoding="utf-8")
    overrides = _window_overrides(*WINDOWS[1])
    gold = read_documents(tmp_path / "long-test.jsonl")
    cell = CellStages(load_config(long_test, overrides), StageCache(tmp_path / "cache"),
                      TrainingData())
    windowed = hrm_recall(gold, {"long": cell.linked_candidates()[0]}, "span")
    whole = hrm_recall(gold, {"long": cell.test_candidates()[0]}, "span")
    assert windowed.recall != whole.recall  # a window cuts some mention off
    [record] = run_experiment(long_test, {}, 1, tmp_path / "exp", overrides,
                              cache_dir=tmp_path / "cache")
    assert record["metrics"]["hrm"]["span"] == windowed.to_dict()


def test_a_decision_variant_links_long_documents_as_the_pipeline_would(tmp_path: Path,
                                                                      long_test: Path) -> None:
    """The benchmarks re-decide a cell's cached scores with another linker section or
    threshold; a long document is then still linked window by window, as ``xlnel link``
    links it with those settings."""
    overrides = _window_overrides(*WINDOWS[0])
    config = load_config(long_test, overrides)
    train(config, tmp_path / "pipe")
    test = read_documents(tmp_path / "pipe" / "test.jsonl")
    cell = CellStages(config, StageCache(tmp_path / "cache"), TrainingData())
    variant = {"linker.overlap": "none", "filter.threshold": 0.95}
    expected = Pipeline.load(tmp_path / "pipe", {**overrides, **variant}).link_batch(test)
    linker = config.linker.model_copy(update={"overlap": "none"})
    assert _link_keys(cell.test_links(linker, 0.95)) == _link_keys(expected)
    assert _link_keys(expected) != _link_keys(cell.test_links())
    with pytest.raises(ValueError, match="window_chars"):
        cell.test_links(config.linker.model_copy(update={"window_chars": 20_000}))
