"""The document-level error classes of benchmarks/bc5cdr_errors.py, and its count of misses
whose concept the pipeline cannot output, on a hand-worked abstract."""

from __future__ import annotations

from collections import Counter

from benchmarks.bc5cdr_errors import classify_documents, count_absent
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


def test_misses_outside_the_kb_and_training_are_counted_per_level_and_type() -> None:
    gold = Document(id="d", text=TEXT, entities=(
        _link("grand mal seizures", "D1"),            # missed, reachable
        _link("renal and hepatic failure", "D2|D3"),  # missed, D3 reachable: not counted
        _link("cocaine", "C4", "Chemical"),           # missed, unreachable: both levels
        _link("aspirin", "C5", "Chemical"),           # found: no miss, whatever its id
        _link("fever", "-1")))                        # no concept: never a miss
    pred = Document(id="d", text=TEXT, entities=(
        _link("cocaine", "D6", "Chemical"), _link("aspirin", "C5", "Chemical")))
    counts: dict[str, Counter[str]] = {"mention": Counter(), "document": Counter()}
    count_absent(gold, pred, {"D1", "D3", "D6"}, counts)
    # mentions: cocaine (C4 unreachable); documents: D2 and C4 are missed and unreachable
    assert counts == {"mention": {"Chemical": 1}, "document": {"Disease": 1, "Chemical": 1}}


def test_config_and_name_choose_which_pipeline_and_file() -> None:
    from benchmarks.bc5cdr_errors import _parser
    from benchmarks.cv_accuracy import BC5CDR_DEV

    args = _parser().parse_args([])
    assert (args.config, args.name) == ("bc5cdr", "bc5cdr_errors")
    args = _parser().parse_args(["--config", "bc5cdr-mesh", "--name", "bc5cdr_errors_mesh"])
    assert BC5CDR_DEV[args.config] == "configs/bc5cdr-mesh.yaml"
