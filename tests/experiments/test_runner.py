from __future__ import annotations

import json
import logging

import pytest

from xlnel.errors import ConfigError, FormatError
from xlnel.experiments import format_summary, parse_grid, read_runs, run_experiment, summarize
from xlnel.experiments.runner import Cell, mean_std, plan_cells
from xlnel.types import Document


def test_parse_grid_reads_yaml_scalars():
    grid = parse_grid(["dft.R=0,0.1, 0.5", "candidates.use_idf=true,false",
                       "filter.threshold=null,0.3"])
    assert grid == {"dft.R": [0, 0.1, 0.5], "candidates.use_idf": [True, False],
                    "filter.threshold": [None, 0.3]}


@pytest.mark.parametrize("items, message", [
    (["dft.R"], "must look like"), (["=1,2"], "must look like"), (["dft.R="], "no values"),
    (["dft.R=0", "dft.R=1"], "twice"), (["dft.seed=1,2"], "set by --seeds"),
    (["dictionary.kb=[a,b]"], r"grid axis 'dictionary\.kb': the value '\[a' is not valid YAML"),
])
def test_parse_grid_errors(items, message):
    with pytest.raises(ConfigError, match=message):
        parse_grid(items)


def test_parse_grid_reads_numbers_in_exponent_form():
    assert parse_grid(["dft.R=2e-1,1E0,-3.5e+2"]) == {"dft.R": [0.2, 1.0, -350.0]}
    assert parse_grid(["lang=e1x"]) == {"lang": ["e1x"]}


@pytest.mark.parametrize("values", ["0.2,0.20,2e-1", "0,0.0", "null,~", "a, a"])
def test_parse_grid_refuses_a_value_given_twice(values):
    with pytest.raises(ConfigError, match="twice"):
        parse_grid([f"dft.R={values}"])


def test_parse_grid_tells_booleans_from_numbers():
    assert parse_grid(["filter.threshold=true,1"])["filter.threshold"] == [True, 1]


def test_cells_with_the_same_validated_config_are_refused(tiny_config):
    with pytest.raises(ConfigError, match=r'cells lang="en"\|seed=0 and lang="EN"\|seed=0 '
                                          "have the same config"):
        plan_cells(tiny_config, {"lang": ["en", "EN"]}, [0])


def test_bad_grid_values_fail_before_any_run(tmp_path, tiny_config):
    with pytest.raises(ConfigError, match=r"dft\.R"):
        run_experiment(tiny_config, {"dft.R": [0.1, 7]}, 1, tmp_path / "out")
    with pytest.raises(ConfigError, match="candidates.nope"):
        plan_cells(tiny_config, {"candidates.nope": [1]}, [0])
    with pytest.raises(ConfigError, match=r"cell filter.options.depth=3\|seed=0.*depth"):
        plan_cells(tiny_config, {"filter.options.depth": [3]}, [0])
    assert not (tmp_path / "out" / "runs.jsonl").exists()


def test_seeds_set_every_seed_key_but_not_the_test_split(tiny_config):
    planned = plan_cells(tiny_config, {"dft.R": [0.2]}, [0, 3])
    assert [c.id for c, _ in planned] == ["dft.R=0.2|seed=0", "dft.R=0.2|seed=3"]
    cfg = planned[1][1]
    assert (cfg.seed, cfg.dft.seed, cfg.filter.options["seed"]) == (3, 3, 3)
    assert cfg.data.split_seed == planned[0][1].data.split_seed == 0
    sim = plan_cells(tiny_config, {}, [2], {"filter.name": "xlnel.similarity.v1",
                                           "filter.options": {}})
    assert "seed" not in sim[0][1].filter.options


