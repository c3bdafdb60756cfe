"""The shipped configs: every pipeline on every corpus validates, and each trains (slow)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xlnel.candidates.base import generator_class
from xlnel.config import PipelineConfig, load_config
from xlnel.filtering.base import filter_class

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))  # a pipeline on a corpus
ABLATIONS = sorted((ROOT / "configs" / "ablations").glob("*.yaml"))
PIPELINES = sorted((ROOT / "configs" / "pipelines").glob("*.yaml"))
CORPORA = sorted((ROOT / "configs" / "data").glob("*.yaml"))
HEBREW_NAMES = ("both", "built")  # pipelines of the built Hebrew dictionary
BUILT = ROOT / "dictionary" / "built" / "adapt-he" / "attested.tsv"


def _pairs() -> list[tuple[Path, Path]]:
    return [(p, c) for p in PIPELINES for c in CORPORA
            if p.stem not in HEBREW_NAMES or c.stem.startswith("camoni")]


def _check(cfg: PipelineConfig) -> None:
    generator_class(cfg.candidates.generator)
    filter_class(cfg.filter.name)(cfg.filter, cfg.lang)  # options are validated on creation
    assert cfg.data.train is not None


def test_configs_are_shipped() -> None:
    assert {p.stem for p in CONFIGS} >= {"camoni-diabetes", "camoni-sclerosis",
                                         "camoni-depression", "bc5cdr"}
    assert {p.stem for p in PIPELINES} >= {"gbdt", "transformer", "tagger", "dense"}
    assert {p.stem for p in CORPORA} == {"camoni-diabetes", "camoni-sclerosis",
                                         "camoni-depression", "bc5cdr"}


@pytest.mark.parametrize("path", CONFIGS + ABLATIONS, ids=lambda p: p.name)
def test_config_validates_and_names_registered_stages(path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    _check(load_config(path))


@pytest.mark.parametrize("pipeline,corpus", _pairs(),
                         ids=[f"{p.stem}+{c.stem}" for p, c in _pairs()])
def test_every_pipeline_validates_on_every_corpus(pipeline: Path, corpus: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    cfg = load_config(pipeline, {"include": str(corpus.relative_to(ROOT))})
    _check(cfg)
    assert cfg.lang == ("en" if corpus.stem == "bc5cdr" else "he")


def test_shipped_gbdt_configs_are_the_gbdt_pipeline_on_their_corpus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for corpus in CORPORA:
        shipped = load_config(ROOT / "configs" / f"{corpus.stem}.yaml").model_dump()
        joined = load_config(ROOT / "configs" / "pipelines" / "gbdt.yaml",
                             {"include": str(corpus)}).model_dump()
        # decisions chosen per corpus by cross-validation (docs/results.md)
        for part, key in (("linker", "propagate"), ("linker", "abbreviations"), ("dft", "R"),
                          ("dft", "crossfit"), ("linker", "lexicon"), ("linker", "lexicon_rate"),
                          ("linker", "overlap"), ("linker", "consistency"),
                          ("data", "extra_train")):
            shipped[part][key] = joined[part][key]
        for option in ("l2_regularization", "lexical", "ngrams", "kinds", "tagger", "extended",
                       "concepts"):
            shipped["filter"]["options"].pop(option, None)
        assert shipped == joined, corpus.stem


def _quick(cfg: PipelineConfig, extra: Path) -> dict[str, Any]:
    """Overrides that train ``cfg`` in seconds to minutes: a handful of documents, one epoch."""
    quick: dict[str, Any] = {"data.max_documents": 12}
    if cfg.data.extra_train:  # hundreds of documents; their files are checked, not read
        quick["data.extra_train"] = []
    if cfg.filter.name == "xlnel.cross_encoder.v1":
        quick["filter.options.epochs"] = 1
        if cfg.filter.options.get("train_layers") is None:  # the top layer: half the CPU time
            quick["filter.options.train_layers"] = 1
    if cfg.ner.name is not None:  # enough for the tagger to find spans the filter learns from
        quick.update({"data.max_documents": 40, "ner.options.epochs": 3,
                      "ner.options.head_lr": 1e-2})
    if cfg.dictionary.extra and not BUILT.is_file():  # not built here: a stand-in of that format
        quick["dictionary.extra"] = [str(extra)]
    if any(kb.startswith("mesh:") and not Path(kb[5:].split("?")[0]).exists()
           for kb in cfg.dictionary.kb):
        # MeSH not fetched here (python -m benchmarks fetch_mesh): the names of ../shared stand in
        quick["dictionary.kb"] = [f"tsv:{DATA}/kb/mesh_names.tsv"]
    return quick


def _training_cases() -> list[tuple[str, Path, dict[str, Any]]]:
    cases = [(p.relative_to(ROOT).as_posix(), p, {}) for p in CONFIGS + ABLATIONS]
    for pipeline in PIPELINES:
        corpus = ROOT / "configs" / "data" / "camoni-diabetes.yaml"
        cases.append((f"{pipeline.relative_to(ROOT).as_posix()}+{corpus.stem}", pipeline,
                      {"include": str(corpus)}))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("name,path,overrides", _training_cases(),
                         ids=[c[0] for c in _training_cases()])
def test_shipped_config_trains(name: str, path: Path, overrides: dict[str, Any],
                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not DATA.is_dir():
        pytest.skip(f"no corpora at {DATA}")
    from xlnel.dictionary.dictionary import Dictionary
    from xlnel.io import load_kb
    from xlnel.pipeline import train
    from xlnel.training.steps import check_input_files

    monkeypatch.chdir(ROOT)  # the shipped configs name their data relative to the root
    extra = tmp_path / "he-names.tsv"
    Dictionary.from_concepts(load_kb(f"names:{DATA}/camoni/hebrew_umls_names.txt")).save(extra)
    cfg = load_config(path, overrides)
    check_input_files(cfg.model_copy(update={"dictionary": cfg.dictionary.model_copy(
        update={"extra": []})}))  # the files it names exist (extra: built or stood in below)
    cfg = load_config(path, {**overrides, **_quick(cfg, extra)})
    report = train(cfg, tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "config.yaml").is_file(), name
    assert report["filter"]["threshold"] is not None
