"""benchmarks/adapt_new_language.py on hand-made results: pairing two runs, scoring a form."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.adapt_new_language import paired_with, score_dictionary, with_intervals
from xlnel.analysis.coverage import GoldItem
from xlnel.analysis.lookup import LookupForm
from xlnel.dictionary.dictionary import Dictionary, Entry

SETTINGS = {"limit": 500, "whole_up_to": 1000, "seed": 0, "kb_concepts": None}


def run(hits: dict[str, str], hybrid: dict[str, str] | None = None) -> dict[str, Any]:
    """A payload as the benchmark writes it: per language, the built dictionary's hits at 1."""
    results: dict[str, Any] = {}
    for lang, h in hits.items():
        adapted = with_intervals([(c == "1", c == "1") for c in h], 0.0)
        if hybrid is not None:
            adapted["hybrid"] = with_intervals([(c == "1", True) for c in hybrid[lang]], 0.0)
        results[lang] = {"adapted": adapted}
    return {"settings": dict(SETTINGS),
            "gold": {lang: {"rows_evaluated": len(h)} for lang, h in hits.items()},
            "results": results}


def as_read(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as read_result gives it back (settings in the envelope)."""
    return {"settings": payload["settings"], "results": payload}


def test_with_intervals_keeps_the_hits_at_one_in_item_order() -> None:
    out = with_intervals([(True, True), (False, True), (True, True)], 0.0)
    assert out["hits@1"] == "101" and out["accuracy@1"] == round(2 / 3, 4)


def test_paired_with_pairs_each_language_and_ranking() -> None:
    old = run({"fr": "1100000000", "de": "1111"}, {"fr": "1111100000", "de": "1111"})
    new = run({"fr": "1111010000", "de": "1111"}, {"fr": "1111100000", "de": "1110"})
    paired_with(as_read(old), new, "old")
    fr = new["results"]["fr"]["paired"]
    assert fr["with"] == "old"
    assert (fr["adapted"]["delta"], fr["adapted"]["b_only"], fr["adapted"]["a_only"]) == (
        0.3, 3, 0)
    assert fr["hybrid"]["delta"] == 0.0 and fr["hybrid"]["p"] == 1.0
    assert new["results"]["de"]["paired"]["hybrid"]["delta"] == -0.25


@pytest.mark.parametrize("change, message", [
    (lambda p: p["settings"].update(limit=200), "limit"),
    (lambda p: p["gold"]["fr"].update(rows_evaluated=9), "other rows"),
    (lambda p: p["results"]["fr"]["adapted"].pop("hits@1"), "hits@1"),
])
def test_paired_with_refuses_other_rows(change: Any, message: str) -> None:
    old, new = run({"fr": "1100"}), run({"fr": "1111"})
    change(old)
    with pytest.raises(ValueError, match=message):
        paired_with(as_read(old), new, "old")


def test_score_dictionary_scores_the_form_beside_the_plain_lookup() -> None:
    built = Dictionary([Entry("enurese nocturne", "C1", "composed", 0.9),
                        Entry("enuresie diurne", "C2", "composed", 0.9)])
    gold = [GoldItem("énurésie nocturne", ("C1",)), GoldItem("énurésie diurne", ("C2",))]
    out = score_dictionary("fr", gold, built, form=LookupForm(fold_accents=True))
    forms = out["forms"]
    assert forms["ranking"] == "cosine" and forms["fold_accents"] and forms["stopwords"] == 0
    assert forms["items"] == out["items"] == 2 and len(forms["hits@1"]) == 2
    assert forms["linked_at_1"] >= out["linked_at_1"]
    assert "hybrid" not in forms  # no encoder given
    assert "forms" not in score_dictionary("fr", gold, built)
