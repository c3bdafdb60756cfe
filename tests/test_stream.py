"""Streaming linking: lazy input, atomic incremental output, worker processes, local shards."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import make_documents, write_shards
from xlnel.cli.main import app
from xlnel.config import load_config
from xlnel.errors import FormatError
from xlnel.io import read_documents
from xlnel.io.documents import iter_documents
from xlnel.pipeline import Pipeline, link
from xlnel.stream import (
    batched,
    find_shards,
    link_shards,
    link_stream,
    plan_shards,
    record_writer,
)


@pytest.fixture(scope="module")
def pipe(pipe_dir: Path) -> Pipeline:
    return Pipeline.load(pipe_dir)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in make_documents(5)), encoding="utf-8")
    return path


def test_batched() -> None:
    assert list(batched(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert list(batched([], 3)) == []
    with pytest.raises(ValueError, match="at least 1"):
        list(batched([1], 0))


def test_iter_documents_is_lazy_and_reports_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "x"}) + "\n{broken\n", encoding="utf-8")
    docs = iter_documents(path)
    assert next(docs).id == "a"  # the good line comes before the bad one is read
    with pytest.raises(FormatError, match=r"c\.jsonl:2: invalid JSON"):
        next(docs)


def test_streamed_link_equals_in_memory_link(pipe: Pipeline, corpus: Path,
                                             tmp_path: Path) -> None:
    docs = read_documents(corpus)
    expected = [d for lo in range(0, len(docs), 7) for d in pipe.link_batch(docs[lo:lo + 7])]
    assert list(link_stream(pipe, iter(docs), batch_size=7)) == expected
    assert link(pipe, corpus, tmp_path / "out.jsonl", batch_size=7) == len(docs)
    assert read_documents(tmp_path / "out.jsonl") == expected


def test_gz_in_and_out_round_trip(pipe: Pipeline, corpus: Path, tmp_path: Path) -> None:
    gz_in = tmp_path / "corpus.jsonl.gz"
    gz_in.write_bytes(gzip.compress(corpus.read_bytes()))
    link(pipe, corpus, tmp_path / "plain.jsonl")
    link(pipe, gz_in, tmp_path / "out.jsonl.gz")
    assert gzip.decompress((tmp_path / "out.jsonl.gz").read_bytes()) == \
        (tmp_path / "plain.jsonl").read_bytes()
    link(pipe, gz_in, tmp_path / "out.pubtator.gz")
    assert link(pipe, tmp_path / "out.pubtator.gz", tmp_path / "again.jsonl") == 40
    assert [d.id for d in read_documents(tmp_path / "again.jsonl")] == \
        [d.id for d in read_documents(corpus)]


def test_error_midway_leaves_no_output(pipe: Pipeline, corpus: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    bad.write_text("".join(lines[:30]) + '{"id": "x"}\n' + "".join(lines[30:]), encoding="utf-8")
    out = tmp_path / "out" / "linked.jsonl"
    with pytest.raises(FormatError, match=r"bad\.jsonl:31: document has no 'text' key"):
        link(pipe, bad, out, batch_size=4)
    assert list(out.parent.iterdir()) == []  # neither output nor temporary file


def test_two_workers_write_the_same_bytes(pipe_dir: Path, pipe: Pipeline, corpus: Path,
                                          tmp_path: Path) -> None:
    link(pipe, corpus, tmp_path / "one.jsonl", batch_size=3, workers=1)
    link(pipe_dir, corpus, tmp_path / "two.jsonl", batch_size=3, workers=2)
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    with pytest.raises(ValueError, match="needs the pipeline folder"):
        list(link_stream(pipe, iter([]), workers=2))


def test_worker_errors_reach_the_caller(tmp_path: Path, corpus: Path) -> None:
    (tmp_path / "notapipe").mkdir()
    with pytest.raises(FileNotFoundError, match="not a pipeline folder"):
        list(link_stream(tmp_path / "notapipe", iter_documents(corpus), workers=2))


def test_plan_shards(tmp_path: Path) -> None:
    write_shards(tmp_path / "in", 3, 4)
    (tmp_path / "in" / "notes.md").write_text("not a shard", encoding="utf-8")
    assert [p.name for p in find_shards(tmp_path / "in")] == \
        ["part-00.jsonl", "part-01.jsonl.gz", "part-02.jsonl"]
    assert [p.name for p in find_shards(str(tmp_path / "in" / "*.jsonl"))] == \
        ["part-00.jsonl", "part-02.jsonl"]
    plan = plan_shards(tmp_path / "in", tmp_path / "out")
    assert plan[1] == (tmp_path / "in" / "part-01.jsonl.gz", tmp_path / "out" / "part-01.jsonl.gz")
    with pytest.raises(FileNotFoundError, match="no shard files"):
        find_shards(tmp_path / "empty-*")


def test_local_shards_resume(pipe: Pipeline, tmp_path: Path) -> None:
    shards = write_shards(tmp_path / "in", 3, 5)
    out = tmp_path / "out"
    out.mkdir()
    (out / "part-00.jsonl").write_text("done before\n", encoding="utf-8")
    record_writer(out / "part-00.jsonl", pipe.identity)  # as a run of this pipeline leaves it
    (out / ".part-02.jsonl.abc.tmp").write_text("left by a killed run", encoding="utf-8")
    results = link_shards(pipe, tmp_path / "in", out, batch_size=2)
    assert [(Path(r.source).name, r.skipped, r.documents) for r in results] == \
        [("part-00.jsonl", True, 0), ("part-01.jsonl.gz", False, 5), ("part-02.jsonl", False, 5)]
    assert (out / "part-00.jsonl").read_text(encoding="utf-8") == "done before\n"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == \
        ["part-00.jsonl", "part-01.jsonl.gz", "part-02.jsonl"]
    assert not list(out.glob(".*.tmp"))
    link(pipe, shards[2], tmp_path / "single.jsonl", batch_size=2)
    assert (out / "part-02.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()


def test_cli_link_gz_and_shards(pipe_dir: Path, pipe: Pipeline, corpus: Path,
                                tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["link", str(pipe_dir), str(corpus), "--out",
                            str(tmp_path / "cli.jsonl.gz"), "--batch-size", "8"])
    assert r.exit_code == 0, r.output
    link(pipe, corpus, tmp_path / "api.jsonl", batch_size=8)
    assert gzip.decompress((tmp_path / "cli.jsonl.gz").read_bytes()) == \
        (tmp_path / "api.jsonl").read_bytes()
    write_shards(tmp_path / "in", 2, 3)
    r = runner.invoke(app, ["link", str(pipe_dir), str(tmp_path / "in"), "--out",
                            str(tmp_path / "out"), "--shards"])
    assert r.exit_code == 0, r.output
    assert "linked 6 documents in 2 shards (0 already done)" in r.output
    r = runner.invoke(app, ["link", str(pipe_dir), str(tmp_path / "in"), "--out",
                            str(tmp_path / "out"), "--shards"])
    assert "linked 0 documents in 0 shards (2 already done)" in r.output


# ------------------------------------------------------------------ load-time overrides

TOP_1 = {"candidates.top_m": 1, "filter.threshold": 0.0}


def _names_per_span(pipeline: Pipeline, corpus: Path) -> int:
    cands = pipeline.candidates(read_documents(corpus))
    per_span: dict[tuple[int, int, int], set[str]] = {}
    for i, doc_cands in enumerate(cands):
        for c in doc_cands:
            per_span.setdefault((i, c.span.start, c.span.end), set()).add(c.name)
    return max(len(names) for names in per_span.values())


def test_load_overrides_change_search_and_decision_settings(pipe_dir: Path,
                                                            corpus: Path) -> None:
    assert _names_per_span(Pipeline.load(pipe_dir), corpus) > 1
    top1 = Pipeline.load(pipe_dir, TOP_1)
    assert _names_per_span(top1, corpus) == 1
    assert top1.filter.threshold == 0.0
    assert top1.config.candidates.top_m == 1


@pytest.mark.parametrize(("overrides", "message"), [
    ({"dft.R": 0.5}, "dft.R cannot change when a trained pipeline is loaded"),
    ({"dictionary.kb": []}, "allowed: candidates.*, filter.*, linker.*, ner.*"),
    ({"ner.options.device": "cpu"}, "tagger keeps what it was trained with; what can change "
                                    "when linking: none"),
    ({"filter.name": "xlnel.similarity.v1"}, "filter.name is fixed by training"),
    ({"candidates.top_m": 0}, "candidates.top_m"),
    ({"candidates.ngram_min": 3}, "candidates.ngram_min is fixed by training"),
    ({"filter.options.max_iter": 5},
     "xlnel.gbdt.v1 keeps the options it was trained with; those that can change when "
     "linking: none"),
    ({"nope": 1}, "nope: unknown key; keys that can change when linking: candidates.*"),
    ({"linker": {"overlap": "score"}},
     "linker: give the keys of the section one by one (linker.KEY=value)"),
    ({"filter.threshold": 2}, "less than or equal to 1 (got 2) (set by the override "
     "filter.threshold)"),
])
def test_load_overrides_that_cannot_apply_are_refused(pipe_dir: Path, overrides: dict,
                                                      message: str) -> None:
    from xlnel.errors import ConfigError
    from xlnel.pipeline import SavedPipeline

    pattern = re.escape(message)
    with pytest.raises(ConfigError, match=pattern):
        Pipeline.load(pipe_dir, overrides)
    if "top_m" not in message and "(got " not in message:  # values: when the pipeline loads
        with pytest.raises(ConfigError, match=pattern):
            SavedPipeline.of(pipe_dir, overrides)


def test_worker_processes_load_with_the_overrides(pipe_dir: Path, corpus: Path,
                                                  tmp_path: Path) -> None:
    from xlnel.pipeline import SavedPipeline

    link(Pipeline.load(pipe_dir, TOP_1), corpus, tmp_path / "one.jsonl", batch_size=3)
    link(SavedPipeline.of(pipe_dir, TOP_1), corpus, tmp_path / "two.jsonl", batch_size=3,
         workers=2)
    link(pipe_dir, corpus, tmp_path / "plain.jsonl", batch_size=3)
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert (tmp_path / "one.jsonl").read_bytes() != (tmp_path / "plain.jsonl").read_bytes()


def test_cli_link_set(pipe_dir: Path, corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["link", str(pipe_dir), str(corpus), "--out",
                            str(tmp_path / "cli.jsonl"), "--set", "candidates.top_m=1",
                            "--set", "filter.threshold=0.0"])
    assert r.exit_code == 0, r.output
    link(Pipeline.load(pipe_dir, TOP_1), corpus, tmp_path / "api.jsonl")
    assert (tmp_path / "cli.jsonl").read_bytes() == (tmp_path / "api.jsonl").read_bytes()
    r = runner.invoke(app, ["link", str(pipe_dir), "--text", "x", "--set", "dft.R=0.1"])
    assert r.exit_code != 0
    assert "dft.R cannot change" in str(r.exception) + r.output


def test_cross_encoder_inference_options_may_change_when_linking() -> None:
    from xlnel.errors import ConfigError
    from xlnel.pipeline import check_link_overrides

    config = load_config(None, {"filter.name": "xlnel.cross_encoder.v1"})
    check_link_overrides({"filter.options.inference_dtype": "bfloat16",
                          "filter.options.device": "cuda", "filter.threshold": 0.3,
                          "candidates.workers": 4, "linker.overlap": "longest"}, config)
    with pytest.raises(ConfigError, match="those that can change when linking: device, "
                                          "inference_batch_size, inference_dtype, quantize"):
        check_link_overrides({"filter.options.lr": 0.1}, config)


@pytest.mark.parametrize("generator", ["xlnel.tfidf_char.v1", "xlnel.dense.v1"])
def test_each_generator_declares_the_keys_training_fixes(generator: str) -> None:
    from xlnel.candidates.base import generator_class
    from xlnel.errors import ConfigError
    from xlnel.pipeline import check_link_overrides

    config = load_config(None, {"candidates.generator": generator})
    assert "use_idf" in generator_class(generator).trained_keys
    check_link_overrides({"candidates.top_m": 3, "candidates.workers": 2}, config)
    for key in ("candidates.use_idf", "candidates.options.model"):
        with pytest.raises(ConfigError, match="fixed by training"):
            check_link_overrides({key: 1}, config)
