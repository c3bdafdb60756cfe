from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from xlnel.experiments import parse_grid
from xlnel.experiments.runner import plan_cells

ABLATIONS = sorted((Path(__file__).resolve().parents[2] / "configs" / "ablations").glob("*.yaml"))


def test_ablations_are_shipped():
    assert {p.stem for p in ABLATIONS} >= {"tf-vs-tfidf", "max-words", "window", "data-size"}


@pytest.mark.parametrize("path", ABLATIONS, ids=lambda p: p.stem)
def test_documented_grid_plans(path):
    header = "".join(line[1:] for line in path.read_text().splitlines() if line.startswith("#"))
    grid = parse_grid(re.findall(r"--grid (\S+)", header))
    assert grid, f"{path.name} documents no --grid flag"
    planned = plan_cells(path, grid, [0])
    assert len(planned) == math.prod(len(v) for v in grid.values())
    for cell, cfg in planned:
        dumped = cfg.model_dump(mode="json")
        for key, value in cell.axes:
            node = dumped
            for part in key.split("."):
                node = node[part]
            assert node == value
