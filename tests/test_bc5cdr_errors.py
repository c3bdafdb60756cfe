"""The document-level error classes of benchmarks/bc5cdr_errors.py on a hand-worked abstract."""

from __future__ import annotations

from collections import Counter

from benchmarks.bc5cdr_errors import classify_documents
from xlnel.types import Document, Link

TEXT = "grand mal seizures, renal and hepatic failure, cocaine and aspirin; fever"


def _link(text: str, cid: str, typ: str = "Disease") -> Link:
    start = TEXT.index(text)
    # as the readers give them: a composite id "A|B" split, no id for "-1"
    ids = () if cid == "-1" else tuple(cid.split("|"))
    return Link(start, start + len(text), text, ids, type=typ)


def test_every_missed_and_wrong_concept_gets_one_class() -> None:
    gold = Document(id="d", text=TEXT, entities=(
        _link("grand mal seizures", "D1"),            # predicted "seizures": boundary
        _link("renal and hepatic failure", "D2|D3"),  # composite, not predicted
        _link("cocaine", "D4", "Chemical"),           # another concept at its offsets
        _link("aspirin", "D5", "Chemical"),           # nothing linked there
        _link("fever", "-1")))                        # no concept: not scored
    pred = Document(id="d", text=TEXT, entities=(
        _link("seizures", "D9"),                      # overlaps gold: wrong concept
        _link("cocaine", "D6", "Chemical"),
        _link("fever", "D7")))                        # overlaps a gold mention without id
    fn: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    classify_documents(gold, pred, {"D1", "D4"}, fn, fp)
    assert fn == {"Disease/boundary/train_concept": 1, "Disease/composite/new_concept": 2,
                  "Chemical/other_concept/train_concept": 1,
                  "Chemical/unlinked/new_concept": 1}
    assert fp == {"overlaps_gold": 3}


def test_a_right_concept_anywhere_in_the_abstract_is_no_error() -> None:
    gold = Document(id="d", text=TEXT, entities=(_link("seizures", "D1"),))
    pred = Document(id="d", text=TEXT, entities=(_link("grand mal seizures", "D1"),))
    fn: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    classify_documents(gold, pred, set(), fn, fp)
    assert not fn and not fp
