"""The text-level ceiling of benchmarks/annotation_ceiling.py on hand-worked documents."""

from __future__ import annotations

from benchmarks.annotation_ceiling import SpanTexts, best_threshold, f1
from xlnel.types import Document, Link


def doc(doc_id: str, text: str, gold: list[str]) -> Document:
    links = []
    for word in gold:
        start = text.index(word)
        links.append(Link(start, start + len(word), word, ("C1",)))
    return Document(doc_id, text, tuple(links))


# "fever" is annotated in 2 of its 3 occurrences, "cough" in 1 of 2, "high fever" never
DOCS = [doc("a", "fever and cough", ["fever", "cough"]),
        doc("b", "high fever today", ["fever"]),
        doc("c", "fever cough", [])]


def spans() -> SpanTexts:
    return SpanTexts(DOCS, "en", 2, frozenset({"and", "today"}))


def test_shares_count_the_annotated_occurrences_of_each_text() -> None:
    shares = spans().shares()
    assert shares == {"fever": 2 / 3, "cough": 1 / 2}


def test_a_decision_links_every_occurrence_of_the_texts_over_the_threshold() -> None:
    s = spans()
    linked = s.decide(s.shares(), 0.6)
    assert linked == {("a", 0, 5), ("b", 5, 10), ("c", 0, 5)}
    # per document [tp, fp, fn]: a misses cough, c links a fever nobody annotated
    assert s.counts(linked) == [[1, 0, 1], [1, 0, 0], [0, 1, 0]]
    assert f1(s.counts(linked)) == 2 * 2 / (2 * 2 + 1 + 1)


def test_overlapping_spans_keep_the_higher_share_then_the_longer() -> None:
    s = spans()
    linked = s.decide({"fever": 0.5, "high fever": 0.5, "fever cough": 0.9}, 0.4)
    assert ("b", 0, 10) in linked and ("b", 5, 10) not in linked  # longer at equal share
    assert ("c", 0, 11) in linked and ("c", 0, 5) not in linked  # higher share


def test_the_best_threshold_is_the_lowest_of_the_best_f1() -> None:
    s = spans()
    threshold, best = best_threshold(s, s.shares())
    # at or below 0.5 both texts are linked: 3 tp, 2 fp, 0 fn; above 0.5 only fever: F1 2/3
    assert (threshold, best) == (0.05, 2 * 3 / (2 * 3 + 2))
