"""A pipeline folder is data: loading or linking it never unpickles anything."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.artifacts import PIPELINE_FORMAT
from xlnel.cli.main import app
from xlnel.errors import ArtifactError
from xlnel.pipeline import Pipeline

runner = CliRunner()


class _Touch:
    """Unpickling this creates the marker file: the proof that a pickle was executed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.fixture(scope="module")
def gbdt_pipeline(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("pickle")
    from tests.conftest import KB_ROWS, make_documents

    kb = root / "kb.tsv"
    kb.write_text("concept_id\tname\tpreferred\n" + "".join(
        f"{c}\t{n}\t{p}\n" for c, n, p in KB_ROWS), encoding="utf-8")
    docs = root / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in make_documents()), encoding="utf-8")
    config = root / "config.yaml"
    config.write_text(f"lang: en\ndata: {{train: '{docs}'}}\ndictionary: {{kb: ['tsv:{kb}']}}\n"
                      "filter: {name: xlnel.gbdt.v1, options: {folds: 2, max_iter: 10}}\n",
                      encoding="utf-8")
    pipe = root / "pipe"
    r = runner.invoke(app, ["train", str(config), "--out", str(pipe)])
    assert r.exit_code == 0, r.output
    return pipe, docs


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_gbdt_folder_holds_no_pickle(gbdt_pipeline):
    pipe, _ = gbdt_pipeline
    assert (pipe / "filter" / "trees.npz").is_file()
    assert not list(pipe.rglob("*.joblib")) and not list(pipe.rglob("*.pkl"))
    assert json.loads((pipe / "xlnel.json").read_text())["format"] == PIPELINE_FORMAT


def test_planted_pickle_is_never_executed(tmp_path, gbdt_pipeline):
    pipe, docs = gbdt_pipeline
    marker = tmp_path / "pwned"
    # Beside the arrays: ignored.
    beside = _copy(pipe, tmp_path / "beside")
    (beside / "filter" / "model.joblib").write_bytes(pickle.dumps(_Touch(marker)))
    r = runner.invoke(app, ["link", str(beside), str(docs), "--out", str(tmp_path / "p.jsonl")])
    assert r.exit_code == 0, r.output
    assert not marker.exists()
    # Instead of the arrays (a folder of the pickled format): refused with a message to retrain.
    old = _copy(pipe, tmp_path / "old")
    (old / "filter" / "trees.npz").unlink()
    (old / "filter" / "model.joblib").write_bytes(pickle.dumps(_Touch(marker)))
    r = runner.invoke(app, ["link", str(old), str(docs), "--out", str(tmp_path / "q.jsonl")])
    assert r.exit_code != 0
    assert "model.joblib" in str(r.exception) and "retrain" in str(r.exception)
    assert not marker.exists() and not (tmp_path / "q.jsonl").exists()


def test_other_format_names_folder_and_versions(tmp_path, gbdt_pipeline):
    pipe, _ = gbdt_pipeline
    old = _copy(pipe, tmp_path / "v1")
    (old / "xlnel.json").write_text(json.dumps({"xlnel_version": "0.0.1"}))
    with pytest.raises(ArtifactError) as e:
        Pipeline.load(old)
    msg = str(e.value)
    assert str(old) in msg and "0.0.1" in msg and "format 1" in msg
    assert f"format {PIPELINE_FORMAT}" in msg
