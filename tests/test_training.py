"""One training recipe: ``xlnel train`` and ``xlnel experiment`` run the same step functions,
read ``data.*`` the same way and give the same predictions."""

from __future__ import annotations

import json
import os

import pytest

import xlnel.training.steps as steps
from xlnel.config import load_config
from xlnel.errors import ConfigError
from xlnel.experiments import run_experiment
from xlnel.experiments.stages import CellStages, StageCache, stage_keys
from xlnel.io import read_documents
from xlnel.linkers.decide import decide
from xlnel.runtime import Pipeline
from xlnel.training import STEPS, TrainingData, step_keys, train
from xlnel.training.keys import config_parts, file_fingerprint


def _spy(monkeypatch, calls: list[str], name: str) -> None:
    real = getattr(steps, name)

    def spy(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(steps, name, spy)


def test_train_and_experiment_call_the_same_step_functions(tmp_path, tiny_config, monkeypatch):
    calls: list[str] = []
    for name in ("load_training_documents", "fine_tune_dictionary", "fit_tagger",
                 "fit_generator", "fit_filter"):
        _spy(monkeypatch, calls, name)
    train(load_config(tiny_config), tmp_path / "pipe")
    trained, calls[:] = list(calls), []
    run_experiment(tiny_config, {}, 1, tmp_path / "exp", cache_dir=tmp_path / "cache")
    assert trained == calls
    assert set(calls) == {"load_training_documents", "fine_tune_dictionary", "fit_generator",
                          "fit_filter"}  # no tagger in this config


def _link_keys(docs):
    return [[(e.start, e.end, e.concept_id, round(e.score, 9)) for e in d.entities]
            for d in docs]


@pytest.mark.parametrize("overrides", [{}, {"filter.threshold": 0.3, "dft.R": 0.0},
                                       {"dft.crossfit": 2}, {"dft.crossfit": 3, "dft.R": 0.0}])
def test_train_and_experiment_predict_the_same_links(tmp_path, tiny_config, overrides):
    config = load_config(tiny_config, overrides)
    train(config, tmp_path / "pipe")
    pipe = Pipeline.load(tmp_path / "pipe")
    test = read_documents(tmp_path / "pipe" / "test.jsonl")
    trained = pipe.link_batch(test)  # the gold links are replaced

    cell = CellStages(config, StageCache(tmp_path / "cache"), TrainingData())
    assert [d.id for d in cell.test_documents()] == [d.id for d in test]
    scores, _ = cell.scores()
    experiment = [decide(d, c, s, cell.threshold(), config.linker.overlap,
                         config.linker.propagate)
                  for d, c, s in zip(cell.test_documents(), cell.test_candidates(), scores,
                                     strict=True)]
    assert cell.threshold() == pytest.approx(pipe.filter.threshold)
    assert _link_keys(experiment) == _link_keys(trained)
    assert any(d.entities for d in experiment)


def _renamed_copy(source, target):
    """``source``'s documents under ids no training document has."""
    docs = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    target.write_text("".join(json.dumps({**d, "id": f"test-{d['id']}"}) + "\n" for d in docs),
                      encoding="utf-8")
    return target


def test_data_test_names_the_test_documents_of_both(tmp_path, tiny_config, tiny_docs):
    test = _renamed_copy(tiny_docs, tmp_path / "test.jsonl")
    config = load_config(tiny_config, {"data.test_fraction": 0.0, "data.test": str(test)})
    report = train(config, tmp_path / "pipe")
    written = read_documents(tmp_path / "pipe" / "test.jsonl")
    expected = read_documents(test)
    assert [d.id for d in written] == [d.id for d in expected]
    assert report["test_documents"] == len(expected)
    cell = CellStages(config, StageCache(None), TrainingData())
    assert [d.id for d in cell.test_documents()] == [d.id for d in expected]


def test_test_documents_that_are_training_documents_are_refused(tmp_path, tiny_config,
                                                                 tiny_docs):
    test = tmp_path / "test.jsonl"
    test.write_text(tiny_docs.read_text(encoding="utf-8").splitlines()[3] + "\n",
                    encoding="utf-8")
    config = load_config(tiny_config, {"data.test_fraction": 0.0, "data.test": str(test)})
    with pytest.raises(ConfigError, match=r"data\.test: 1 document id\(s\) .* also documents "
                                          r"of data\.train .*'doc-0-3'.*distinct"):
        steps.load_training_documents(config)
    with pytest.raises(ConfigError, match="distinct"):
        train(config, tmp_path / "pipe")
    with pytest.raises(ConfigError, match="distinct"):
        run_experiment(tiny_config, {}, 1, tmp_path / "exp",
                       overrides={"data.test_fraction": 0.0, "data.test": str(test)})


def test_a_test_fraction_that_holds_out_nothing_is_refused(tiny_config):
    config = load_config(tiny_config, {"data.test_fraction": 0.01})
    with pytest.raises(ConfigError, match=r"data\.test_fraction=0\.01 of the 24 documents .* "
                                          "holds out no test document"):
        steps.load_training_documents(config)


def test_r_1_names_dft_r_when_the_filter_has_nothing_to_train_on(tmp_path, tiny_config):
    config = load_config(tiny_config, {"dft.R": 1.0})
    with pytest.raises(ConfigError, match=r"dft\.R=1\.0 leaves the filter xlnel\.gbdt\.v1 no "
                                          "training documents"):
        train(config, tmp_path / "pipe")


def test_folds_name_the_same_documents_in_both(tmp_path, tiny_config):
    config = load_config(tiny_config, {"data.folds": 3, "data.fold": 1})
    train(config, tmp_path / "pipe")
    written = [d.id for d in read_documents(tmp_path / "pipe" / "test.jsonl")]
    cell = CellStages(config, StageCache(None), TrainingData())
    assert written == [d.id for d in cell.test_documents()]
    assert not set(written) & {d.id for d in cell.train_documents()}


def test_test_file_and_test_fraction_together_are_refused(tmp_path, tiny_config, tiny_docs):
    config = load_config(tiny_config, {"data.test": str(tiny_docs)})
    with pytest.raises(ConfigError, match="data.test .* and data.test_fraction"):
        train(config, tmp_path / "pipe")
    assert not (tmp_path / "pipe").exists()


def test_cache_keys_follow_the_declared_config_parts(tiny_config):
    base = load_config(tiny_config)
    keys = stage_keys(base)
    assert set(keys) == {s.name for s in STEPS} | {"scores", "windows"}
    assert keys["tagger"] == ""  # no tagger in this config
    threshold = stage_keys(load_config(tiny_config, {"filter.threshold": 0.7}))
    assert threshold == keys  # the filter is fitted with its threshold open
    top_m = step_keys(load_config(tiny_config, {"candidates.top_m": 5}))
    assert top_m["dictionary"] == keys["dictionary"]
    assert top_m["generator"] != keys["generator"] and top_m["filter"] != keys["filter"]
    # an option added off keeps the keys of the configs written before it
    assert "compound_words" not in config_parts(base)["candidates"]
    compound = step_keys(load_config(tiny_config, {"candidates.compound_words": True}))
    assert compound["generator"] != keys["generator"]


def test_cache_keys_follow_the_data_content_not_its_modification_time(tiny_config, tiny_docs,
                                                                     tiny_kb):
    keys = step_keys(load_config(tiny_config))
    for path in (tiny_docs, tiny_kb):  # the same bytes written again: a new modification time
        content = path.read_bytes()
        path.write_bytes(content)
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert step_keys(load_config(tiny_config)) == keys
    tiny_docs.write_bytes(tiny_docs.read_bytes() + b"\n")
    changed = step_keys(load_config(tiny_config))
    assert changed["dictionary"] != keys["dictionary"] and changed["filter"] != keys["filter"]
    assert changed["generator"] != keys["generator"]  # it is fitted on the dictionary


def test_a_folder_fingerprint_covers_its_file_names_and_bytes(tmp_path):
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "a.txt").write_text("fever", encoding="utf-8")
    (folder / "a.ann").write_text("T1\tDisease 0 5\tfever\n", encoding="utf-8")
    first = file_fingerprint(str(folder))
    (folder / "a.txt").rename(folder / "b.txt")
    renamed = file_fingerprint(str(folder))
    assert renamed != first and renamed["size"] == first["size"]
    (folder / "b.txt").write_text("fevers", encoding="utf-8")
    assert file_fingerprint(str(folder)) not in (first, renamed)
    assert file_fingerprint(str(tmp_path / "missing")) == {"path": str(tmp_path / "missing")}


