"""Answers that look fine but are wrong are said so: other script, empty folder, id kinds."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.errors import FormatError
from xlnel.io import read_documents
from xlnel.io.jsonl import read_jsonl
from xlnel.scripts import ScriptCheck

runner = CliRunner()
HEBREW = "אני חולה סוכרת ורציתי לדעת מהם היתרונות של משאבת אינסולין"


@pytest.fixture()
def pipe(tmp_path, tiny_config) -> Path:
    names = tmp_path / "names.txt"
    names.write_text("headache\nweather\n", encoding="utf-8")
    text = tiny_config.read_text(encoding="utf-8").replace(
        "kb: ['tsv:", f"kb: ['names:{names}', 'tsv:")
    tiny_config.write_text(text, encoding="utf-8")
    out = tmp_path / "pipe"
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(out),
                            "--set", "filter.name=xlnel.similarity.v1", "--set",
                            "filter.options={}", "--set", "filter.threshold=0.9"])
    assert r.exit_code == 0, r.output
    return out


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_script_check_judges_letters():
    for text, lang, warns in [(HEBREW, "en", True), (HEBREW, "he", False),
                              ("She has diabetes.", "en", False), ("She has diabetes.", "he", True),
                              ("42 - 17 = 25", "en", False), (HEBREW, "xx", False)]:
        check = ScriptCheck(lang)
        check.add(text)
        assert check.finish() is warns, (text, lang)
        assert check.finish() is False  # once


def test_hebrew_through_english_pipeline_warns(tmp_path, pipe, caplog):
    src = tmp_path / "he.jsonl"
    src.write_text(json.dumps({"id": "h1", "text": HEBREW}, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        r = runner.invoke(app, ["link", str(pipe), str(src), "--out", str(tmp_path / "p.jsonl")])
    assert r.exit_code == 0, r.output
    assert any("Hebrew script" in m and "'en'" in m for m in _warnings(caplog))
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        r = runner.invoke(app, ["link", str(pipe), "--text", HEBREW])
    assert any("Hebrew script" in m for m in _warnings(caplog))
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        r = runner.invoke(app, ["link", str(pipe), str(pipe / "test.jsonl"), "--out",
                                str(tmp_path / "q.jsonl")])
    assert r.exit_code == 0 and not any("script" in m for m in _warnings(caplog))


def test_folder_without_brat_files_is_an_error(tmp_path, pipe):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "readme.md").write_text("not a corpus", encoding="utf-8")
    r = runner.invoke(app, ["link", str(pipe), str(folder), "--out", str(tmp_path / "p.jsonl")])
    assert isinstance(r.exception, FormatError) and "BRAT" in str(r.exception)
    assert not (tmp_path / "p.jsonl").exists()
    with pytest.raises(FormatError, match="without BRAT"):
        read_documents(folder)


def test_links_state_their_id_kind(tmp_path, pipe):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "d", "text": "A headache and asthma."}) + "\n",
                   encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    r = runner.invoke(app, ["link", str(pipe), str(src), "--out", str(out)])
    assert r.exit_code == 0, r.output
    raw = json.loads(out.read_text(encoding="utf-8"))["entities"]
    kinds = {e["text"]: (e["concept_id"], e["id_kind"]) for e in raw}
    assert kinds == {"headache": ("headache", "dictionary_name"), "asthma": ("C4", "concept")}
    links = read_jsonl(out)[0].entities
    assert [e.id_kind for e in links] == ["dictionary_name", "concept"]
    # Files without the field read as before; an unknown kind is refused.
    assert all(e.id_kind is None for d in read_jsonl(pipe / "test.jsonl") for e in d.entities)
    raw[0]["id_kind"] = "cui"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "d", "text": "A headache and asthma.", "entities": raw}),
                   encoding="utf-8")
    with pytest.raises(FormatError, match="id_kind"):
        read_jsonl(bad)


def test_pubtator_output_of_name_ids_warns(tmp_path, pipe, caplog):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "1", "text": "A headache and asthma."}) + "\n",
                   encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        r = runner.invoke(app, ["link", str(pipe), str(src), "--out", str(tmp_path / "p.pubtator")])
    assert r.exit_code == 0, r.output
    assert any("1 of the 2 links" in m and "id_kind" in m for m in _warnings(caplog))
