"""Every committed results file is in the one result schema, and write_result writes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from benchmarks import _common

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads(_common.SCHEMA_FILE.read_text(encoding="utf-8"))
FILES = sorted(_common.RESULTS.glob("*.json"))


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["schema"]["const"] == _common.SCHEMA


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_committed_results_file_follows_the_schema(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)
    module = ROOT / "benchmarks" / f"{data['benchmark']}.py"
    assert module.is_file(), f"{path.name}: no benchmark module {module.name}"


def test_write_result_writes_the_envelope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    script = str(ROOT / "benchmarks" / "hrm_speed.py")
    monkeypatch.setattr(sys, "argv", [script, "--names", "1000", "--note", "a b"])
    path = _common.write_result("x", {"settings": {"k": 5}, "speed": 1.5}, settings={"n": 2})
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)
    assert data["benchmark"] == "hrm_speed"
    assert data["command"] == "python -m benchmarks hrm_speed --names 1000 --note 'a b'"
    assert data["settings"] == {"k": 5, "n": 2} and data["results"] == {"speed": 1.5}
    assert _common.read_figures("x") == {"speed": 1.5}
    assert _common.read_figures("missing", {}) == {}
    with pytest.raises(FileNotFoundError, match="missing.json"):
        _common.read_result("missing")


def test_write_result_fields_override_the_provenance(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    path = _common.write_result("y", {"f1": 0.5}, benchmark="r_sweep", command="bash x.sh")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["benchmark"], data["command"]) == ("r_sweep", "bash x.sh")


def test_read_result_refuses_a_file_out_of_schema(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    (tmp_path / "old.json").write_text('{"f1": 0.5}', encoding="utf-8")
    with pytest.raises(ValueError, match="old.json: schema None"):
        _common.read_result("old")


def test_command_line_of_other_programs_is_kept_as_called() -> None:
    assert _common.command_line(["/usr/bin/pytest", "-k", "a b"]) == "/usr/bin/pytest -k 'a b'"


def test_list_names_every_benchmark() -> None:
    run = subprocess.run([sys.executable, "-m", "benchmarks", "--list"], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    names = [line.split()[0] for line in run.stdout.splitlines()]
    assert {"cv_accuracy", "hrm_speed", "tables"} <= set(names)
    assert not [n for n in names if n.startswith("_")]
    unknown = subprocess.run([sys.executable, "-m", "benchmarks", "nope"], cwd=ROOT,
                             capture_output=True, text=True)
    assert unknown.returncode == 2 and "--list" in unknown.stderr


def test_a_benchmark_runs_by_name() -> None:
    run = subprocess.run([sys.executable, "-m", "benchmarks", "tables", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert "--check" in run.stdout


def test_the_gpu_is_recorded_from_nvidia_smi_when_torch_is_not_loaded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H200'\necho 'NVIDIA H200'\n", encoding="utf-8")
    smi.chmod(0o755)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert _common.provenance()["machine"]["gpu"] == "NVIDIA H200"
    smi.write_text("#!/bin/sh\nexit 9\n", encoding="utf-8")  # no driver: nothing recorded
    assert "gpu" not in _common.provenance()["machine"]
