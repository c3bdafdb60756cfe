"""Tests of the JSON Lines reader and writer."""

from __future__ import annotations

import gzip
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from xlnel.errors import FormatError
from xlnel.io import iter_jsonl, read_jsonl, write_jsonl
from xlnel.types import Document, Link

TEXT = "אני חולה סוכרת ולוקח אינסולין"


def _line(**overrides: Any) -> str:
    obj: dict[str, Any] = {
        "id": "d1",
        "community": "diabetes",
        "text": TEXT,
        "entities": [
            {
                "start": 4,
                "end": 14,
                "text": "חולה סוכרת",
                "type": "Disorder",
                "concept_id": "C0011849",
            },
            {"start": 21, "end": 29, "text": "אינסולין", "type": "Chemical or drug"},
        ],
    }
    obj.update(overrides)
    return json.dumps(obj, ensure_ascii=False)


def _write(tmp_path: Path, *lines: str, name: str = "docs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_read(tmp_path: Path) -> None:
    (doc,) = read_jsonl(_write(tmp_path, _line()))
    assert doc.id == "d1"
    assert doc.text == TEXT
    assert doc.metadata == {"community": "diabetes"}
    assert doc.entities == (
        Link(4, 14, "חולה סוכרת", ("C0011849",), "Disorder"),
        Link(21, 29, "אינסולין", (), "Chemical or drug"),
    )


def test_concept_id_forms_score_and_sorting(tmp_path: Path) -> None:
    entities = [
        {"start": 21, "end": 29, "text": "אינסולין", "concept_id": "A|B", "score": 0.5},
        {"start": 4, "end": 14, "concept_id": None},
    ]
    (doc,) = read_jsonl(_write(tmp_path, _line(entities=entities)))
    assert doc.entities == (
        Link(4, 14, "חולה סוכרת"),
        Link(21, 29, "אינסולין", ("A", "B"), score=0.5),
    )


def test_empty_text_and_blank_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(id="e", text="", entities=[]), "", _line(id="f"))
    docs = list(iter_jsonl(path))
    assert [d.id for d in docs] == ["e", "f"]
    assert docs[0].text == ""
    assert docs[0].entities == ()


def test_round_trip(tmp_path: Path) -> None:
    entities = [
        {
            "start": 4,
            "end": 14,
            "text": "חולה סוכרת",
            "type": "Disorder",
            "concept_id": "A|B",
            "score": 0.25,
            "alternatives": [{"concept_id": "C", "score": 0.2, "similarity": 0.9},
                             {"concept_id": "D", "score": 0, "similarity": 1}],
        }
    ]
    source = _write(tmp_path, _line(), _line(id="d2", entities=entities, extra={"k": [1, 2]}))
    docs = read_jsonl(source)
    out = tmp_path / "out.jsonl"
    write_jsonl(out, docs)
    assert read_jsonl(out) == docs
    written = out.read_text(encoding="utf-8").splitlines()
    original = source.read_text(encoding="utf-8").splitlines()
    assert written[0] == original[0]  # same key order as the Camoni files
    assert json.loads(written[1]) == json.loads(original[1])


def test_write_several_and_no_concept(tmp_path: Path) -> None:
    doc = Document("x", "ab cd", (Link(0, 2, "ab", ("C1", "C2")), Link(3, 5, "cd", score=1.0)))
    out = tmp_path / "out.jsonl"
    write_jsonl(out, [doc])
    entities = json.loads(out.read_text(encoding="utf-8"))["entities"]
    assert entities == [
        {"start": 0, "end": 2, "text": "ab", "concept_id": "C1|C2"},
        {"start": 3, "end": 5, "text": "cd", "score": 1.0},
    ]


def test_write_rejects_reserved_metadata_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="clash"):
        write_jsonl(tmp_path / "o.jsonl", [Document("x", "t", metadata={"text": "other"})])
    assert list(tmp_path.iterdir()) == []


def test_gzip_round_trip(tmp_path: Path) -> None:
    docs = read_jsonl(_write(tmp_path, _line()))
    out = tmp_path / "out.jsonl.gz"
    write_jsonl(out, docs)
    assert gzip.decompress(out.read_bytes()).decode("utf-8") == _line() + "\n"
    assert read_jsonl(out) == docs