def test_seeds_reseed_the_tagger_and_the_prefilter_too(tiny_config):
    """Every stage that draws is reseeded per replicate: a trained tagger's ner.options.seed
    and a cascade prefilter's seed as well as the filter's, so the replicates do not share
    one tagger (nor one prefilter) and understate the spread."""
    cascade = {"ner.name": "xlnel.crf_tagger.v1", "ner.options": {"seed": 7},
               "filter.name": "xlnel.cross_encoder.v1",
               "filter.options": {"prefilter": "xlnel.gbdt.v1"}}
    planned = plan_cells(tiny_config, {}, [0, 3], cascade)
    for (cell, cfg), seed in zip(planned, [0, 3], strict=True):
        assert (cfg.seed, cfg.dft.seed, cfg.filter.options["seed"],
                cfg.filter.options["prefilter_options"]["seed"],
                cfg.ner.options["seed"]) == (seed,) * 5, cell.id
    # only the stages present: no tagger, no tagger seed; a reused tagger is not trained
    plain = plan_cells(tiny_config, {}, [3])[0][1]
    assert plain.ner.options == {} and "prefilter_options" not in plain.filter.options
    reused = plan_cells(tiny_config, {}, [3], {"ner.name": "xlnel.crf_tagger.v1",
                                               "ner.pretrained": "elsewhere"})[0][1]
    assert "seed" not in reused.ner.options
    for key in ("ner.options.seed", "filter.options.prefilter_options.seed"):
        with pytest.raises(ConfigError, match="set by --seeds"):
            parse_grid([f"{key}=1,2"])
        with pytest.raises(ConfigError, match="set by the seeds"):
            plan_cells(tiny_config, {}, [0], {**cascade, key: 1})


def test_run_resume_and_cache(tmp_path, tiny_config):
    out, cache = tmp_path / "out", tmp_path / "cache"
    records = run_experiment(tiny_config, {"dft.R": [0.0, 0.3]}, 1, out, cache_dir=cache)
    assert [r["cell"] for r in records] == ["dft.R=0.0|seed=0", "dft.R=0.3|seed=0"]
    first = records[0]
    assert not any(first["cached"].values())
    assert set(first["metrics"]) == {"span", "overlap", "concept", "document", "span+type",
                                    "concept+type", "hrm"}
    assert first["metrics"]["hrm"]["span"]["recall"] == pytest.approx(1.0)
    assert first["test_documents"] == 6 and first["dictionary_entries_added"] == 0
    assert records[1]["dft"]["dft_documents"] == round(0.3 * 18)
    assert set(first["seconds"]) >= {"dictionary", "generator", "candidates", "filter",
                                     "scores", "decide", "evaluate", "total"}
    # Resume: nothing new is written.
    again = run_experiment(tiny_config, {"dft.R": [0.0, 0.3]}, 1, out, cache_dir=cache)
    assert again == records
    assert len(read_runs(out / "runs.jsonl")) == 2
    # The same cells in another folder come entirely from the cache.
    cached = run_experiment(tiny_config, {"dft.R": [0.0, 0.3]}, 1, tmp_path / "o2",
                            cache_dir=cache)
    for rec in cached:
        assert rec["cached"] and all(rec["cached"].values())
    assert [r["metrics"] for r in cached] == [r["metrics"] for r in records]


def test_threshold_sweep_recomputes_only_the_decision(tmp_path, tiny_config):
    cache = tmp_path / "cache"
    run_experiment(tiny_config, {}, 1, tmp_path / "a", cache_dir=cache)
    recs = run_experiment(tiny_config, {"filter.threshold": [0.0, 0.99],
                                        "linker.overlap": ["score"]}, 1, tmp_path / "b",
                          cache_dir=cache)
    assert all(all(r["cached"].values()) for r in recs)
    assert [r["threshold"] for r in recs] == [0.0, 0.99]
    assert recs[0]["metrics"]["span"]["fp"] > recs[1]["metrics"]["span"]["fp"]


def test_r_sweep_reuses_nothing_downstream_of_dft(tmp_path, tiny_config):
    cache = tmp_path / "cache"
    run_experiment(tiny_config, {"dft.R": [0.2]}, 1, tmp_path / "a", cache_dir=cache)
    rec = run_experiment(tiny_config, {"dft.R": [0.4]}, 1, tmp_path / "b", cache_dir=cache)[0]
    assert not any(rec["cached"].values())


