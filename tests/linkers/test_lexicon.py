from __future__ import annotations

import numpy as np
import pytest

from xlnel.config import LinkerConfig
from xlnel.errors import ArtifactError
from xlnel.linkers.decide import decide, decide_as, older_only
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.types import Candidate, Document, Link, Span

TRAIN = [
    Document("a", "Cocaine and cocaine abuse; cocaines.",
             (Link(0, 7, "Cocaine", ("C1",)), Link(12, 19, "cocaine", ("C1",)))),
    Document("b", "cocaine, cocaine. Lead or lead poisoning.",
             (Link(0, 7, "cocaine", ("C2",)), Link(9, 16, "cocaine", ("C1",)),
              Link(18, 22, "Lead", ("L1",)), Link(26, 30, "lead", ()))),
]


def _cands(text: str, start: int, end: int, ids: list[str]) -> list[Candidate]:
    span = Span(start, end, text[start:end])
    return [Candidate(span, cid, f"name {cid}", 0.9) for cid in ids]


def test_fit_counts_concepts_annotations_and_whole_word_occurrences() -> None:
    lex = AnnotationLexicon.fit(TRAIN)
    assert lex.concepts == {"cocaine": {"C1": 3, "C2": 1}, "lead": {"L1": 1}}
    assert lex.annotated == {"cocaine": 4, "lead": 1}
    # "cocaines" is a longer word; "lead" occurs twice, once without a concept id
    assert lex.occurrences == {"cocaine": 4, "lead": 2}
    assert lex.rate("Cocaine") == 1.0
    assert lex.rate("lead") == 0.5
    assert lex.rate("unseen") == 0.0


def test_fit_on_no_documents_is_empty() -> None:
    lex = AnnotationLexicon.fit([])
    assert lex.concepts == {} and lex.rate("x") == 0.0


def test_adjust_puts_the_most_annotated_concept_on_top() -> None:
    lex = AnnotationLexicon.fit(TRAIN)
    text = "cocaine use"
    cands = _cands(text, 0, 7, ["C2", "C1", "C3"]) + _cands(text, 8, 11, ["U1"])
    scores = np.array([0.8, 0.5, 0.9, 0.7])
    out = lex.adjust(cands, scores, threshold=0.4)
    assert out[1] == pytest.approx(0.9 + 1e-6)  # C1 takes the span's best score
    assert list(out[[0, 2, 3]]) == [0.8, 0.9, 0.7]  # others and unknown spans unchanged
    assert list(scores) == [0.8, 0.5, 0.9, 0.7]  # input untouched


def test_adjust_leaves_a_span_without_an_annotated_concept() -> None:
    lex = AnnotationLexicon.fit(TRAIN)
    cands = _cands("cocaine", 0, 7, ["C9"])
    assert list(lex.adjust(cands, np.array([0.2]), 0.4)) == [0.2]


def test_adjust_raises_an_always_annotated_text_to_the_threshold_only_with_rate() -> None:
    lex = AnnotationLexicon.fit(TRAIN)
    cands = _cands("cocaine", 0, 7, ["C1"]) + _cands("lead", 0, 4, ["L1"])
    scores = np.array([0.1, 0.1])
    assert list(lex.adjust(cands, scores, 0.4)) == pytest.approx([0.1, 0.1], abs=1e-5)
    # cocaine: 4 of 4 occurrences annotated; lead: 1 of 2
    high = lex.adjust(cands, scores, 0.4, min_rate=0.75)
    assert list(high) == pytest.approx([0.4, 0.1], abs=1e-5)
    low = lex.adjust(cands, scores, 0.4, min_rate=0.5)
    assert list(low) == pytest.approx([0.4, 0.4], abs=1e-5)


