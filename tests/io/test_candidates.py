"""Candidates on disk: JSON lines, with the entry's provenance when the candidate has one."""

from __future__ import annotations

import json
from pathlib import Path

from xlnel.io.candidates import read_candidates, write_candidates
from xlnel.types import Candidate, Span


def test_candidates_round_trip_with_their_provenance(tmp_path: Path) -> None:
    span = Span(4, 9, "sugar", "ו")
    cands = [[Candidate(span, "C1", "sugar", 1.0, "translated", 0.25),
              Candidate(span, "C2", "Sugar", 0.9, "kb"), Candidate(span, "C3", "sugars", 0.5)],
             []]
    write_candidates(tmp_path / "c.jsonl", cands)
    assert read_candidates(tmp_path / "c.jsonl") == cands


def test_rows_without_provenance_read_as_unknown(tmp_path: Path) -> None:
    row = [0, 5, "sugar", "", "C1", "sugar", 0.75]
    (tmp_path / "c.jsonl").write_text(json.dumps([row]) + "\n", encoding="utf-8")
    assert read_candidates(tmp_path / "c.jsonl") == [
        [Candidate(Span(0, 5, "sugar"), "C1", "sugar", 0.75, None, None)]]