def test_cache_keys_follow_the_content_of_a_stop_word_file(tiny_config, tmp_path):
    stopwords = tmp_path / "stop.txt"
    stopwords.write_text("the\nof\n", encoding="utf-8")
    config = load_config(tiny_config, {"candidates.stopwords": str(stopwords)})
    keys = step_keys(config)
    assert "candidates.stopwords" in config_parts(config)["candidates"]["files"]
    stopwords.write_text("the\nof\nfever\n", encoding="utf-8")  # same path, new words
    changed = step_keys(config)
    assert changed["dictionary"] == keys["dictionary"]
    assert changed["generator"] != keys["generator"] and changed["filter"] != keys["filter"]
    # a config naming no local file keeps its keys
    assert "files" not in config_parts(load_config(tiny_config))["candidates"]


def test_cache_keys_follow_a_local_folder_but_not_a_hub_id(tiny_config, tmp_path):
    model = tmp_path / "encoder"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    local = load_config(tiny_config, {"filter.options.encoder": str(model)})
    keys = step_keys(local)
    (model / "config.json").write_text('{"hidden_size": 8}', encoding="utf-8")
    assert step_keys(local)["filter"] != keys["filter"]
    hub = load_config(tiny_config, {"filter.options.encoder": "org/not-a-local-folder"})
    assert "files" not in config_parts(hub)["filter"]


