from __future__ import annotations

import re

import pytest

from xlnel.dictionary.dft import fine_tune_dictionary, prune_unlinked_names, split_documents
from xlnel.dictionary.dictionary import Dictionary, Entry
from xlnel.errors import FormatError
from xlnel.types import Concept, Document, Link


def _docs(n: int) -> list[Document]:
    return [Document(f"d{i}", f"text {i} diabetes",
                     (Link(7 + len(str(i)), 15 + len(str(i)), "diabetes", (f"C{i}",)),))
            for i in range(n)]


def test_dictionary_dedup_sources_and_round_trip(tmp_path):
    d = Dictionary.from_concepts([Concept("C1", ("diabetes", "DM")), Concept("C2", ("DM",))])
    assert len(d) == 3 and d.concepts_of("DM") == ["C1", "C2"]
    assert not d.add("diabetes", "C1", "annotation")  # already there: keeps source kb
    assert d.source_of("diabetes", "C1") == "kb"
    assert d.add("סוכרת", "C1", "annotation")
    d.save(tmp_path / "d.tsv")
    loaded = Dictionary.load(tmp_path / "d.tsv")
    assert list(loaded) == list(d)
    assert loaded.count_by_source() == {"kb": 3, "translated": 0, "annotation": 1, "composed": 0,
                                        "transliterated": 0, "corpus": 0}


def test_dictionary_rejects_bad_entries(tmp_path):
    with pytest.raises(ValueError, match="source"):
        Dictionary([Entry("a", "C1", "guess")])
    with pytest.raises(ValueError, match="name"):
        Dictionary().add("  ", "C1")
    bad = tmp_path / "bad.tsv"
    bad.write_text("name\tconcept_id\tsource\nonly-two\tfields\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad.tsv:2"):
        Dictionary.load(bad)


@pytest.mark.parametrize("fraction,expected", [(0.0, 0), (0.2, 2), (0.5, 5), (1.0, 10)])
def test_split_documents_sizes_and_seed(fraction, expected):
    docs = _docs(10)
    taken, rest = split_documents(docs, fraction, seed=3)
    assert len(taken) == expected and len(rest) == 10 - expected
    assert {d.id for d in taken} | {d.id for d in rest} == {d.id for d in docs}
    assert split_documents(docs, fraction, seed=3) == (taken, rest)


def test_split_documents_other_seed_differs_and_bad_fraction():
    docs = _docs(20)
    assert split_documents(docs, 0.5, 1)[0] != split_documents(docs, 0.5, 2)[0]
    with pytest.raises(ValueError, match="1.5"):
        split_documents(docs, 1.5, 0)


def test_dft_adds_pairs_of_reserved_documents_only():
    docs = _docs(10)
    d = Dictionary()
    rest, result = fine_tune_dictionary(d, docs, R=0.2, seed=0)
    assert result.dft_documents == 2 and result.filter_documents == 8 and len(rest) == 8
    reserved = {d_.id for d_ in docs} - {r.id for r in rest}
    assert {e.concept_id for e in d} == {f"C{doc_id[1:]}" for doc_id in reserved}
    assert all(e.source == "annotation" for e in d)


def test_dft_unlinked_and_composite_mentions():
    doc = Document("x", "a b c", (Link(0, 1, "a"), Link(2, 3, "b", ("C1", "C2")),
                                  Link(4, 5, "c", ("C3",))))
    d = Dictionary()
    fine_tune_dictionary(d, [doc], R=1.0, unlinked="name")
    assert sorted((e.name, e.concept_id) for e in d) == [("a", "a"), ("c", "C3")]
    d2 = Dictionary()
    _, res = fine_tune_dictionary(d2, [doc], R=1.0, unlinked="skip")
    assert [(e.name, e.concept_id) for e in d2] == [("c", "C3")] and res.pairs_seen == 1


def test_dft_r_zero_keeps_everything_for_the_filter():
    rest, res = fine_tune_dictionary(Dictionary(), _docs(5), R=0.0)
    assert len(rest) == 5 and res.entries_added == 0


def test_dictionary_remove() -> None:
    d = Dictionary([Entry("a", "C1", "kb"), Entry("a", "C2", "corpus", 0.5)])
    assert d.remove("a", "C2") and not d.remove("a", "C2")
    assert d.concepts_of("a") == ["C1"] and d.score_of("a", "C2") is None
    assert d.remove("a", "C1") and "a" not in d and len(d) == 0


