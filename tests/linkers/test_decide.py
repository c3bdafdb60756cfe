from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlnel.config import LinkerConfig
from xlnel.linkers.decide import choose_linker_threshold, choose_threshold, decide
from xlnel.types import Candidate, Document, Link, Span

TEXT = "type 2 diabetes mellitus"


def _cand(s: int, e: int, cid: str, score: float) -> Candidate:
    return Candidate(Span(s, e, TEXT[s:e]), cid, TEXT[s:e], score)


def test_best_candidate_per_span_above_threshold():
    doc = Document("d", TEXT)
    cands = [_cand(7, 15, "C1", 0.9), _cand(7, 15, "C2", 0.95), _cand(0, 4, "C3", 0.3)]
    out = decide(doc, cands, np.array([0.9, 0.95, 0.3]), threshold=0.5)
    assert [(e.start, e.end, e.concept_id) for e in out.entities] == [(7, 15, "C2")]
    assert out.entities[0].score == pytest.approx(0.95)


def test_overlaps_prefer_longer_then_higher():
    doc = Document("d", TEXT)
    cands = [_cand(7, 15, "C1", 1.0), _cand(7, 24, "C2", 0.6), _cand(16, 24, "C3", 0.99)]
    out = decide(doc, cands, np.array([1.0, 0.6, 0.99]), threshold=0.5)
    assert [(e.start, e.end) for e in out.entities] == [(7, 24)]
    kept = decide(doc, cands, np.array([1.0, 0.6, 0.99]), threshold=0.5, overlap="none")
    assert len(kept.entities) == 3


def test_threshold_zero_is_valid_and_empty_input():
    doc = Document("d", TEXT)
    out = decide(doc, [_cand(0, 4, "C", 0.0)], np.array([0.0]), threshold=0.0)
    assert len(out.entities) == 1
    assert decide(doc, [], np.zeros(0), 0.5).entities == ()


def test_choose_threshold_separates_good_from_bad():
    gold = Document("d", TEXT, (Link(7, 24, "diabetes mellitus", ("C1",)),))
    cands = [[_cand(7, 24, "C1", 0.9), _cand(0, 4, "C9", 0.5)]]
    t, f1 = choose_threshold([gold], cands, [np.array([0.9, 0.5])])
    assert 0.5 < t <= 0.9 and f1 == pytest.approx(1.0)


@pytest.mark.parametrize("overlap", ["longest", "score", "none"])
def test_choose_threshold_equals_deciding_at_each_threshold(overlap):
    """The threshold search reuses per-span bests; it must pick what decide() would."""
    import random

    from xlnel.evaluation import evaluate

    rng = random.Random(0)
    gold = Document("d", TEXT, (Link(7, 15, "diabetes", ("C1",)),
                                Link(16, 24, "mellitus", ("C3",))))
    spans = [(0, 4), (0, 6), (7, 15), (7, 24), (16, 24), (5, 15)]
    cands = [_cand(s, e, f"C{rng.randint(1, 3)}", rng.random()) for s, e in spans * 3]
    scores = np.array([rng.random() for _ in cands])
    t, f1 = choose_threshold([gold], [cands], [scores], "concept", overlap)
    assert f1 == pytest.approx(evaluate([gold], [decide(gold, cands, scores, t, overlap)],
                                        "concept").f1)
    best = max(evaluate([gold], [decide(gold, cands, scores, float(x), overlap)],
                        "concept").f1 for x in np.linspace(0, 1, 41))
    assert f1 >= best - 1e-12


def test_propagate_links_other_occurrences_of_a_linked_text():
    text = "sugar high, sugar low, sugar"
    doc = Document("d", text)
    spans = [(0, 5), (12, 17), (23, 28)]
    cands = [Candidate(Span(s, e, text[s:e]), "C1", "sugar", 1.0) for s, e in spans]
    scores = np.array([0.8, 0.3, 0.2])  # threshold 0.5: only the first passes
    plain = decide(doc, cands, scores, 0.5)
    assert [e.start for e in plain.entities] == [0]
    spread = decide(doc, cands, scores, 0.5, propagate=True)
    # 0.3 >= 0.5 / 2 is raised to the threshold; 0.2 is not
    assert [(e.start, e.score) for e in spread.entities] == [(0, 0.8), (12, 0.5)]
    assert decide(doc, cands, np.array([0.3, 0.3, 0.2]), 0.5, propagate=True).entities == ()


