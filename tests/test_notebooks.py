"""The walkthrough notebook runs end to end on the tiny fixtures (so it cannot rot)."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "walkthrough.ipynb"


def test_walkthrough_notebook_runs(tmp_path, tiny_config, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the kernel inherits it; see tests/experiments
    nb = nbformat.read(NOTEBOOK, as_version=4)
    first = nb.cells[0]
    assert "parameters" in first.metadata.get("tags", []), "the first cell holds the parameters"
    first.source = (f"ROOT = {str(tmp_path)!r}\nCONFIG = {str(tiny_config)!r}\n"
                    f"OUT = {str(tmp_path / 'nb')!r}\nR_VALUES = [0.0, 0.3]\nSEEDS = 1\n")
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    assert "F1" in outputs and "span_f1" in outputs
    assert (tmp_path / "nb" / "r_sweep" / "runs.jsonl").is_file()
    assert any("image/png" in o.get("data", {}) for o in nb.cells[-1].outputs)
