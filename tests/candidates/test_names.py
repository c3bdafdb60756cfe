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
