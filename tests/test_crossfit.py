"""Cross-fitted DFT (``dft.crossfit``): every training document gives its gold names to the
final dictionary and trains the filter on candidates from a dictionary without its own names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import xlnel.training.steps as steps
from xlnel.config import load_config
from xlnel.dictionary.dft import crossfit_dictionaries, fine_tune_dictionary
from xlnel.dictionary.dictionary import Dictionary
from xlnel.folds import deal
from xlnel.types import Document, Link

# Made-up words: each document's own name, found in no knowledge base.
WORDS = ["quorvex", "blintaria", "zemfoss", "trodulin", "maxepral", "wendiquat", "palorix",
         "fenstrel"]


def _doc(i: int, word: str) -> Document:
    text = f"Patient {i} reports {word} and diabetes, no insulin."
    start = text.index(word)
    d = text.index("diabetes")
    return Document(f"doc{i}", text, (Link(start, start + len(word), word, (f"X{i}",)),
                                      Link(d, d + 8, "diabetes", ("C1",))))


def _docs() -> list[Document]:
    return [_doc(i, w) for i, w in enumerate(WORDS)]


def _base() -> Dictionary:
    base = Dictionary()
    base.add("diabetes", "C1")
    base.add("insulin", "C3")
    return base


def test_crossfit_folds_partition_the_positions_by_seed():
    folds = deal(8, 3, seed=0)
    assert sorted(i for f in folds for i in f) == list(range(8))
    assert sorted(len(f) for f in folds) == [2, 3, 3]
    assert all(f == sorted(f) for f in folds)
    assert deal(8, 3, seed=0) == folds
    assert deal(8, 3, seed=1) != folds
    assert deal(2, 5, seed=0) in ([[0], [1]], [[1], [0]])  # empty folds dropped


def test_final_dictionary_holds_every_document_name():
    dictionary = _base()
    rest, result = fine_tune_dictionary(dictionary, _docs(), R=0.0, crossfit=3)
    assert [d.id for d in rest] == [d.id for d in _docs()]  # all train the filter
    assert all(w in dictionary for w in WORDS)
    assert (result.dft_documents, result.filter_documents, result.crossfit) == (0, 8, 3)
    assert result.entries_added == 8  # "diabetes" was in the base already


def test_with_r_the_share_feeds_the_dictionary_only_and_the_rest_too():
    dictionary = _base()
    rest, result = fine_tune_dictionary(dictionary, _docs(), R=0.25, crossfit=2)
    assert result.dft_documents == 2 and len(rest) == 6
    assert all(w in dictionary for w in WORDS)


def test_a_fold_dictionary_lacks_its_own_names_and_has_all_others():
    docs = _docs()
    rest, _ = fine_tune_dictionary(_base(), docs, R=0.25, crossfit=3)
    reserved = {d.id for d in docs} - {d.id for d in rest}
    seen: list[int] = []
    for fold, dictionary in crossfit_dictionaries(_base(), docs, rest, 3):
        own = {rest[i].entities[0].text for i in fold}
        others = {d.entities[0].text for d in docs} - own
        assert not own & set(dictionary.names)
        assert others <= set(dictionary.names)
        assert "diabetes" in dictionary and dictionary.source_of("diabetes", "C1") == "kb"
        assert {d.id for d in docs if d.entities[0].text in others} >= reserved
        seen += fold
    assert sorted(seen) == list(range(len(rest)))


def test_crossfit_one_is_refused():
    with pytest.raises(ValueError, match="crossfit"):
        fine_tune_dictionary(_base(), _docs(), R=0.0, crossfit=1)
    with pytest.raises(ValueError, match="crossfit"):
        load_config(None, {"dft.crossfit": 1})


@pytest.fixture()
def made_up_config(tmp_path: Path) -> Path:
    docs = tmp_path / "docs.jsonl"
    rows = []
    for d in _docs():
        rows.append({"id": d.id, "text": d.text, "entities": [
            {"start": e.start, "end": e.end, "text": e.text, "concept_id": e.concept_id}
            for e in d.entities]})
    docs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\tpreferred\nC1\tdiabetes\t1\nC3\tinsulin\t1\n",
                  encoding="utf-8")
    path = tmp_path / "config.yaml"
    path.write_text(f"lang: en\ndata:\n  train: {docs}\ndictionary:\n  kb: ['tsv:{kb}']\n"
                    "dft:\n  R: 0.0\n  crossfit: 4\ncandidates:\n  threshold: 0.9\n"
                    "filter:\n  name: xlnel.gbdt.v1\n  options: {folds: 2, max_iter: 5}\n",
                    encoding="utf-8")
    return path


def test_recipe_generates_each_document_candidates_without_its_own_names(made_up_config,
                                                                          monkeypatch):
    from xlnel.training import TrainingRun

    fitted: list[set[str]] = []
    real = steps.fit_generator

    def spy(config, dictionary):
        fitted.append(set(dictionary.names))
        return real(config, dictionary)

    monkeypatch.setattr(steps, "fit_generator", spy)
    run = TrainingRun(load_config(made_up_config))
    filter_docs = run.dictionary().filter_documents
    cands = run.candidates().filter
    assert len(filter_docs) == len(WORDS)
    for doc, doc_cands in zip(filter_docs, cands, strict=True):
        own = doc.entities[0].text
        names = {c.name for c in doc_cands}
        assert own not in names  # its own gold name is not in its fold's dictionary
        assert "diabetes" in names
    # the final generator (the pipeline's) first, then one per fold
    assert set(WORDS) <= fitted[0]
    assert len(fitted) == 1 + 4
    assert all(len(set(WORDS) - names) == 2 for names in fitted[1:])
    assert set(WORDS) <= set(run.pipeline().dictionary.names)