def test_prune_removes_generated_names_never_annotated() -> None:
    docs = [Document("x", "no pain. No sugar, no", (Link(3, 7, "pain", ("C1",)),)),
            Document("y", "pain and high sugar", ())]
    d = Dictionary([Entry("no", "C9", "corpus", 0.8), Entry("pain", "C1", "corpus", 0.9),
                    Entry("high sugar", "C2", "corpus", 0.7), Entry("sugar", "C3", "corpus", 0.6),
                    Entry("no", "C8", "kb")])
    # "no" 3 times, never gold: its generated entry goes, the KB one stays; "pain" is gold once;
    # "sugar" occurs twice (under the threshold of 3), "high sugar" once
    assert prune_unlinked_names(d, docs, 3) == 1
    assert d.concepts_of("no") == ["C8"] and d.concepts_of("pain") == ["C1"]
    assert prune_unlinked_names(d, docs, 2) == 1 and "sugar" not in d and "high sugar" in d


def test_dft_prune_counts_in_the_result() -> None:
    docs = [Document("x", "no no no", ())]
    d = Dictionary([Entry("no", "C9", "corpus", 0.8)])
    _, result = fine_tune_dictionary(d, docs, 1.0, prune=2)
    assert result.entries_pruned == 1 and len(d) == 0


def test_dictionary_writes_tabs_and_line_breaks_of_names_as_one_space(tmp_path):
    d = Dictionary()
    d.add("heart\tfailure", "C1")
    d.add("kidney \r\n disease", "C2")
    d.add("liver\u2028cyst", "C3")  # ends no line of a TSV: kept
    d.save(tmp_path / "d.tsv")
    lines = (tmp_path / "d.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[1:4] == ["heart failure\tC1\tkb", "kidney disease\tC2\tkb",
                          "liver\u2028cyst\tC3\tkb"]
    assert Dictionary.load(tmp_path / "d.tsv").names == ["heart failure", "kidney disease",
                                                        "liver\u2028cyst"]


@pytest.mark.parametrize("concept_id", ["C\t1", "C1\n", "C\r1"])
def test_dictionary_refuses_concept_ids_that_break_a_row(concept_id):
    with pytest.raises(ValueError, match="tab or a line break"):
        Dictionary().add("heart", concept_id)


def test_dictionary_load_skips_blank_lines_as_the_kb_readers_do(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_text("name\tconcept_id\tsource\nheart\tC1\tkb\n\n  \nliver\tC2\tkb\n\n",
                    encoding="utf-8")
    assert [(e.name, e.concept_id) for e in Dictionary.load(path)] == [("heart", "C1"),
                                                                      ("liver", "C2")]


@pytest.mark.parametrize(("name", "expected"), [("-", False), (".", False), ("()", False),
                                                ("a", True), ("2", True), ("לב", True)])
def test_has_word_character(name, expected):
    from xlnel.dictionary.dictionary import has_word_character

    assert has_word_character(name) is expected


def test_names_of_only_punctuation_are_no_dictionary_names():
    d = Dictionary.from_concepts([Concept("C1", ("-", "heart")), Concept("C2", (".", "..."))])
    assert d.names == ["heart"] and d.concept_ids() == {"C1"}


@pytest.mark.parametrize("score", ["nan", "inf", "-0.5", "1.5", "high"])
def test_dictionary_load_refuses_scores_outside_0_to_1(tmp_path, score):
    path = tmp_path / "d.tsv"
    path.write_text(f"name\tconcept_id\tsource\tscore\nheart\tC1\ttranslated\t0.5\n"
                    f"liver\tC2\ttranslated\t{score}\n", encoding="utf-8")
    with pytest.raises(FormatError, match=rf"d\.tsv:3: score '{score}' is not"):
        Dictionary.load(path)


def test_dictionary_load_reads_concept_ids_as_the_corpora_do(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_text("name\tconcept_id\tsource\nheart\t C1 \tkb\nliver\tMESH:D2\tkb\n",
                    encoding="utf-8")
    assert [(e.name, e.concept_id) for e in Dictionary.load(path)] == [("heart", "C1"),
                                                                      ("liver", "D2")]


@pytest.mark.parametrize("concept_id", ["-1", " ", "D1|D2"])
def test_dictionary_load_refuses_ids_that_are_not_one_concept(tmp_path, concept_id):
    path = tmp_path / "d.tsv"
    path.write_text(f"name\tconcept_id\tsource\nheart\tC1\tkb\nliver\t{concept_id}\tkb\n",
                    encoding="utf-8")
    with pytest.raises(FormatError, match=rf"d\.tsv:3: concept_id '{re.escape(concept_id)}' is "
                                          "not one concept id"):
        Dictionary.load(path)
