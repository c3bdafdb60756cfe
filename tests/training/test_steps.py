from __future__ import annotations

from pathlib import Path

import pytest

from xlnel.config import dump_config, load_config
from xlnel.errors import ConfigError
from xlnel.ner.base import TAGGERS, SpanTagger
from xlnel.training.steps import load_pretrained_tagger
from xlnel.types import Document, Span


class _SavedTagger(SpanTagger):
    registered_name = "test.saved.v1"

    def fit(self, documents, progress=False):
        return self

    def predict_batch(self, documents: list[Document], progress=False) -> list[list[Span]]:
        return [[] for _ in documents]

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)

    @classmethod
    def load(cls, directory, config, lang):
        return cls(config, lang)


def _saved_pipeline(folder: Path, data: dict[str, object]) -> Path:
    """A pipeline folder whose config.yaml trained ``test.saved.v1`` on ``data``."""
    (folder / "ner").mkdir(parents=True)
    overrides = {"ner.name": _SavedTagger.registered_name}
    overrides.update({f"data.{k}": v for k, v in data.items()})
    (folder / "config.yaml").write_text(dump_config(load_config(None, overrides)),
                                        encoding="utf-8")
    return folder


@pytest.mark.parametrize("saved, given", [
    ({"train": "./a.jsonl"}, {"train": "a.jsonl"}),
    ({"train": "brat/"}, {"train": "brat"}),
    ({"train": "a.jsonl", "test": "sub/../b.jsonl"}, {"train": "a.jsonl", "test": "b.jsonl"}),
    ({"train": "a.jsonl", "extra_train": ["./c.jsonl"]},
     {"train": "a.jsonl", "extra_train": ["c.jsonl"]}),
    ("absolute", {"train": "a.jsonl"}),
])
def test_a_tagger_saved_with_another_spelling_of_the_same_paths_is_reused(
        tmp_path, monkeypatch, saved, given):
    """The saved data section names the same files in another spelling (``./``, a trailing
    slash, ``..``, an absolute path): the tagger is reused, not refused as trained on other
    data."""
    TAGGERS.register(_SavedTagger)
    monkeypatch.chdir(tmp_path)
    if saved == "absolute":
        saved = {"train": str(tmp_path / "a.jsonl")}
    pipe = _saved_pipeline(tmp_path / "first", saved)
    overrides = {"ner.name": _SavedTagger.registered_name, "ner.pretrained": str(pipe)}
    overrides.update({f"data.{k}": v for k, v in given.items()})
    tagger = load_pretrained_tagger(load_config(None, overrides))
    assert isinstance(tagger, _SavedTagger)


def test_a_tagger_saved_with_other_data_files_is_refused(tmp_path, monkeypatch):
    TAGGERS.register(_SavedTagger)
    monkeypatch.chdir(tmp_path)
    pipe = _saved_pipeline(tmp_path / "first", {"train": "./a.jsonl"})
    config = load_config(None, {"ner.name": _SavedTagger.registered_name,
                                "ner.pretrained": str(pipe), "data.train": "other/a.jsonl"})
    with pytest.raises(ConfigError, match="trained with data"):
        load_pretrained_tagger(config)
