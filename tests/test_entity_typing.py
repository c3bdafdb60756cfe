"""The type accuracy of benchmarks/entity_typing.py, on a hand-worked abstract."""

from __future__ import annotations

from benchmarks.entity_typing import type_accuracy
from xlnel.types import Document, Link

TEXT = "cocaine abuse and aspirin; fever"


def _link(text: str, cid: str, typ: str | None) -> Link:
    start = TEXT.index(text)
    return Link(start, start + len(text), text, (cid,), type=typ)


GOLD = Document("d", TEXT, (_link("cocaine abuse", "D1", "Disease"),
                            _link("aspirin", "C1", "Chemical"),
                            _link("fever", "D2", "Disease")))
PRED = Document("d", TEXT, (_link("cocaine abuse", "D1", "Disease"),   # right span and type
                            _link("aspirin", "C1", "Disease"),         # right span, wrong type
                            _link("fever", "D9", "Disease")))          # right type, wrong id


def test_type_accuracy_by_evidence_and_against_a_constant_guess() -> None:
    out = type_accuracy([GOLD], [PRED], [["concept", "words", "words"]], ["Disease"])
    assert out["links"] == 3 and out["correct"] == 2 and out["share"] == 0.6667
    assert out["concept"] == {"links": 1, "share": 1.0}
    assert out["words"] == {"links": 2, "share": 0.5}
    assert out["majority_guess_share"] == 0.6667  # "Disease" is right for 2 of the 3


def test_type_accuracy_skips_links_off_gold_offsets() -> None:
    off = Document("d", TEXT, (Link(0, 7, "cocaine", ("C9",), type="Chemical"),))
    out = type_accuracy([GOLD], [off], [["words"]], ["Disease"])
    assert out["links"] == 0 and out["share"] is None
