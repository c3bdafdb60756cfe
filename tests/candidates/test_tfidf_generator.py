"""The TF-IDF generator's candidates carry their dictionary entry's source and builder score."""

from __future__ import annotations

from xlnel.candidates.tfidf_generator import TfidfCandidateGenerator
from xlnel.config import CandidatesConfig
from xlnel.dictionary.dictionary import Dictionary
from xlnel.types import Document


def _dictionary() -> Dictionary:
    d = Dictionary()
    d.add("diabetes", "C1")
    d.add("Diabetes", "C9", source="translated", score=0.6)
    d.add("tired", "C2", source="translated", score=0.3)
    d.add("insulin", "C3", source="annotation")
    return d


def _found(gen: TfidfCandidateGenerator) -> set[tuple[str, str, str | None, float | None]]:
    doc = Document("d", "tired of diabetes and insulin")
    return {(c.span.text, c.concept_id, c.source, c.entry_score)
            for c in gen.generate(doc) if c.score == 1.0}


def test_candidates_carry_source_and_entry_score():
    gen = TfidfCandidateGenerator(CandidatesConfig(), "en").fit(_dictionary())
    assert _found(gen) == {("tired", "C2", "translated", 0.3), ("diabetes", "C1", "kb", None),
                           ("diabetes", "C9", "translated", 0.6),
                           ("insulin", "C3", "annotation", None)}


def test_provenance_survives_save_and_a_folder_without_it_loads(tmp_path):
    cfg = CandidatesConfig()
    gen = TfidfCandidateGenerator(cfg, "en").fit(_dictionary())
    gen.save(tmp_path / "g")
    assert _found(TfidfCandidateGenerator.load(tmp_path / "g", cfg, "en")) == _found(gen)
    (tmp_path / "g" / "provenance.json").unlink()
    old = TfidfCandidateGenerator.load(tmp_path / "g", cfg, "en")
    assert {(text, cid) for text, cid, *_ in _found(old)} == {
        (text, cid) for text, cid, *_ in _found(gen)}
    assert {(source, score) for *_, source, score in _found(old)} == {(None, None)}