def _entity(**fields: Any) -> list[dict[str, Any]]:
    return [{"start": 4, "end": 14, "text": "חולה סוכרת", **fields}]


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ('{"id": "x", "text": ', "invalid JSON"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({"text": "t"}), "no 'id' key"),
        (json.dumps({"id": "x"}), "no 'text' key"),
        (json.dumps({"id": "", "text": "t"}), "id '' is not"),
        (json.dumps({"id": "x", "text": 3}), "text of document 'x' is not a string"),
        (_line(id="x", entities={"a": 1}), "entities of document 'x' is not a list"),
        (_line(id="x", entities={}), "entities of document 'x' is not a list"),
        (_line(id="x", entities=False), "entities of document 'x' is not a list"),
        ('{"id": "x", "text": "a \\ud800 b"}', "['text'] holds the lone surrogate"),
        ('{"id": "x", "text": "a", "note": {"k": ["\\udfff"]}}', "['note'] ['k'] [0] holds"),
        (_line(id="x", entities=_entity(start="4")), "start='4' end=14 are not both integers"),
        (_line(id="x", entities=_entity(end=4.5)), "start=4 end=4.5 are not both integers"),
        (_line(id="x", entities=_entity(end=4)), "offsets 4-4"),
        (_line(id="x", entities=_entity(end=99)), "offsets 4-99"),
        (_line(id="x", entities=_entity(text="סוכרת")), "text 'סוכרת' differs"),
        (_line(id="x", entities=_entity(concept_id=5)), "concept_id 5"),
        (_line(id="x", entities=_entity(score="high")), "score 'high'"),
        (_line(id="x", entities=_entity(type=1)), "type 1"),
        (_line(id="x", entities=_entity(alternatives={"C": 1})), "alternatives {'C': 1} is not"),
        (_line(id="x", entities=_entity(alternatives=[{"concept_id": "C", "score": 1}])),
         "alternative 0 {'concept_id': 'C', 'score': 1} is not an object with a string"),
        (_line(id="x", entities=_entity(alternatives=[{"concept_id": "", "score": 1,
                                                      "similarity": 1}])), "alternative 0"),
        (_line(id="x", entities=_entity(alternatives=[{"concept_id": "C", "score": True,
                                                      "similarity": 1}])), "alternative 0"),
        (_line(id="d1"), "'d1' already used on line 1"),
    ],
)
def test_malformed(tmp_path: Path, bad_line: str, message: str) -> None:
    path = _write(tmp_path, _line(), bad_line, name="bad.jsonl")
    with pytest.raises(FormatError) as info:
        read_jsonl(path)
    assert "bad.jsonl:2:" in str(info.value)
    assert message in str(info.value)


def test_surrogate_pairs_are_text(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"id": "x", "text": "a \\ud83d\\ude00 b"}', name="ok.jsonl")
    assert read_jsonl(path)[0].text == "a \U0001F600 b"


def test_alternatives_read_as_triples(tmp_path: Path) -> None:
    alternatives = [{"concept_id": "C", "score": 0.2, "similarity": 1}]
    (doc,) = read_jsonl(_write(tmp_path, _line(entities=_entity(alternatives=alternatives))))
    assert doc.entities[0].alternatives == (("C", 0.2, 1.0),)
    (plain,) = read_jsonl(_write(tmp_path, _line(entities=_entity(alternatives=None)),
                                 name="plain.jsonl"))
    assert plain.entities[0].alternatives == ()


def test_an_empty_file_is_no_document_with_a_warning(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="xlnel.io.jsonl"):
        assert read_jsonl(_write(tmp_path, "")) == []
    assert "docs.jsonl holds no document: it is empty or blank" in caplog.text


def test_crlf_line_ends_and_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_bytes(("\ufeff" + _line() + "\r\n" + _line(id="d2") + "\r\n").encode("utf-8"))
    assert [(d.id, d.text) for d in read_jsonl(path)] == [("d1", TEXT), ("d2", TEXT)]


@pytest.mark.parametrize("line", [
    '{"id": "d1", "text": "ab", "entities": [], "entities": [{"start": 0, "end": 1}]}',
    '{"id": "d1", "text": "ab", "entities": [{"start": 0, "end": 1, "start": 1}]}'])
def test_a_key_given_twice_is_refused_not_overwritten(tmp_path: Path, line: str) -> None:
    with pytest.raises(FormatError, match=r"docs.jsonl:2: the key '(entities|start)' is given "
                                          "twice in one object"):
        read_jsonl(_write(tmp_path, _line(), line))


def test_an_empty_type_is_no_type_as_in_the_other_formats(tmp_path: Path) -> None:
    entities = [{"start": 4, "end": 14, "type": "", "concept_id": "C1"}]
    (doc,) = read_jsonl(_write(tmp_path, _line(entities=entities)))
    assert doc.entities == (Link(4, 14, "חולה סוכרת", ("C1",)),)


@pytest.mark.parametrize(("value", "why"), [
    ("NaN", "NaN is not JSON"), ("Infinity", "Infinity is not JSON"),
    ("-Infinity", "-Infinity is not JSON"), ("1e999", "1e999 is too large for a float"),
    ("1" + "0" * 400, "is not a finite number")])
def test_non_finite_scores_are_refused(tmp_path: Path, value: str, why: str) -> None:
    # NaN and Infinity are not JSON: Python's json reads them, other tools refuse the file
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "1", "text": "ab", "entities": [{"start": 0, "end": 1, '
                    f'"score": {value}}}]}}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=rf"a\.jsonl:1: .*{re.escape(why)}"):
        read_jsonl(path)
