from __future__ import annotations

import numpy as np

from xlnel.linkers.consistency import link_repeats
from xlnel.linkers.decide import decide
from xlnel.types import Candidate, Document, Link, Span


def _view(links: tuple[Link, ...]) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(x.start, x.text, x.concept_ids) for x in links]


def test_repeats_take_the_linked_concept():
    text = "Cocaine use. Then cocaine again; cocaines not, and cocaine."
    links = (Link(0, 7, "Cocaine", ("D1",), score=0.9),)
    assert _view(link_repeats(text, links)) == [
        (0, "Cocaine", ("D1",)), (18, "cocaine", ("D1",)), (51, "cocaine", ("D1",))]


def test_empty_and_nothing_to_spread():
    assert link_repeats("", ()) == ()
    text = "renal failure only once"
    links = (Link(0, 13, "renal failure", ("D2",)),)
    assert link_repeats(text, links) == links


def test_best_scored_link_wins_and_overlaps_are_left_alone():
    text = "anemia, hemolytic anemia, anemia"
    links = (Link(0, 6, "anemia", ("A",), score=0.4), Link(8, 24, "hemolytic anemia", ("H",),
                                                            score=0.9),
             Link(26, 32, "anemia", ("B",), score=0.8))
    # both "anemia" links are there already; the one inside the longer link stays unlinked
    assert _view(link_repeats(text, links)) == [
        (0, "anemia", ("A",)), (8, "hemolytic anemia", ("H",)), (26, "anemia", ("B",))]
    one = (Link(26, 32, "anemia", ("B",), score=0.8),)
    assert _view(link_repeats(text, one)) == [
        (0, "anemia", ("B",)), (18, "anemia", ("B",)), (26, "anemia", ("B",))]


def test_short_texts_are_not_spread():
    text = "NO and NO"
    assert link_repeats(text, (Link(0, 2, "NO", ("D1",)),)) == (Link(0, 2, "NO", ("D1",)),)
    assert len(link_repeats(text, (Link(0, 2, "NO", ("D1",)),), min_chars=2)) == 2


def test_decide_spreads_when_asked():
    doc = Document("d", "seizures after cocaine; seizures again")
    cands = [Candidate(Span(0, 8, "seizures"), "D1", "seizures", 1.0),
             Candidate(Span(24, 32, "seizures"), "D1", "seizures", 1.0)]
    scores = np.array([0.9, 0.1])
    assert [x.start for x in decide(doc, cands, scores, 0.5).entities] == [0]
    out = decide(doc, cands, scores, 0.5, consistency=True).entities
    assert [(x.start, x.concept_ids) for x in out] == [(0, ("D1",)), (24, ("D1",))]
