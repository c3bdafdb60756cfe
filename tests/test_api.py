"""The public Python API: ``xlnel.load`` and ``Pipeline.link`` / ``Pipeline.pipe``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import xlnel
from xlnel.config import load_config
from xlnel.errors import ArtifactError, ConfigError
from xlnel.pipeline import Pipeline, train
from xlnel.types import Document, Link


@pytest.fixture()
def pipe_dir(tmp_path: Path, tiny_config: Path) -> Path:
    cfg = load_config(tiny_config, {"filter.name": "xlnel.similarity.v1", "filter.options": {},
                                    "filter.threshold": 0.9})
    train(cfg, tmp_path / "pipe")
    return tmp_path / "pipe"


def test_import_stays_light() -> None:
    code = ("import sys, xlnel; heavy = [m for m in ('xlnel.pipeline', 'numpy', 'torch', "
            "'sklearn') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_load_folder_and_link_a_text(pipe_dir: Path) -> None:
    nlp = xlnel.load(pipe_dir)
    assert isinstance(nlp, Pipeline)
    text = "Known diabetes and HYPERTENSION."
    links = nlp.link(text)
    assert all(isinstance(x, Link) for x in links)
    assert [(text[x.start:x.end], x.concept_id) for x in links] == [
        ("diabetes", "C1"), ("HYPERTENSION", "C2")]


def test_link_a_batch_a_document_and_a_stream(pipe_dir: Path) -> None:
    nlp = xlnel.load(str(pipe_dir))
    texts = ["She has asthma.", "Nothing to see.", "Migraine and insulin."]
    batch = nlp.link(texts)
    assert [[x.concept_id for x in links] for links in batch] == [["C4"], [], ["C5", "C3"]]
    assert list(nlp.pipe(iter(texts), batch_size=2)) == batch
    assert nlp.link(tuple(texts)) == batch
    doc = nlp.link(Document("d1", texts[0]))
    assert isinstance(doc, Document) and doc.id == "d1"
    assert list(doc.entities) == batch[0]
    assert nlp.link([]) == []


def test_pipe_on_worker_processes_gives_the_links_in_order(pipe_dir: Path) -> None:
    nlp = xlnel.load(pipe_dir, {"filter.threshold": 0.9})
    texts = ["She has asthma.", "Nothing to see.", "Migraine and insulin.", "asthma"] * 3
    one = list(nlp.pipe(texts, batch_size=2))
    assert list(nlp.pipe(iter(texts), batch_size=2, workers=2)) == one
    with pytest.raises(ValueError, match="workers"):
        list(nlp.pipe(texts, workers=0))


def test_pipe_on_workers_needs_a_pipeline_loaded_from_a_folder(pipe_dir: Path) -> None:
    nlp = xlnel.load(pipe_dir)
    in_memory = Pipeline(nlp.config, nlp.dictionary, nlp.generator, nlp.filter)
    with pytest.raises(ValueError, match="loaded from its folder"):
        list(in_memory.pipe(["asthma"], workers=2))


def test_pipe_refuses_a_zero_batch(pipe_dir: Path) -> None:
    with pytest.raises(ValueError, match="batch size"):
        list(xlnel.load(pipe_dir).pipe(["asthma"], batch_size=0))


def test_load_with_overrides(pipe_dir: Path) -> None:
    assert xlnel.load(pipe_dir, {"filter.threshold": 0.5}).filter.threshold == 0.5
    with pytest.raises(ConfigError, match="dft.R"):
        xlnel.load(pipe_dir, {"dft.R": 0.5})


def test_load_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not a pipeline folder"):
        xlnel.load(tmp_path / "absent")
