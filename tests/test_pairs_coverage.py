"""The word-pair coverage of benchmarks/pairs_coverage.py on hand-worked labels and pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.pairs_coverage import content_words, coverage, english_labels
from xlnel.dictionary.lexicon import Lexicon
from xlnel.errors import FormatError

PAIRS = [("kidney", "rein"), ("cyst", "kyste"), ("syndrome", "syndrome"), ("small", "petit")]


def test_content_words_leave_out_connectors_articles_numbers_and_letters() -> None:
    assert content_words("Cyst of the kidney, type 2 A") == ["cyst", "kidney", "type"]


def test_coverage_counts_words_and_whole_labels() -> None:
    lexicon = Lexicon(PAIRS)
    labels = ["Kidney cyst", "Small kidney syndrome", "Cysts of the kidney", "of the"]
    # words: kidney cyst | small kidney syndrome | cysts (base form cyst) kidney; "of the" has
    # no content word; "syndrome" is only copied
    found = coverage(labels, lexicon)
    assert (found["labels"], found["words"], found["words_translated"],
            found["labels_translated"]) == (3, 7, 6, 2)
    assert found["word_share"] == round(6 / 7, 4) and found["label_share"] == round(2 / 3, 4)
    with_copies = coverage(labels, lexicon, copies=True)
    assert (with_copies["words_translated"], with_copies["labels_translated"]) == (7, 3)


def test_english_labels_are_distinct_and_a_bad_line_names_file_and_line(tmp_path: Path) -> None:
    good = tmp_path / "xx.tsv"
    good.write_text("hpo_id\tenglish\ttranslation\nHP:1\tKidney cyst\tkyste\n"
                    "HP:2\tKidney cyst\tkyste rénal\n", encoding="utf-8")
    assert english_labels(good) == ["Kidney cyst"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("HP:1\tKidney cyst\tkyste\nHP:2\tno translation\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.tsv:2: .*3 tab-separated fields"):
        english_labels(bad)
