"""The by-text split of benchmarks/error_analysis.py on a hand-worked fold."""

from __future__ import annotations

import numpy as np

from benchmarks._oof import OutOfFold
from benchmarks.error_analysis import analyse, markdown, training_texts
from xlnel.types import Document, Link


def link(text: str, word: str) -> Link:
    start = text.index(word)
    return Link(start, start + len(word), word, ("C1",))


TRAIN = [Document("t", "fever here", (link("fever here", "fever"),))]
TEXT = "fever and rash and cough"
GOLD = Document("h", TEXT, (link(TEXT, "fever"), link(TEXT, "rash"), link(TEXT, "cough")))
# the pipeline finds fever (a text training annotated) and rash (new), and links "and" (new)
PRED = Document("h", TEXT, (link(TEXT, "fever"), link(TEXT, "rash"), link(TEXT, "and")))


def test_training_texts_belong_to_the_held_out_documents_of_each_fold() -> None:
    known = training_texts([(TRAIN, [GOLD])], "en")
    assert known == {"h": frozenset({"fever"})}


def test_by_text_splits_recall_and_precision_by_whether_training_annotated_the_text() -> None:
    oof = OutOfFold([GOLD], [[]], [np.zeros(0)], [0.5], [PRED], [[]])
    out = analyse("diabetes", oof, "en", training_texts([(TRAIN, [GOLD])], "en"))
    assert out["by_text"] == {
        "train_text": {"gold": 1, "gold_found": 1, "predicted": 1, "predicted_right": 1},
        "new_text": {"gold": 2, "gold_found": 1, "predicted": 2, "predicted_right": 1}}
    page = markdown({"corpora": {"diabetes": {
        "scores": {"span": {"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3, "fn": 1, "fp": 1,
                            "ci": {"f1": [0.5, 0.8]}}},
        "errors": out}}})
    assert "| diabetes | 1 | 1.000 | 2 | 0.500 | 1 | 1.000 | 2 | 0.500 |" in page
    assert "by_text" not in analyse("diabetes", oof, "en")