def test_truncated_last_line_is_ignored_and_repaired(tmp_path, tiny_config, caplog):
    out = tmp_path / "out"
    records = run_experiment(tiny_config, {"dft.R": [0.0, 0.3]}, 1, out,
                             cache_dir=tmp_path / "c")
    runs = out / "runs.jsonl"
    lines = runs.read_text().splitlines()
    runs.write_text(lines[0] + "\n" + lines[1][:40])  # crash while writing the second cell
    with caplog.at_level(logging.WARNING):
        assert [r["cell"] for r in read_runs(runs)] == [records[0]["cell"]]
    assert "truncated" in caplog.text
    redone = run_experiment(tiny_config, {"dft.R": [0.0, 0.3]}, 1, out,
                            cache_dir=tmp_path / "c")
    assert [r["cell"] for r in redone] == [r["cell"] for r in records]
    assert len(runs.read_text().splitlines()) == 2
    assert all(json.loads(x) for x in runs.read_text().splitlines())


def test_a_bad_line_in_the_middle_is_an_error(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"cell": "a"}\nnot json\n{"cell": "b"}\n')
    with pytest.raises(FormatError, match=r"runs.jsonl:2: not a JSON record"):
        read_runs(runs)


def test_a_changed_config_is_not_resumed(tmp_path, tiny_config):
    out = tmp_path / "out"
    run_experiment(tiny_config, {}, 1, out, cache_dir=tmp_path / "c")
    with pytest.raises(ConfigError, match="another config"):
        run_experiment(tiny_config, {}, 1, out, {"candidates.top_m": 5},
                       cache_dir=tmp_path / "c")


def _record(r: float, seed: int, f1: float, hrm: float, added: int) -> dict:
    cell = Cell((("dft.R", r),), seed)
    return {"cell": cell.id, "axes": {"dft.R": r}, "seed": seed,
            "metrics": {"span": {"f1": f1}, "hrm": {"span": {"recall": hrm}}},
            "dictionary_entries_added": added}


def test_summary_mean_and_std_golden():
    records = [_record(0.0, 0, 0.5, 0.9, 0), _record(0.0, 1, 0.7, 0.9, 0),
               _record(0.2, 0, 0.6, 0.8, 10), _record(0.2, 1, 0.6, 1.0, 12),
               _record(0.2, 2, 0.9, 0.9, 14)]
    rows = summarize(records)
    assert [r["axes"] for r in rows] == [{"dft.R": 0.0}, {"dft.R": 0.2}]
    assert [r["seeds"] for r in rows] == [2, 3]
    assert rows[0]["span_f1"] == {"mean": pytest.approx(0.6), "std": pytest.approx(0.141421356)}
    assert rows[1]["span_f1"]["mean"] == pytest.approx(0.7)
    assert rows[1]["span_f1"]["std"] == pytest.approx(0.173205081)
    assert rows[1]["hrm_span"]["std"] == pytest.approx(0.1)
    assert rows[1]["entries_added"] == {"mean": pytest.approx(12.0), "std": pytest.approx(2.0)}
    assert "concept_f1" not in rows[0]
    table = format_summary(rows)
    assert "0.6000 ± 0.1414" in table and "12.0 ± 2.0" in table
    assert mean_std([3.0]) == (3.0, 0.0)


def test_max_documents_keeps_the_test_split(tiny_config):
    from xlnel.config import load_config
    from xlnel.pipeline import load_training_documents

    full_train, full_test = load_training_documents(load_config(tiny_config))
    train, test = load_training_documents(load_config(tiny_config, {"data.max_documents": 5}))
    assert [d.id for d in train] == [d.id for d in full_train[:5]]
    assert [d.id for d in test] == [d.id for d in full_test]
    with pytest.raises(ConfigError, match="max_documents"):
        load_config(tiny_config, {"data.max_documents": 0})


