"""Interrupted writes leave nothing behind; missing or empty inputs and first-run waits are said."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.errors import ConfigError
from xlnel.io import write_jsonl

runner = CliRunner()

_WRITER = """
import sys, time
from xlnel.io._atomic import atomic_write
with atomic_write(sys.argv[1]) as f:
    f.write("half")
    f.flush()
    print("ready", flush=True)
    time.sleep(60)
"""


def test_sigterm_removes_the_temporary_file(tmp_path):
    target = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert list(tmp_path.glob(".out.jsonl.*.tmp"))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode != 0
    assert not list(tmp_path.iterdir())  # neither the output nor a temporary file


def test_stale_temporaries_of_the_target_are_removed(tmp_path):
    target = tmp_path / "out.jsonl"
    old = tmp_path / ".out.jsonl.0123456789ab.tmp"
    live = tmp_path / ".out.jsonl.ba9876543210.tmp"  # a write that started after this process
    other = tmp_path / ".other.jsonl.0123456789ab.tmp"
    for p in (old, live, other):
        p.write_text("left", encoding="utf-8")
    past = time.time() - 3600
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    os.utime(live, (time.time() + 60, time.time() + 60))
    write_jsonl(target, [])
    assert not old.exists() and live.exists() and other.exists() and target.exists()


def test_stale_pipeline_save_folders_are_removed(tmp_path, tiny_config):
    stale = tmp_path / ".pipe.ab12cd_3"
    stale.mkdir()
    (stale / "config.yaml").write_text("half", encoding="utf-8")
    past = time.time() - 3600
    os.utime(stale, (past, past))
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(tmp_path / "pipe"),
                            "--set", "filter.name=xlnel.similarity.v1",
                            "--set", "filter.options={}"])
    assert r.exit_code == 0, r.output
    assert not stale.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pipe.")]


def test_missing_extra_dictionary_names_the_key(tmp_path, tiny_config):
    missing = tmp_path / "nope.tsv"
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(tmp_path / "p"),
                            "--set", f"dictionary.extra=['{missing}']"])
    assert isinstance(r.exception, ConfigError), r.output
    assert "dictionary.extra[0]" in str(r.exception) and str(missing) in str(r.exception)
    assert "Errno" not in str(r.exception)


def test_empty_training_file_says_so(tmp_path, tiny_config):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(tmp_path / "p"),
                            "--set", f"data.train={empty}"])
    assert isinstance(r.exception, ConfigError)
    assert f"no documents in {empty}" in str(r.exception)


def test_first_default_run_says_it_trains_and_where(tmp_path, monkeypatch, tiny_config):
    pipe = tmp_path / "pipe"
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(pipe),
                            "--set", "filter.name=xlnel.similarity.v1",
                            "--set", "filter.options={}"])
    assert r.exit_code == 0
    monkeypatch.setenv("XLNEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("xlnel.defaults.default_pipeline_dir", lambda progress=False: pipe)
    r = runner.invoke(app, ["link", "default", "--text", "asthma"])
    assert r.exit_code == 0, r.output
    assert "training the default" in r.output and str(tmp_path / "cache") in r.output
    (tmp_path / "cache" / "pipelines").mkdir(parents=True)
    monkeypatch.setattr("xlnel.defaults.default_pipeline_path", lambda: pipe)
    r = runner.invoke(app, ["link", "default", "--text", "asthma"])
    assert "training the default" not in r.output  # trained: nothing to say


@pytest.mark.parametrize("signum", [signal.SIGTERM])
def test_sigterm_handler_is_restored(signum):
    from xlnel.io._atomic import sigterm_as_interrupt

    with sigterm_as_interrupt():
        assert signal.getsignal(signum) is not signal.SIG_DFL
    assert signal.getsignal(signum) is signal.SIG_DFL