def _naive_overlaps(chosen: list[tuple[int, int]]) -> list[tuple[int, int]]:
    taken: list[tuple[int, int]] = []
    for s, e in chosen:
        if not any(s < te and ts < e for ts, te in taken):
            taken.append((s, e))
    return sorted(taken)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 6)), max_size=30))
def test_overlap_resolution_matches_pairwise_check(spans: list[tuple[int, int]]) -> None:
    text = "x" * 50
    cands = [Candidate(Span(s, s + n, text[s:s + n]), "C1", "x", 1.0) for s, n in spans]
    scores = np.linspace(1.0, 0.5, len(cands)) if cands else np.zeros(0)
    doc = decide(Document("d", text), cands, scores, 0.0, "score")
    best: dict[tuple[int, int], float] = {}
    for c, sc in zip(cands, scores, strict=True):
        key = (c.span.start, c.span.end)
        best[key] = max(best.get(key, -1.0), float(sc))
    order = sorted(best, key=lambda k: (-best[k], -(k[1] - k[0]), k[0]))
    assert [(e.start, e.end) for e in doc.entities] == _naive_overlaps(order)


def test_alternatives_are_the_other_concepts_of_the_span_best_first():
    doc = Document("d", TEXT)
    # span 7-15: C1 chosen (0.9); C2 proposed twice (kept at its best, 0.6); C3 and C4 tie
    # at 0.5 and the closer string match (C4, similarity 0.8) goes first; span 0-4 is apart
    cands = [_cand(7, 15, "C1", 0.9), _cand(7, 15, "C2", 0.7), _cand(7, 15, "C2", 0.9),
             _cand(7, 15, "C3", 0.6), _cand(7, 15, "C4", 0.8), _cand(0, 4, "C5", 1.0)]
    scores = np.array([0.9, 0.6, 0.4, 0.5, 0.5, 0.1])
    out = decide(doc, cands, scores, threshold=0.5, alternatives=3)
    (link,) = out.entities
    assert link.concept_id == "C1"
    assert link.alternatives == (("C2", 0.6, 0.7), ("C4", 0.5, 0.8), ("C3", 0.5, 0.6))
    assert decide(doc, cands, scores, 0.5, alternatives=1).entities[0].alternatives == (
        ("C2", 0.6, 0.7),)
    assert decide(doc, cands, scores, 0.5).entities[0].alternatives == ()


def test_alternatives_leave_out_every_id_of_a_composite_link():
    from xlnel.linkers.decide import with_alternatives

    cands = [_cand(7, 15, "C1", 0.9), _cand(7, 15, "C2", 0.8), _cand(7, 15, "C3", 0.7)]
    link = Link(7, 15, TEXT[7:15], ("C1", "C2"), score=0.9)
    (out,) = with_alternatives([link], cands, np.array([0.9, 0.8, 0.7]), 5)
    assert out.alternatives == (("C3", 0.7, 0.7),)
    # a link whose span has no candidate (an abbreviation) gets none
    (bare,) = with_alternatives([Link(0, 4, "type", ("C9",))], cands, np.ones(3), 5)
    assert bare.alternatives == ()


FLU = "flu and flu"


def _flu(s: int, cid: str, score: float) -> Candidate:
    return Candidate(Span(s, s + 3, "flu"), cid, "flu", score)


def test_linker_threshold_follows_the_linker_decisions():
    """Consistency links the second 'flu' from the first: with it, the highest threshold that
    keeps both is the first one's score; on spans alone, only the lower score keeps both."""
    gold = Document("d", FLU, (Link(0, 3, "flu", ("C1",)), Link(8, 11, "flu", ("C1",))))
    cands, scores = [[_flu(0, "C1", 0.9), _flu(8, "C1", 0.3)]], [np.array([0.9, 0.3])]
    t_spans, _ = choose_threshold([gold], cands, scores)
    t_linker, f1 = choose_linker_threshold([gold], cands, scores, [0],
                                           LinkerConfig(consistency=True), "en")
    assert t_spans == pytest.approx(0.3)
    assert t_linker == pytest.approx(0.9) and f1 == pytest.approx(1.0)
    # without the consistency step the linker decides as the spans do
    assert choose_linker_threshold([gold], cands, scores, [0], LinkerConfig(), "en")[0] == \
        pytest.approx(0.3)