def test_subset_seed_draws_nested_subsets_in_file_order(tiny_config):
    from xlnel.config import load_config
    from xlnel.pipeline import load_training_documents

    full_train, full_test = load_training_documents(load_config(tiny_config))
    order = {d.id: i for i, d in enumerate(full_train)}
    drawn = {}
    for n in (3, 5):
        train, test = load_training_documents(load_config(
            tiny_config, {"data.max_documents": n, "data.subset_seed": 1}))
        assert [d.id for d in test] == [d.id for d in full_test]
        ids = [d.id for d in train]
        assert len(ids) == n and ids == sorted(ids, key=order.__getitem__)
        drawn[n] = set(ids)
    assert drawn[3] <= drawn[5]
    first = load_training_documents(load_config(tiny_config, {"data.max_documents": 5}))[0]
    assert {d.id for d in first} != drawn[5]  # not the first five
    every = load_training_documents(load_config(tiny_config, {"data.subset_seed": 1}))[0]
    assert [d.id for d in every] == [d.id for d in full_train]  # no max_documents: all


def test_a_grid_over_subset_seeds_and_sizes_runs_every_cell(tmp_path, tiny_config):
    from xlnel.config import load_config
    from xlnel.pipeline import load_training_documents

    everything = len(load_training_documents(load_config(tiny_config))[0])
    records = run_experiment(tiny_config, {"data.max_documents": [3, None],
                                           "data.subset_seed": [1, 2]}, 1, tmp_path / "out",
                             cache_dir=tmp_path / "c")
    got = sorted((r["axes"]["data.max_documents"] or 0, r["axes"]["data.subset_seed"],
                  r["train_documents"]) for r in records)
    assert got == [(0, 1, everything), (0, 2, everything), (3, 1, 3), (3, 2, 3)]


def test_keep_documents():
    from xlnel.training.steps import keep_documents

    docs = [Document(id=str(i), text="x") for i in range(10)]
    assert keep_documents(docs, None, 3) == docs
    assert keep_documents(docs, 20, 3) == docs
    assert [d.id for d in keep_documents(docs, 4, None)] == ["0", "1", "2", "3"]
    draws = [[d.id for d in keep_documents(docs, n, 7)] for n in (2, 4, 8)]
    assert set(draws[0]) <= set(draws[1]) <= set(draws[2])
    assert draws[1] == sorted(draws[1], key=int) and draws[1] != ["0", "1", "2", "3"]
    assert [d.id for d in keep_documents(docs, 4, 7)] == draws[1]  # seeded: reproducible


def test_an_unset_subset_seed_keeps_the_stage_keys(tiny_config):
    from xlnel.config import load_config
    from xlnel.training.keys import config_parts

    parts = config_parts(load_config(tiny_config, {"data.max_documents": 5}))
    assert "subset_seed" not in parts["data"]["data"]
    drawn = config_parts(load_config(tiny_config, {"data.max_documents": 5,
                                                   "data.subset_seed": 1}))
    assert drawn["data"]["data"]["subset_seed"] == 1
    # without max_documents the seed draws nothing: the all-documents cells of a grid are one
    assert config_parts(load_config(tiny_config, {"data.subset_seed": 1})) == config_parts(
        load_config(tiny_config))


def test_a_record_from_before_a_new_default_field_is_resumed(tmp_path, tiny_config):
    out = tmp_path / "out"
    first = run_experiment(tiny_config, {}, 1, out, cache_dir=tmp_path / "c")
    runs = out / "runs.jsonl"
    record = json.loads(runs.read_text())
    del record["config"]["ner"]["pretrained"]  # as written before xlnel had that field
    record["config_hash"] = "0" * 16
    runs.write_text(json.dumps(record) + "\n")
    again = run_experiment(tiny_config, {}, 1, out, cache_dir=tmp_path / "c")
    assert [r["cell"] for r in again] == [r["cell"] for r in first]
    assert len(runs.read_text().splitlines()) == 1


