"""Fixtures of the filter tests: a tiny synthetic corpus and a tiny random BERT."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from xlnel.candidates.tfidf_generator import TfidfCandidateGenerator
from xlnel.config import CandidatesConfig
from xlnel.dictionary.dictionary import Dictionary
from xlnel.types import Candidate, Document, Link

DISEASES = {"diabetes": "D1", "asthma": "D2", "hypertension": "D3", "diabetic foot": "D4",
            "migraine": "D5"}
DRUGS = {"insulin": "C1", "metformin": "C2", "aspirin": "C3", "insulin pump": "C4"}
FILLERS = ["the patient has", "my mother was told she has", "since last year I have"]
MIDDLES = ["and takes", "so the doctor gave", "treated with"]
ENDINGS = ["daily", "every morning", "twice a week"]


def _document(i: int, rng: random.Random) -> Document:
    disease = rng.choice(["diabetes", "asthma", "hypertension", "migraine"])
    drug = rng.choice(["insulin", "metformin", "aspirin"])
    head = f"{rng.choice(FILLERS)} "
    text = f"{head}{disease} {rng.choice(MIDDLES)} {drug} {rng.choice(ENDINGS)}."
    d0 = len(head)
    c0 = text.index(f" {drug} ") + 1
    entities = (Link(d0, d0 + len(disease), disease, (DISEASES[disease],), "Disorder"),
                Link(c0, c0 + len(drug), drug, (DRUGS[drug],), "Chemical or drug"))
    return Document(f"doc{i}", text, entities)


def vocabulary() -> list[str]:
    """Every word of the synthetic corpus and dictionary (whole-word tokens of the tiny BERT)."""
    texts = [*DISEASES, *DRUGS, *FILLERS, *MIDDLES, *ENDINGS]
    return sorted({w for t in texts for w in t.split()})


@pytest.fixture(scope="session")
def corpus() -> tuple[list[Document], list[list[Candidate]]]:
    """Sixteen annotated English documents and their TF-IDF candidates."""
    rng = random.Random(7)
    docs = [_document(i, rng) for i in range(16)]
    dictionary = Dictionary()
    for name, cid in {**DISEASES, **DRUGS}.items():
        dictionary.add(name, cid)
    generator = TfidfCandidateGenerator(CandidatesConfig(threshold=0.3, max_words=2), "en")
    generator.fit(dictionary)
    return docs, generator.generate_batch(docs)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT sequence classifier (one label) knowing the corpus words."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from xlnel.models.testing import tiny_bert

    return tiny_bert(tmp_path_factory.mktemp("tiny_bert"), vocabulary(), num_labels=1)
