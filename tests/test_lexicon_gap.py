"""The word matching and pair lookups of benchmarks/lexicon_gap.py."""

from __future__ import annotations

from benchmarks.lexicon_gap import matches, rendering_words, stems
from xlnel.dictionary.lexicon import Lexicon


def test_words_match_up_to_their_inflection() -> None:
    known = stems(["fines", "cou", "musculaire"])
    assert matches("fines", known) and matches("musculaires", known)
    assert matches("cou", known) and not matches("cous", known)  # short words: equal only
    assert not matches("fine", known)  # under five letters: no shared stem to rely on


def test_rendering_words_take_both_numbers() -> None:
    lexicon = Lexicon([("rib", "côte"), ("ribs", "côtes"), ("thin", "mince maigre")])
    assert rendering_words(lexicon, "fr", ["rib"]) == {"côte", "côtes"}
    assert rendering_words(lexicon, "fr", ["thin"]) == {"mince", "maigre"}
