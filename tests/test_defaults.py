"""The embedded default: its annotated sample parses and resolves to HPO ids."""

from __future__ import annotations

import pytest

from xlnel.defaults import default_config, parse_sample, sample_documents
from xlnel.errors import FormatError
from xlnel.types import Concept

CONCEPTS = [Concept("HP:1", ("Seizure", "Seizures")), Concept("HP:2", ("Fever",)),
            Concept("HP:3", ("Pyrexia",)), Concept("HP:4", ("Pyrexia",))]


def test_parse_sample_offsets_and_ids() -> None:
    text = "# comment\nShe had [[fits|Seizure]] and\n[[high fever|fever]].\n\nNothing here.\n"
    docs = parse_sample(text, CONCEPTS)
    assert [d.id for d in docs] == ["sample-001", "sample-002"]
    first = docs[0]
    assert first.text == "She had fits and high fever."
    assert [(first.text[e.start:e.end], e.concept_ids) for e in first.entities] == [
        ("fits", ("HP:1",)), ("high fever", ("HP:2",))]
    assert docs[1].entities == ()


@pytest.mark.parametrize("text, message", [
    ("A [[cold|Common cold]].", "no concept"),
    ("A [[fever|Pyrexia]].", "several concepts"),
    ("A [[fever|Fever].", "broken mention markup"),
])
def test_parse_sample_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message) as info:
        parse_sample("\n" + text, CONCEPTS, "sample.txt")
    assert "sample.txt:2" in str(info.value)


def test_shipped_sample_resolves_against_hpo() -> None:
    docs = sample_documents()
    assert len(docs) >= 80
    assert sum(len(d.entities) for d in docs) >= 150
    for d in docs:
        for e in d.entities:
            assert d.text[e.start:e.end] == e.text
            assert e.concept_ids[0].startswith("HP:")


def test_default_config_trains_a_filter_on_the_sample() -> None:
    assert default_config().filter.name == "xlnel.similarity.v1"
    trained = default_config("sample.jsonl")
    assert trained.data.train == "sample.jsonl"
    assert trained.filter.name == "xlnel.gbdt.v1"
