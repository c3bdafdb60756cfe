from __future__ import annotations

from xlnel.linkers.abbreviations import Abbreviation, find_abbreviations, link_abbreviations
from xlnel.types import Link


def _span(text: str, abbr: Abbreviation) -> tuple[str, str]:
    return text[abbr.long_start:abbr.long_end], text[abbr.short_start:abbr.short_end]


def test_schwartz_hearst_definitions():
    text = ("Patients with chronic kidney disease (CKD) got heparin-induced "
            "thrombocytopenia (HIT; rare) and 5-fluorouracil (5-FU).")
    got = [_span(text, a) for a in find_abbreviations(text)]
    assert got == [("chronic kidney disease", "CKD"),
                   ("heparin-induced thrombocytopenia", "HIT"),
                   ("5-fluorouracil", "5-FU")]


def test_not_definitions():
    # no letters, too long, letters not in order, a first letter inside a word
    text = "dose (10) of drug (a very long aside here) a cat (XYZ) the spleen (PL)"
    assert find_abbreviations(text) == []
    assert find_abbreviations("") == []


def test_short_forms_take_the_long_form_concept():
    text = "Use of nitric oxide (NO) grew. NO levels fell. NOx and YES stayed."
    links = (Link(7, 19, "nitric oxide", ("D1",), "Chemical"),
             Link(31, 33, "NO", ("D9",), "Chemical"))
    out = link_abbreviations(text, links)
    assert [(x.text, x.start, x.concept_ids) for x in out] == [
        ("nitric oxide", 7, ("D1",)), ("NO", 21, ("D1",)), ("NO", 31, ("D1",))]
    assert link_abbreviations(text, ()) == ()


def test_overlapping_link_is_left_alone():
    text = "nitric oxide (NO) and NO synthase"
    links = (Link(0, 12, "nitric oxide", ("D1",)), Link(22, 33, "NO synthase", ("D2",)))
    out = link_abbreviations(text, links)
    assert [(x.start, x.end, x.concept_ids) for x in out] == [
        (0, 12, ("D1",)), (14, 16, ("D1",)), (22, 33, ("D2",))]


def test_decide_links_abbreviations_when_asked():
    import numpy as np

    from xlnel.linkers.decide import decide
    from xlnel.types import Candidate, Document, Span

    doc = Document("d", "Use of nitric oxide (NO) grew. NO levels fell.")
    cands = [Candidate(Span(7, 19, "nitric oxide"), "D1", "nitric oxide", 1.0)]
    plain = decide(doc, cands, np.array([0.9]), 0.5)
    assert [x.start for x in plain.entities] == [7]
    out = decide(doc, cands, np.array([0.9]), 0.5, abbreviations=True)
    assert [(x.start, x.text, x.concept_ids) for x in out.entities] == [
        (7, "nitric oxide", ("D1",)), (21, "NO", ("D1",)), (31, "NO", ("D1",))]