def test_decide_with_lexicon_links_the_annotated_concept() -> None:
    lex = AnnotationLexicon.fit(TRAIN)
    doc = Document("d", "cocaine")
    cands = _cands("cocaine", 0, 7, ["C2", "C1"])
    scores = np.array([0.9, 0.6])
    assert decide(doc, cands, scores, 0.5).entities[0].concept_ids == ("C2",)
    got = decide(doc, cands, scores, 0.5, lexicon=lex).entities
    assert [(e.start, e.end, e.concept_ids) for e in got] == [(0, 7, ("C1",))]
    assert decide(doc, cands, np.array([0.2, 0.1]), 0.5, lexicon=lex).entities == ()
    rescued = decide(doc, cands, np.array([0.2, 0.1]), 0.5, lexicon=lex, lexicon_rate=0.9)
    assert [e.concept_ids for e in rescued.entities] == [("C1",)]


def test_decide_as_uses_the_lexicon_only_when_the_config_says_so() -> None:
    lex = AnnotationLexicon.fit(TRAIN)
    doc = Document("d", "cocaine")
    cands = _cands("cocaine", 0, 7, ["C2", "C1"])
    scores = np.array([0.9, 0.6])
    off = decide_as(doc, cands, scores, 0.5, LinkerConfig(), lex).entities
    assert [e.concept_ids for e in off] == [("C2",)]
    on = decide_as(doc, cands, np.array([0.2, 0.1]), 0.5,
                   LinkerConfig(lexicon=True, lexicon_rate=0.9), lex).entities
    assert [e.concept_ids for e in on] == [("C1",)]

def test_save_and_load_round_trip(tmp_path) -> None:
    lex = AnnotationLexicon.fit(TRAIN)
    lex.save(tmp_path / "lexicon.json")
    assert AnnotationLexicon.load(tmp_path / "lexicon.json") == lex


def test_load_refuses_missing_or_foreign_files(tmp_path) -> None:
    with pytest.raises(ArtifactError, match="no annotation lexicon"):
        AnnotationLexicon.load(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ArtifactError, match="not an annotation lexicon"):
        AnnotationLexicon.load(tmp_path / "bad.json")


COMPOSITE_TRAIN = [
    Document("c", "Hemorrhagic cystitis; hemorrhagic cystitis; renal failure.",
             (Link(0, 20, "Hemorrhagic cystitis", ("H1", "Y1")),
              Link(22, 42, "hemorrhagic cystitis", ("Y1",)),
              Link(44, 57, "renal failure", ("R1",)))),
    Document("d", "hemorrhagic cystitis and ulcer|ulcer.",
             (Link(0, 20, "hemorrhagic cystitis", ("H1", "Y1")),
              Link(25, 30, "ulcer", ("U1", "U1")))),
]


def test_fit_keeps_the_texts_mostly_annotated_as_composites() -> None:
    lex = AnnotationLexicon.fit(COMPOSITE_TRAIN)
    # two of three annotations of the text are the composite; a repeated id is no composite
    assert lex.composites == {"hemorrhagic cystitis": ["H1", "Y1"]}
    assert lex.composite("Hemorrhagic  cystitis", "Y1") == ("Y1", "H1")
    assert lex.composite("hemorrhagic cystitis", "Z9") is None
    assert lex.composite("renal failure", "R1") is None


def test_decide_gives_a_composite_text_all_its_ids_only_when_asked() -> None:
    lex = AnnotationLexicon.fit(COMPOSITE_TRAIN)
    text = "Acute hemorrhagic cystitis."
    doc = Document("x", text)
    cands = _cands(text, 6, 26, ["Y1"])
    on = decide(doc, cands, np.array([0.9]), 0.5, lexicon=lex, composites=True).entities
    assert [link.concept_ids for link in on] == [("Y1", "H1")]
    off = decide(doc, cands, np.array([0.9]), 0.5, lexicon=lex).entities
    assert [link.concept_ids for link in off] == [("Y1",)]
    # without the lexicon the option has nothing to read
    bare = decide_as(doc, cands, np.array([0.9]), 0.5, LinkerConfig(composites=True), lex)
    assert [link.concept_ids for link in bare.entities] == [("Y1",)]