def test_a_new_field_away_from_its_default_is_another_config(tmp_path, tiny_config):
    out = tmp_path / "out"
    run_experiment(tiny_config, {}, 1, out, cache_dir=tmp_path / "c")
    runs = out / "runs.jsonl"
    record = json.loads(runs.read_text())
    del record["config"]["candidates"]["top_m"]
    record["config_hash"] = "0" * 16
    runs.write_text(json.dumps(record) + "\n")
    with pytest.raises(ConfigError, match="another config"):
        run_experiment(tiny_config, {}, 1, out, {"candidates.top_m": 5},
                       cache_dir=tmp_path / "c")


def test_experiment_types_links_as_the_trained_pipeline(tmp_path, tiny_docs, tiny_kb):
    """``cortin`` (a KB alias of "chronic asthma", never annotated in training) reads as a
    chemical alone, as a disease with its concept's preferred name: the pipeline's typer reads
    that name, and so must the experiment's."""
    from tests.conftest import make_documents
    from xlnel.config import load_config
    from xlnel.evaluation import evaluate
    from xlnel.io import read_documents
    from xlnel.runtime import Pipeline
    from xlnel.training import train

    docs = make_documents()
    for d in docs:
        for e in d["entities"]:
            e["type"] = "Chemical" if e["concept_id"] in ("C3", "C6") else "Disease"
    tiny_docs.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    with tiny_kb.open("a", encoding="utf-8") as f:
        f.write("C7\tchronic asthma\t1\nC7\tcortin\t0\n")
    test = tmp_path / "test.jsonl"
    text = "The child has cortin again."
    test.write_text(json.dumps({"id": "t-0", "text": text, "entities": [
        {"start": 14, "end": 20, "text": "cortin", "type": "Disease", "concept_id": "C7"}]})
        + "\n", encoding="utf-8")
    config = tmp_path / "typed.yaml"
    config.write_text(f"lang: en\ndata:\n  train: {tiny_docs}\n  test: {test}\n"
                      f"dictionary:\n  kb: ['tsv:{tiny_kb}']\ndft:\n  R: 0.5\n"
                      "filter:\n  threshold: 0.9\n", encoding="utf-8")
    train(load_config(config), tmp_path / "pipe")
    gold = read_documents(test)
    linked = Pipeline.load(tmp_path / "pipe").link_batch(gold)
    cortin = [e for e in linked[0].entities if e.text == "cortin"]
    assert [(e.concept_id, e.type) for e in cortin] == [("C7", "Disease")]
    [record] = run_experiment(config, {}, 1, tmp_path / "exp", cache_dir=tmp_path / "cache")
    for level in ("span+type", "concept+type"):
        expected = evaluate(gold, linked, level)
        assert record["metrics"][level]["tp"] == expected.tp == 1
        assert record["metrics"][level]["fp"] == expected.fp


def test_a_cell_recorded_twice_is_an_error_naming_both_lines(tmp_path):
    # Two merged runs.jsonl files that both ran cell a: averaging it twice would be wrong.
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"cell": "a"}\n{"cell": "b"}\n{"cell": "a"}\n')
    with pytest.raises(FormatError, match=r"runs.jsonl:3: cell 'a' is recorded twice, at "
                                          r"lines 1 and 3"):
        read_runs(runs)


def test_a_line_that_is_not_an_object_is_an_error(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"cell": "a"}\n[1, 2]\n')
    with pytest.raises(FormatError, match=r"runs.jsonl:2: not a JSON record"):
        read_runs(runs)


def test_a_record_without_its_cell_is_an_error_naming_the_line(tmp_path):
    # resuming keys the finished cells by name: a record without one raised a bare KeyError
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"cell": "a"}\n{"scores": {}}\n')
    with pytest.raises(FormatError, match=r"runs.jsonl:2: a run record names its cell"):
        read_runs(runs)
