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


def _counts(spans: int, linked: int, gold: int, gold_linked: int,
            prefix: str = "") -> dict[str, int]:
    return {f"{prefix}spans": spans, f"{prefix}spans_linked": linked, f"{prefix}gold": gold,
            f"{prefix}gold_linked": gold_linked}


def test_exact_matches_count_spans_not_candidates():
    # two spans match exactly (sugar, morning), both linked; one of them is gold; the fold's
    # training documents had no gold mention, so both are novel
    assert exact_matches(_run(), {}) == {**_counts(2, 2, 1, 1), **_counts(2, 2, 1, 1, "novel_")}


def test_exact_matches_of_texts_seen_as_gold_are_not_novel():
    # "sugar" was a gold mention in the training documents: only "morning" is novel
    seen = {"d": frozenset({"sugar", "pain"})}
    assert exact_matches(_run(), seen) == {**_counts(2, 2, 1, 1), **_counts(1, 1, 0, 0, "novel_")}


def test_join_keeps_the_candidates_of_every_run():
    joined = join([_run(), _run()])
    assert [d.id for d in joined.gold] == ["0:d", "1:d"]
    seen = {"0:d": frozenset({"sugar"})}  # the first run's fold saw "sugar", the second none
    assert exact_matches(joined, seen) == {**_counts(4, 4, 2, 2), **_counts(3, 3, 1, 1, "novel_")}


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
    with_reference = variants(Path("built.tsv"), with_built={"filter.options.concepts": True},
                              with_reference=True)
    assert list(with_reference)[3:] == ["built_set", "both_set", "reference_set"]
    assert with_reference["reference_set"] == {**table["reference"],
                                               "filter.options.concepts": True}
    assert "reference_set" not in variants(Path("built.tsv"), with_reference=True)
