"""Slow tests: the readers on the real corpora and knowledge bases in ``../shared/data``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared_data import shared_file
from xlnel.io import (
    hpo_default_path,
    load_kb,
    read_documents,
    read_hpo,
    read_jsonl,
    read_kb_tsv,
    read_names_list,
    read_pubtator,
    read_term_to_cui,
    write_documents,
    write_jsonl,
    write_pubtator,
)
from xlnel.types import Document

pytestmark = pytest.mark.slow


def _check_offsets(docs: list[Document]) -> None:
    for doc in docs:
        for link in doc.entities:
            assert doc.text[link.start : link.end] == link.text
        assert list(doc.entities) == sorted(doc.entities, key=lambda e: (e.start, e.end))


@pytest.mark.parametrize("split", ["train", "dev"])
def test_bc5cdr(tmp_path: Path, split: str) -> None:
    docs = read_pubtator(shared_file(f"bc5cdr/{split}.pubtator"))
    assert len(docs) == 500
    assert len({d.id for d in docs}) == 500
    _check_offsets(docs)
    links = [link for doc in docs for link in doc.entities]
    assert len(links) > 9000
    assert {link.type for link in links} == {"Chemical", "Disease"}
    assert any(len(link.concept_ids) > 1 for link in links)
    assert any(not link.concept_ids for link in links)
    assert all(doc.metadata.get("relations") for doc in docs)
    out = tmp_path / "rt.pubtator"
    write_pubtator(out, docs)
    assert read_pubtator(out) == docs
    # through BioC (title and abstract passages, relations as infons) and back to PubTator:
    # the same texts, mentions and relations; only the parts of composite mentions are lost
    bioc = tmp_path / "c.xml.gz"
    write_documents(bioc, docs)
    again = read_documents(bioc)
    assert [(d.id, d.text, d.entities, d.metadata["title"]) for d in again] == [
        (d.id, d.text, d.entities, d.metadata["title"]) for d in docs]
    write_pubtator(out, again)
    assert [{**d.metadata, "annotation_extras": None} for d in read_pubtator(out)] == [
        {**d.metadata, "annotation_extras": None} for d in docs]


def test_medmentions_sample() -> None:
    docs = read_pubtator(shared_file("medmentions/sample3.pubtator"))
    assert len(docs) == 3
    _check_offsets(docs)
    ids = [cid for doc in docs for link in doc.entities for cid in link.concept_ids]
    assert ids
    assert all(cid.startswith("C") and not cid.startswith("UMLS:") for cid in ids)


@pytest.mark.parametrize("community", ["diabetes", "sclerosis", "depression"])
def test_camoni(tmp_path: Path, community: str) -> None:
    path = shared_file(f"camoni/{community}.jsonl")
    docs = read_jsonl(path)
    assert len(docs) > 200
    _check_offsets(docs)
    assert all(doc.metadata["community"] == community for doc in docs)
    out = tmp_path / "rt.jsonl"
    write_jsonl(out, docs)
    assert out.read_bytes() == path.read_bytes()
    assert read_documents(out) == docs


def test_camoni_diabetes_concepts() -> None:
    docs = read_jsonl(shared_file("camoni/diabetes.jsonl"))
    linked = [link for doc in docs for link in doc.entities if link.concept_ids]
    assert len(linked) == 728


def test_mesh_names() -> None:
    concepts = read_kb_tsv(shared_file("kb/mesh_names.tsv"))
    assert len(concepts) == 54105
    assert sum(len(c.names) for c in concepts) == 64837
    assert all(c.names for c in concepts)


def test_hebrew_names() -> None:
    concepts = read_names_list(shared_file("camoni/hebrew_umls_names.txt"))
    assert len(concepts) == 6492
    assert all(c.id == c.names[0] for c in concepts)


def test_term_to_cui() -> None:
    concepts = read_term_to_cui(shared_file("camoni/diabetes_term_to_cui.tsv"))
    assert sum(len(c.names) for c in concepts) == 747
    assert all(c.id.startswith("C") for c in concepts)


def test_hpo() -> None:
    hpo, obo = load_kb("hpo"), load_kb(f"obo:{hpo_default_path()}")
    # the same terms and names; the hpo spec also types each term by its sub-ontology
    assert [(c.id, c.names) for c in hpo] == [(c.id, c.names) for c in obo]
    assert all(c.types for c in hpo if c.id != "HP:0000001")
    concepts = read_hpo()
    assert len(concepts) > 18000
    assert all(c.id.startswith("HP:") and c.names for c in concepts)
    by_cui = read_hpo(use_umls_ids=True)
    cuis = [c for c in by_cui if not c.id.startswith("HP:")]
    assert len(cuis) > 11000  # first UMLS xref of each term; shared CUIs merged
    assert len({c.id for c in by_cui}) == len(by_cui)