def test_composites_survive_save_and_load(tmp_path) -> None:
    lex = AnnotationLexicon.fit(COMPOSITE_TRAIN)
    lex.save(tmp_path / "lexicon.json")
    assert AnnotationLexicon.load(tmp_path / "lexicon.json").composites == lex.composites


def _dated(ids: list[str]) -> AnnotationLexicon:
    """A lexicon whose training annotations use ``ids`` (one mention text per id)."""
    return AnnotationLexicon("en", {f"t{i}": {cid: 1} for i, cid in enumerate(ids)})


def test_newest_ids_per_prefix_from_enough_distinct_ids() -> None:
    lex = _dated([f"D{n:06d}" for n in range(50, 60)] + ["C000123", "HP:0001250", "noid"])
    # ten D ids date their prefix (zero padding read as a number); one C id or HP id dates none
    assert lex.newest_ids() == {"D": 59}
    assert lex.newest_ids(min_ids=1) == {"C": 123, "D": 59, "HP:": 1250}


def test_newer_marks_only_ids_numbered_above_the_newest_of_their_prefix() -> None:
    lex = _dated([f"D{n:06d}" for n in range(50, 60)])
    cands = _cands("rocuronium", 0, 10, ["D000059", "D000077123", "D000001", "C000999", "Dx"])
    assert lex.newer(cands).tolist() == [False, True, False, False, False]
    assert lex.newer([]).tolist() == []


def test_decide_with_annotated_release_lets_the_span_take_its_older_concept() -> None:
    lex = _dated([f"D{n:06d}" for n in range(50, 60)])
    doc = Document("d", "essential hypertension")
    cands = _cands(doc.text, 0, 22, ["D000075222", "D000055"])
    scores = np.array([0.9, 0.6])
    assert decide(doc, cands, scores, 0.5, lexicon=lex).entities[0].concept_ids == (
        "D000075222",)
    out = decide(doc, cands, scores, 0.5, lexicon=lex, annotated_release=True, alternatives=3)
    (link,) = out.entities
    assert link.concept_ids == ("D000055",) and link.alternatives == ()
    # a span with only newer concepts is not linked
    assert decide(doc, cands[:1], scores[:1], 0.5, lexicon=lex,
                  annotated_release=True).entities == ()


def test_a_span_naming_a_newer_concept_is_not_linked_to_a_worse_matching_older_one() -> None:
    lex = _dated([f"D{n:06d}" for n in range(50, 60)])
    doc = Document("d", "ropivacaine")
    span = Span(0, 11, doc.text)
    cands = [Candidate(span, "D000077212", "ropivacaine", 1.0),
             Candidate(span, "D000058", "mepivacaine", 0.8),
             Candidate(span, "D000051", "ropivacaine", 1.0)]
    # an older concept matching as closely stays; the worse match goes with the newer one
    assert older_only(cands, lex).tolist() == [False, False, True]
    assert older_only(cands[:2], lex).tolist() == [False, False]
    assert decide(doc, cands[:2], np.array([0.9, 0.8]), 0.5, lexicon=lex,
                  annotated_release=True).entities == ()
    # unless the training annotations linked the text to the older concept
    lex.concepts["ropivacaine"] = {"D000058": 1}
    assert older_only(cands[:2], lex).tolist() == [False, True]
    assert lex.known("Ropivacaine") == {"D000058": 1} and lex.known("other") == {}


def test_annotated_release_needs_the_lexicon() -> None:
    with pytest.raises(ValueError, match="linker.lexicon"):
        LinkerConfig(annotated_release=True)
    with pytest.raises(ValueError, match="lexicon"):
        decide(Document("d", "x"), [], np.zeros(0), 0.5, annotated_release=True)
    lex = _dated([f"D{n:06d}" for n in range(50, 60)])
    doc = Document("d", "essential hypertension")
    cands = _cands(doc.text, 0, 22, ["D000075222", "D000055"])
    linker = LinkerConfig(lexicon=True, annotated_release=True)
    out = decide_as(doc, cands, np.array([0.9, 0.6]), 0.5, linker, lex)
    assert out.entities[0].concept_ids == ("D000055",)
