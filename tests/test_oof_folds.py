"""benchmarks/_oof.py: every fold trains on the config's ``data.extra_train`` documents too,
never tests on them, and runs are cached under keys that hold the corpus's config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import _oof
from xlnel.errors import ConfigError


def _extra(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "text": "fever and ataxia", "entities": [
        {"start": 0, "end": 5, "concept_id": "C1"}]}) + "\n" for i in ids), encoding="utf-8")
    return path


@pytest.fixture
def tiny_corpus(monkeypatch: pytest.MonkeyPatch, tiny_config: Path) -> str:
    monkeypatch.setattr(_oof, "CORPORA", {"tiny": str(tiny_config)})
    monkeypatch.setenv("XLNEL_CACHE", str(tiny_config.parent / "cache"))
    return "tiny"


def test_extra_documents_end_every_training_part(tmp_path: Path, tiny_corpus: str) -> None:
    extra = str(_extra(tmp_path / "extra.jsonl", ["x1", "x2"]))
    own = _oof.fold_documents(tiny_corpus)
    with_extra = _oof.fold_documents(tiny_corpus, {"data.extra_train": [extra]})
    assert len(own) == len(with_extra) == _oof.FOLDS
    for (train, test), (train_x, test_x) in zip(own, with_extra, strict=True):
        assert [d.id for d in train_x] == [d.id for d in train] + ["x1", "x2"]
        assert [d.id for d in test_x] == [d.id for d in test]
    held_out = sorted(d.id for _, test in with_extra for d in test)
    assert len(held_out) == len(set(held_out)) and not {"x1", "x2"} & set(held_out)


def test_an_extra_document_may_not_reuse_a_corpus_id(tmp_path: Path, tiny_corpus: str) -> None:
    (train, _), *_ = _oof.fold_documents(tiny_corpus)
    extra = str(_extra(tmp_path / "extra.jsonl", [train[0].id]))
    with pytest.raises(ConfigError, match=r"data.extra_train\[0\]: document id"):
        _oof.fold_documents(tiny_corpus, {"data.extra_train": [extra]})


def test_cached_runs_are_keyed_by_the_corpus_config(tiny_corpus: str, tiny_config: Path) -> None:
    before = _oof.cache_path(tiny_corpus, "shipped", "")
    assert _oof.cache_path(tiny_corpus, "shipped", "") == before
    tiny_config.write_text(tiny_config.read_text(encoding="utf-8").replace("R: 0.2", "R: 0.3"),
                           encoding="utf-8")
    assert _oof.cache_path(tiny_corpus, "shipped", "") != before


def test_the_variants_page_says_what_each_corpus_trained_on() -> None:
    from benchmarks.accuracy_variants import _training

    corpora = {"diabetes": {}, "sclerosis": {}, "camoni-pooled": {}}
    assert _training({"corpora": corpora}) == (
        "diabetes, sclerosis: each fold trains on the corpus's own documents only.")
    recorded = {"corpora": corpora, "extra_train": {"diabetes": ["a.jsonl"], "sclerosis": []}}
    assert _training(recorded) == (
        "sclerosis: each fold trains on the corpus's own documents only; diabetes: each fold "
        "also trains on the config's `data.extra_train` documents.")
