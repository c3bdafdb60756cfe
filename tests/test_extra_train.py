"""``data.extra_train``: more annotated files that every training set takes, never a test set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlnel.config import load_config
from xlnel.errors import ConfigError
from xlnel.pipeline import load_training_documents
from xlnel.training.keys import config_parts
from xlnel.training.recipe import step_keys
from xlnel.training.steps import check_input_files


def _extra(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "text": "fever and ataxia", "entities": [
        {"start": 0, "end": 5, "concept_id": "C1"}]}) + "\n" for i in ids), encoding="utf-8")
    return path


def test_extra_documents_train_in_every_split_and_never_test(tmp_path: Path, tiny_config: Path
                                                              ) -> None:
    extra = _extra(tmp_path / "extra.jsonl", ["x1", "x2"])
    base_train, base_test = load_training_documents(load_config(tiny_config))
    train, test = load_training_documents(load_config(tiny_config,
                                                      {"data.extra_train": [str(extra)]}))
    assert [d.id for d in train] == [d.id for d in base_train] + ["x1", "x2"]
    assert [d.id for d in test] == [d.id for d in base_test]
    for fold in range(3):
        folded = {"data.folds": 3, "data.fold": fold, "data.extra_train": [str(extra)]}
        train, test = load_training_documents(load_config(tiny_config, folded))
        assert [d.id for d in train][-2:] == ["x1", "x2"]
        assert not {"x1", "x2"} & {d.id for d in test}


def test_extra_documents_change_the_cache_keys_only_when_given(tmp_path: Path,
                                                                tiny_config: Path) -> None:
    extra = _extra(tmp_path / "extra.jsonl", ["x1"])
    plain = load_config(tiny_config)
    assert "extra_train" not in config_parts(plain)["data"]["data"]  # earlier keys hold
    with_extra = load_config(tiny_config, {"data.extra_train": [str(extra)]})
    assert step_keys(with_extra)["filter"] != step_keys(plain)["filter"]


def test_bad_extra_files(tmp_path: Path, tiny_config: Path) -> None:
    missing = load_config(tiny_config, {"data.extra_train": [str(tmp_path / "none.jsonl")]})
    with pytest.raises(ConfigError, match=r"data.extra_train\[0\]: no such file"):
        check_input_files(missing)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"data.extra_train\[0\]: no documents in"):
        load_training_documents(load_config(tiny_config, {"data.extra_train": [str(empty)]}))
    first, again = _extra(tmp_path / "a.jsonl", ["x1"]), _extra(tmp_path / "b.jsonl", ["x1"])
    with pytest.raises(ConfigError, match=r"data.extra_train\[1\]: document id 'x1' of .*b.jsonl"):
        load_training_documents(load_config(tiny_config,
                                            {"data.extra_train": [str(first), str(again)]}))
