"""The name index the matchers build on: normalised names, one target per concept."""

from __future__ import annotations

import pytest

from xlnel.candidates.names import index_names
from xlnel.dictionary.dictionary import Dictionary


def test_names_that_normalise_alike_share_a_key_with_one_target_per_concept():
    d = Dictionary()
    d.add("Diabetes", "C1")
    d.add("diabetes", "C1", source="annotation")
    d.add("DIABETES", "C2")
    d.add("asthma", "C3")
    d.add("!!!", "C4")  # nothing left after normalisation
    names = index_names(d, "en")
    assert names.keys == ["diabetes", "asthma"]
    assert names.targets == [[("C1", "Diabetes"), ("C2", "DIABETES")], [("C3", "asthma")]]
    assert names.sources == [{"kb", "annotation"}, {"kb"}]


def test_a_dictionary_without_usable_names_is_refused():
    d = Dictionary()
    d.add("...", "C1")
    with pytest.raises(ValueError, match="no usable name"):
        index_names(d, "en")


def test_provenance_keeps_the_most_trusted_entry_of_each_concept():
    d = Dictionary()
    d.add("sugar disease", "C1", source="translated", score=0.4)
    d.add("Sugar Disease", "C1", source="composed", score=0.7)  # same key, higher score
    d.add("sugar  disease", "C2", source="translated", score=0.9)
    d.add("SUGAR DISEASE", "C2")  # a knowledge-base name beats any generated one
    d.add("sugar disease.", "C3", source="kb")
    d.add("Sugar disease", "C3", source="annotation")  # an annotation beats the kb name
    names = index_names(d, "en")
    assert names.keys == ["sugar disease"]
    assert names.targets == [[("C1", "sugar disease"), ("C2", "sugar  disease"),
                              ("C3", "sugar disease.")]]
    assert names.provenance == [[("composed", 0.7), ("kb", None), ("annotation", None)]]


def test_trust_orders_annotation_kb_then_generated_by_score():
    from xlnel.candidates.names import trust

    order = sorted([("translated", 0.9), ("kb", None), ("corpus", 0.2), ("annotation", None)],
                   key=lambda p: trust(*p), reverse=True)
    assert order == [("annotation", None), ("kb", None), ("translated", 0.9), ("corpus", 0.2)]


def test_target_rows_join_provenance_or_leave_it_unknown():
    from xlnel.candidates.names import target_rows

    targets = [[("C1", "a"), ("C2", "A")], [("C3", "b")]]
    assert target_rows(targets, [[("kb", None), ("translated", 0.5)], [("corpus", 0.3)]]) == [
        [("C1", "a", "kb", None), ("C2", "A", "translated", 0.5)], [("C3", "b", "corpus", 0.3)]]
    assert target_rows(targets, []) == [[("C1", "a", None, None), ("C2", "A", None, None)],
                                        [("C3", "b", None, None)]]


def test_provenance_file_round_trips_and_is_optional(tmp_path):
    from xlnel.candidates.names import read_provenance, write_provenance
    from xlnel.errors import ArtifactError

    targets = [[("C1", "a"), ("C2", "A")], [("C3", "b")]]
    assert read_provenance(tmp_path, targets) == []  # a folder saved without it
    provenance = [[("kb", None), ("translated", 0.5)], [("corpus", 0.25)]]
    write_provenance(tmp_path, provenance)
    assert read_provenance(tmp_path, targets) == provenance
    with pytest.raises(ArtifactError, match="does not match"):
        read_provenance(tmp_path, [[("C1", "a")], [("C3", "b")]])