def test_linker_threshold_decides_a_document_with_the_other_folds_lexicon():
    """The lexicon puts C1 above C2 at 'flu' only where another fold's document annotates it
    so: a document's own annotation never decides it."""
    gold = Document("a", "flu", (Link(0, 3, "flu", ("C1",)),))
    cold = Document("b", "cold", (Link(0, 4, "cold", ("C7",)),))
    flu = Document("c", "flu", (Link(0, 3, "flu", ("C1",)),))
    linker = LinkerConfig(lexicon=True)

    def f1(docs: list[Document], folds: list[int]) -> float:
        cands = [[_flu(0, "C2", 0.9), _flu(0, "C1", 0.5)] if d.id == "a" else [] for d in docs]
        scores = [np.array([0.9, 0.5]) if d.id == "a" else np.zeros(0) for d in docs]
        return choose_linker_threshold(docs, cands, scores, folds, linker, "en", "concept")[1]

    assert f1([gold, cold], [0, 1]) == pytest.approx(0.0)
    assert f1([gold, flu], [0, 1]) == pytest.approx(2 / 3)  # a right, c missed
    assert f1([gold, flu], [0, 0]) == pytest.approx(0.0)  # one fold: no other document
    with pytest.raises(ValueError, match="1 fold numbers for 2 documents"):
        choose_linker_threshold([gold, cold], [[], []], [np.zeros(0)] * 2, [0], linker, "en")


def test_linker_threshold_equals_deciding_each_document_at_each_threshold():
    """The search drops the newer concepts' candidates once, not at every threshold: the F1 it
    reports must be that of :func:`decide_as` with the whole linker section."""
    import random

    from xlnel.evaluation import evaluate
    from xlnel.linkers.decide import decide_as
    from xlnel.linkers.lexicon import AnnotationLexicon

    rng = random.Random(1)
    docs = [Document(f"d{i}", TEXT, (Link(7, 15, "diabetes", (f"D00{1 + i % 2}",)),
                                     Link(16, 24, "mellitus", ("D003",))))
            for i in range(4)]
    spans = [(0, 4), (7, 15), (7, 24), (16, 24)]
    cands = [[Candidate(Span(s, e, TEXT[s:e]), f"D00{rng.randint(1, 5)}", TEXT[s:e],
                        rng.random()) for s, e in spans * 3] for _ in docs]
    scores = [np.array([rng.random() for _ in c]) for c in cands]
    folds = [0, 1, 0, 1]
    linker = LinkerConfig(lexicon=True, lexicon_rate=0.5, annotated_release=True,
                          consistency=True, alternatives=2)
    t, f1 = choose_linker_threshold(docs, cands, scores, folds, linker, "en", "concept")
    lexicons = [AnnotationLexicon.fit([d for d, f in zip(docs, folds, strict=True) if f != k],
                                      "en") for k in (0, 1)]
    pred = [decide_as(d, c, s, t, linker, lexicons[f])
            for d, c, s, f in zip(docs, cands, scores, folds, strict=True)]
    assert f1 == pytest.approx(evaluate(docs, pred, "concept").f1)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_score_is_never_linked(bad: float, caplog: pytest.LogCaptureFixture):
    # a NaN passes no '<' test: without the check it would beat every finite score
    doc = Document("d", TEXT)
    cands = [_cand(7, 15, "C1", 0.9), _cand(7, 15, "C2", 0.8), _cand(0, 4, "C3", 0.9)]
    out = decide(doc, cands, np.array([bad, 0.7, bad]), threshold=0.5, alternatives=3)
    assert [(e.concept_id, e.score, e.alternatives) for e in out.entities] == [("C2", 0.7, ())]
    assert "2 candidates with a score that is not a finite number" in caplog.text
    similarity = [_cand(7, 15, "C1", bad), _cand(7, 15, "C2", 0.8)]
    out = decide(doc, similarity, np.array([0.9, 0.7]), threshold=0.5, alternatives=3)
    assert [(e.concept_id, e.alternatives) for e in out.entities] == [("C2", ())]
