from __future__ import annotations

import json
import math

import pytest

from xlnel.errors import ArtifactError
from xlnel.linkers.entity_types import EntityTyper, char_ngrams
from xlnel.types import Document, Link


def _doc(doc_id: str, mentions: list[tuple[str, str | None, tuple[str, ...]]]) -> Document:
    text, links, pos = "", [], 0
    for mention, kind, ids in mentions:
        links.append(Link(pos, pos + len(mention), mention, ids, type=kind))
        text += mention + ". "
        pos = len(text)
    return Document(doc_id, text, tuple(links))


TRAIN = [
    _doc("a", [("nephritis", "Disease", ("D1",)), ("ethanol", "Chemical", ("C1",)),
               ("hepatitis", "Disease", ("D2",))]),
    _doc("b", [("menthol", "Chemical", ("C2",)), ("methanol", "Chemical", ("C3",)),
               ("cocaine", "Chemical", ("X",)), ("cocaine", "Disease", ("X",)),
               ("cocaine abuse", "Disease", ("X",))]),
]


def test_char_ngrams_pad_each_word() -> None:
    assert char_ngrams("ab") == ["^a", "ab", "b$", "^ab", "ab$", "^ab$"]
    assert char_ngrams("x y") == ["^x", "x$", "^x$", "^y", "y$", "^y$"]
    assert char_ngrams("") == []


def test_fit_counts_types_per_concept_most_annotated_type_first() -> None:
    typer = EntityTyper.fit(TRAIN)
    assert typer is not None
    assert typer.types == ["Chemical", "Disease"]  # 4 Chemical mentions, 4 Disease: by name
    assert typer.type_counts == {"Chemical": 4, "Disease": 4}
    assert typer.concepts["X"] == {"Chemical": 1, "Disease": 2}
    assert typer.ngrams["^n"] == [0, 1]  # "nephritis"


def test_fit_without_types_gives_no_typer() -> None:
    untyped = [Document("a", "diabetes", (Link(0, 8, "diabetes", ("C1",)),))]
    assert EntityTyper.fit(untyped) is None
    assert EntityTyper.fit([]) is None


def test_the_concept_decides_when_the_training_documents_annotated_it() -> None:
    typer = EntityTyper.fit(TRAIN)
    assert typer is not None
    assert typer.type_of("cocaine", "X") == ("Disease", "concept")  # 2 of its 3 mentions
    assert typer.type_of("nephritis", "C1") == ("Chemical", "concept")  # the concept, not words


def test_a_concept_tie_goes_to_the_type_annotated_more_often() -> None:
    typer = EntityTyper(types=["A", "B"], concepts={"X": {"B": 1, "A": 1}},
                        type_counts={"A": 3, "B": 1})
    assert typer.type_of("x", "X") == ("A", "concept")


def test_the_words_decide_for_an_unseen_concept() -> None:
    typer = EntityTyper.fit(TRAIN)
    assert typer is not None
    assert typer.type_of("arthritis", "D9") == ("Disease", "words")
    assert typer.type_of("propanol", None) == ("Chemical", "words")
    # the concept's name is read too: a mention text with no known n-gram
    assert typer.type_of("zzz", "D9", "gastritis")[0] == "Disease"


def test_words_model_by_hand() -> None:
    # A: "x" (n-grams ^x, x$, ^x$); B: "y" twice. Vocabulary 6 n-grams (+1), totals A 3, B 6.
    docs = [_doc("a", [("x", "A", ()), ("y", "B", ()), ("y", "B", ())])]
    typer = EntityTyper.fit(docs)
    assert typer is not None and typer.types == ["B", "A"]
    # "x": A gets log(1/3) + 3 log(1.5 / (3 + 0.5 * 7)), B log(2/3) + 3 log(0.5 / (6 + 3.5))
    a = math.log(1 / 3) + 3 * math.log(1.5 / 6.5)
    b = math.log(2 / 3) + 3 * math.log(0.5 / 9.5)
    assert a > b and typer.type_of("x") == ("A", "words")
    # no known n-gram: the prior alone, B
    assert typer.type_of("q") == ("B", "words")


def test_a_single_type_is_everyones() -> None:
    typer = EntityTyper.fit([_doc("a", [("asthma", "Disorder", ("C4",))])])
    assert typer is not None
    assert typer.type_of("insulin", "C3") == ("Disorder", "words")


def test_annotate_keeps_given_types_and_fills_the_others() -> None:
    typer = EntityTyper.fit(TRAIN)
    assert typer is not None
    links = [Link(0, 9, "arthritis", ("D9",)), Link(10, 17, "ethanol", ("C1",), type="Given")]
    out = typer.annotate(links)
    assert [link.type for link in out] == ["Disease", "Given"]
    doc = typer.annotate_document(Document("d", "arthritis ethanol", tuple(links)))
    assert [link.type for link in doc.entities] == ["Disease", "Given"]


def test_save_and_load_round_trip(tmp_path) -> None:
    typer = EntityTyper.fit(TRAIN, "en")
    assert typer is not None
    typer.save(tmp_path / "t.json")
    back = EntityTyper.load(tmp_path / "t.json")
    assert back == typer
    assert back.type_of("arthritis", "D9") == typer.type_of("arthritis", "D9")


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("types"), "not an entity typer"),
    (lambda d: d.update(type_counts={"Chemical": 4}), "type_counts"),
    (lambda d: d["ngrams"].update({"^q": [1]}), "n-gram '\\^q' has 1 counts"),
    (lambda d: d["concepts"].update({"Z": {"Other": 1}}), "concept 'Z' has a type outside"),
    (lambda d: d.update(ngrams=[1, 2]), "not an entity typer"),
])
def test_load_refuses_a_broken_file(tmp_path, edit, message) -> None:
    typer = EntityTyper.fit(TRAIN)
    assert typer is not None
    typer.save(tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    edit(data)
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError, match=message):
        EntityTyper.load(tmp_path / "t.json")


def test_load_refuses_a_missing_or_non_json_file(tmp_path) -> None:
    with pytest.raises(ArtifactError, match="no entity typer"):
        EntityTyper.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ArtifactError, match="not an entity typer"):
        EntityTyper.load(tmp_path / "bad.json")