def test_a_cached_experiment_reads_what_it_stored(tmp_path, tiny_config):
    run_experiment(tiny_config, {}, 1, tmp_path / "a", cache_dir=tmp_path / "cache")
    run_experiment(tiny_config, {}, 1, tmp_path / "b", cache_dir=tmp_path / "cache")
    first, second = (json.loads((tmp_path / d / "runs.jsonl").read_text().splitlines()[0])
                     for d in ("a", "b"))
    assert first["metrics"] == second["metrics"]
    assert all(second["cached"].values()) and not any(first["cached"].values())


def test_crossfit_enters_the_keys_only_when_on(tiny_config):
    keys = step_keys(load_config(tiny_config))
    assert step_keys(load_config(tiny_config, {"dft.crossfit": 0})) == keys
    on = step_keys(load_config(tiny_config, {"dft.crossfit": 2}))
    assert all(on[s] != keys[s] for s in ("dictionary", "generator", "candidates", "filter"))
    # R 0 without cross-fitting splits nothing, so the seed does not count; with it, it deals
    # the folds
    r0 = {"dft.R": 0.0}
    assert (step_keys(load_config(tiny_config, {**r0, "dft.seed": 1}))
            == step_keys(load_config(tiny_config, r0)))
    r0 = {"dft.R": 0.0, "dft.crossfit": 2}
    assert (step_keys(load_config(tiny_config, {**r0, "dft.seed": 1}))["candidates"]
            != step_keys(load_config(tiny_config, r0))["candidates"])


def test_select_by_linker_enters_the_filter_key_with_the_linker_section(tiny_config):
    keys = step_keys(load_config(tiny_config))
    assert "select_by" not in config_parts(load_config(tiny_config))["filter"]
    # on spans the linker section does not touch the filter
    assert step_keys(load_config(tiny_config, {"linker.consistency": True})) == keys
    on = {"filter.select_by": "linker"}
    linker = step_keys(load_config(tiny_config, on))
    assert linker["filter"] != keys["filter"] and linker["candidates"] == keys["candidates"]
    changed = step_keys(load_config(tiny_config, {**on, "linker.consistency": True}))
    assert changed["filter"] != linker["filter"]


def test_select_by_linker_picks_the_threshold_on_the_linker_decisions(tiny_config):
    from xlnel.linkers.decide import choose_linker_threshold

    config = load_config(tiny_config, {"filter.select_by": "linker",
                                       "linker.consistency": True, "dft.R": 0.0})
    run = CellStages(config, StageCache(None), TrainingData())
    filt = run.filter()
    docs = run.dictionary().filter_documents
    expected, _ = choose_linker_threshold(docs, run.candidates().filter, filt.oof_scores,
                                          filt.oof_folds, config.linker, "en")
    assert filt.threshold == pytest.approx(expected)
    assert sorted(set(filt.oof_folds)) == [0, 1]


def test_select_by_linker_refuses_a_filter_without_out_of_fold_scores(tiny_config):
    config = load_config(tiny_config, {"filter.select_by": "linker",
                                       "filter.name": "xlnel.similarity.v1",
                                       "filter.options": {}})
    with pytest.raises(ConfigError, match="out-of-fold scores"):
        CellStages(config, StageCache(None), TrainingData()).filter()
