"""benchmarks/dictionary_e2e.py: its loss accounting on a hand-made out-of-fold run, and its
variants."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchmarks import _oof
from benchmarks.dictionary_e2e import exact_matches, join, variants
from xlnel.types import Candidate, Document, Link, Span


def _run() -> _oof.OutOfFold:
    text = "sugar and morning pain"
    gold = Document("d", text, (Link(0, 5, "sugar"), Link(18, 22, "pain")))
    sugar, morning, pain = Span(0, 5, "sugar"), Span(10, 17, "morning"), Span(18, 22, "pain")
    cands = [Candidate(sugar, "C1", "sugar", 1.0, "corpus", 0.9),
             Candidate(sugar, "C2", "sugars", 0.8),
             Candidate(morning, "C3", "morning", 1.0, "corpus", 0.3),
             Candidate(pain, "C4", "pains", 0.7)]
    pred = Document("d", text, (Link(0, 5, "sugar", ("C1",)), Link(10, 17, "morning", ("C3",))))
    return _oof.OutOfFold([gold], [cands], [np.ones(4)], [0.5], [pred], [])


def test_exact_matches_count_spans_not_candidates():
    # two spans match exactly (sugar, morning), both linked; one of them is gold
    assert exact_matches(_run()) == {"spans": 2, "spans_linked": 2, "gold": 1, "gold_linked": 1}


def test_join_keeps_the_candidates_of_every_run():
    joined = join([_run(), _run()])
    assert [d.id for d in joined.gold] == ["0:d", "1:d"]
    assert exact_matches(joined) == {"spans": 4, "spans_linked": 4, "gold": 2, "gold_linked": 2}


def test_the_tiers_apply_to_both_only():
    tiers = {"candidates.generated_min_score": 0.8, "candidates.generated_min_chars": 4}
    table = variants(Path("built.tsv"), prune=2, tiers=tiers)
    assert all(key not in table["reference"] for key in tiers)
    assert all(key not in table["built"] for key in tiers)
    assert table["both"]["candidates.generated_min_chars"] == 4
    assert table["built"]["dft.prune"] == table["both"]["dft.prune"] == 2


def test_built_set_adds_variants_with_their_overrides():
    assert set(variants(Path("built.tsv"))) == {"reference", "built", "both"}
    table = variants(Path("built.tsv"), tiers={"candidates.generated_min_chars": 4},
                     with_built={"filter.options.concepts": True})
    assert list(table)[3:] == ["built_set", "both_set"]
    assert "filter.options.concepts" not in table["reference"]
    assert "filter.options.concepts" not in table["built"]
    assert table["built_set"] == {**table["built"], "filter.options.concepts": True}
    assert table["both_set"]["candidates.generated_min_chars"] == 4
    assert table["both_set"]["filter.options.concepts"] is True
