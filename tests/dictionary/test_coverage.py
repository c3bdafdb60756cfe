"""Dictionary coverage on hand-worked cases: exact, fuzzy, concept-level and lookup accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.analysis.coverage import (
    DictionaryLookup,
    GoldItem,
    coverage,
    coverage_of,
    format_table,
    infer_lang,
    load_dictionary,
    read_gold,
    read_gold_tsv,
)
from xlnel.cli.main import app
from xlnel.dictionary.dictionary import Dictionary, Entry
from xlnel.errors import FormatError

# C1 has two names; "diabetes insipidus" (C4) shares "diabetes" with C1's names; "xyxy" is
# ambiguous between C5 and C6 (C5 was added first).
ENTRIES = [("Diabetes mellitus", "C1"), ("Diabetes", "C1"), ("Hypertension", "C2"),
           ("zzzz qqqq", "C3"), ("Diabetes insipidus", "C4"), ("xyxy", "C5"), ("xyxy", "C6")]

# id, english, translation. Per row (exact text / concept exact / concept fuzzy / @1 / @2):
# C1 diabetes       yes / yes / yes / yes / yes
# C2 hypertensionx  no  / no  / yes / yes / yes  (one letter added: cosine well over 0.8)
# C4 diabetes       yes / no  / no  / no  / yes  (C1's exact name ranks first, C4 second)
# C3 kkkk           no  / no  / no  / no  / no   (shares no character with any name)
# C9 xyxy           yes / no  / no  / no  / no   (C9 has no name at all)
# C6 xyxy           yes / yes / yes / no  / yes  (tie with C5, dictionary order puts C5 first)
# The first row is repeated: one distinct item.
ROWS = [("C1", "Diabetes", "Diabetes"), ("C2", "Hypertension", "hypertensionx"),
        ("C4", "Diabetes insipidus", "diabetes"), ("C3", "Zzz", "kkkk"),
        ("C9", "Unknown", "XYXY"), ("C6", "Other", "xyxy"), ("C1", "Diabetes", "DIABETES")]


@pytest.fixture()
def dictionary() -> Dictionary:
    return Dictionary(Entry(name, cid) for name, cid in ENTRIES)


def _write_tsv(path: Path, rows: list[tuple[str, str, str]], header: bool = True) -> Path:
    lines = (["hpo_id\tenglish\ttranslation"] if header else []) + ["\t".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _items() -> list[GoldItem]:
    return [GoldItem(text, (cid,)) for cid, _, text in ROWS]


def test_hand_worked_counts(dictionary: Dictionary) -> None:
    s = coverage_of(dictionary, [("gold", _items())], "en", 0.8, k=2).total
    assert (s.texts, s.exact, s.fuzzy) == (4, 2, 3)  # diabetes, hypertensionx, kkkk, xyxy
    assert (s.items, s.items_in_dictionary) == (6, 5)
    assert (s.concept_exact, s.concept_fuzzy) == (2, 3)
    assert (s.linked_at_1, s.linked_at_k) == (2, 4)
    shares = s.to_dict()
    assert shares["exact_share"] == pytest.approx(0.5)
    assert shares["fuzzy_share"] == pytest.approx(0.75)
    assert shares["concept_exact_share"] == pytest.approx(2 / 6, abs=1e-4)
    assert shares["accuracy@1"] == pytest.approx(2 / 6, abs=1e-4)
    assert shares["accuracy@2"] == pytest.approx(4 / 6, abs=1e-4)


def test_k10_and_threshold(dictionary: Dictionary) -> None:
    s = coverage_of(dictionary, [("gold", _items())], "en", 0.8, k=10).total
    assert (s.linked_at_1, s.linked_at_k) == (2, 4)
    strict = coverage_of(dictionary, [("gold", _items())], "en", 1.0, k=10).total
    assert strict.fuzzy == strict.exact == 2  # only identical strings reach cosine 1
    assert strict.concept_fuzzy == strict.concept_exact == 2


def test_identical_and_nothing_found(dictionary: Dictionary) -> None:
    same = [GoldItem(name, (cid,)) for name, cid in ENTRIES if cid != "C6"]
    s = coverage_of(dictionary, [("same", same)], "en").total
    assert s.exact == s.fuzzy == s.texts == 6
    assert s.concept_exact == s.items == 6
    assert s.linked_at_1 == s.items  # each text's own concept ranks first
    none = coverage_of(dictionary, [("none", [GoldItem("kkkk", ("C1",))])], "en").total
    assert (none.exact, none.fuzzy, none.concept_fuzzy, none.linked_at_k) == (0, 0, 0, 0)


def test_tsv_with_and_without_header(tmp_path: Path) -> None:
    with_header = read_gold_tsv(_write_tsv(tmp_path / "a.tsv", ROWS[:2]))
    without = read_gold_tsv(_write_tsv(tmp_path / "b.tsv", ROWS[:2], header=False))
    assert with_header == without == [GoldItem("Diabetes", ("C1",)),
                                       GoldItem("hypertensionx", ("C2",))]


def test_a_first_row_of_ids_without_digits_is_no_header(tmp_path: Path) -> None:
    path = tmp_path / "names.tsv"  # a names: knowledge base's ids are names
    path.write_text("seizure\tseizures\tcrises\nhypertension\thypertension\thta\n",
                    encoding="utf-8")
    assert [item.concept_ids for item in read_gold_tsv(path)] == [("seizure",),
                                                                  ("hypertension",)]
    for header in ("hpo_id", "concept_id", "ID", "cui"):
        path.write_text(f"{header}\tenglish\ttranslation\nseizure\tseizures\tcrises\n",
                        encoding="utf-8")
        assert len(read_gold_tsv(path)) == 1, header


def test_malformed_tsv_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("hpo_id\tenglish\ttranslation\nC1\tDiabetes\tDiabetes\nC2\tno translation\n",
                    encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.tsv:3: .*2 field"):
        read_gold_tsv(path)
    path.write_text("C1\tDiabetes\t \n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.tsv:1: "):
        read_gold_tsv(path)


def test_empty_gold_is_an_error(tmp_path: Path, dictionary: Dictionary) -> None:
    empty = _write_tsv(tmp_path / "empty.tsv", [])
    with pytest.raises(ValueError, match="empty.tsv has no text"):
        coverage(str(tmp_path / "dict.tsv"), [empty])  # gold is checked before the dictionary
    with pytest.raises(ValueError, match="at least one gold"):
        coverage_of(dictionary, [], "en")


def test_corpus_gold_per_file_and_total(tmp_path: Path, dictionary: Dictionary) -> None:
    dict_path = tmp_path / "dict.tsv"
    dictionary.save(dict_path)
    doc = {"id": "d1", "text": "Diabetes and kkkk", "entities": [
        {"start": 0, "end": 8, "text": "Diabetes", "type": "Disorder", "concept_id": "C1"},
        {"start": 13, "end": 17, "text": "kkkk", "type": "Disorder"}]}
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    assert read_gold(corpus) == [GoldItem("Diabetes", ("C1",)), GoldItem("kkkk", ())]
    tsv = _write_tsv(tmp_path / "gold.tsv", ROWS)
    report = coverage(dict_path, [corpus, tsv], k=2)
    files = dict(report.files)
    assert (files[str(corpus)].texts, files[str(corpus)].exact) == (2, 1)
    assert (files[str(corpus)].items, files[str(corpus)].linked_at_1) == (1, 1)
    assert files[str(tsv)].items == 6
    assert (report.total.texts, report.total.items) == (4, 6)  # the corpus adds nothing new
    assert report.lang == "en" and report.names == 6 and report.concepts == 6
    out = report.to_dict()
    assert set(out["files"]) == {str(corpus), str(tsv)} and out["total"]["items"] == 6
    assert "total" in format_table(report)


def test_load_dictionary_and_infer_lang(tmp_path: Path, dictionary: Dictionary) -> None:
    folder = tmp_path / "adapt-fr"
    folder.mkdir()
    dictionary.save(folder / "dictionary.tsv")
    (folder / "report.json").write_text(json.dumps({"lang": "fr"}), encoding="utf-8")
    assert len(load_dictionary(folder)) == len(dictionary)
    assert infer_lang(folder / "dictionary.tsv", ["diabète"]) == "fr"
    names = tmp_path / "names.txt"
    names.write_text("סוכרת\nלחץ דם\n", encoding="utf-8")
    loaded = load_dictionary(f"names:{names}")
    assert loaded.names == ["סוכרת", "לחץ דם"]
    assert infer_lang(names, ["סוכרת"]) == "he"
    assert infer_lang(names, ["diabetes"]) == "en"


@pytest.mark.parametrize("spec", ["missing/dictionary.tsv", "missing.tsv", "runs/adapt-fr"])
def test_load_dictionary_names_a_missing_path(tmp_path: Path, spec: str) -> None:
    with pytest.raises(FileNotFoundError, match="no such dictionary file or folder"):
        load_dictionary(tmp_path / spec)


def test_hebrew_normalisation(tmp_path: Path) -> None:
    d = Dictionary([Entry("סוכרת", "C1")])
    # final letter and niqqud differ, the normalised texts agree
    s = coverage_of(d, [("g", [GoldItem("סוּכֶּרֶת", ("C1",)), GoldItem("סוכרתם", ())])], "he").total
    assert (s.texts, s.exact, s.concept_exact) == (2, 1, 1)


def test_cli(tmp_path: Path, dictionary: Dictionary) -> None:
    dict_path = tmp_path / "dict.tsv"
    dictionary.save(dict_path)
    gold = _write_tsv(tmp_path / "gold.tsv", ROWS)
    runner = CliRunner()
    r = runner.invoke(app, ["dictionary", "coverage", str(dict_path), str(gold), "--json",
                            "--k", "2"])
    assert r.exit_code == 0, r.output
    total = json.loads(r.output)["total"]
    assert (total["linked_at_1"], total["linked_at_k"], total["fuzzy"]) == (2, 4, 3)
    r = runner.invoke(app, ["dictionary", "coverage", str(dict_path), str(gold)])
    assert r.exit_code == 0 and "acc@10" in r.output
    bad = tmp_path / "bad.tsv"
    bad.write_text("C1\tonly two\n", encoding="utf-8")
    r = runner.invoke(app, ["dictionary", "coverage", str(dict_path), str(bad)])
    assert r.exit_code == 1 and "bad.tsv:1" in r.output


def test_names_over_threshold_beyond_the_kept_names() -> None:
    # three names within one letter of the text, but only two kept per search
    d = Dictionary([Entry("hypertensiona", "C1"), Entry("hypertensionb", "C2"),
                    Entry("hypertensionc", "C3"), Entry("fever", "C4")])
    lookup = DictionaryLookup(d, "en", link_names=2)
    assert len(lookup.search(["hypertension"])[0]) == 2
    over = lookup.names_over("hypertension", 0.8)
    assert sorted(lookup.keys[m.name_index] for m in over) == [
        "hypertensiona", "hypertensionb", "hypertensionc"]
    assert lookup.ranked_concepts("hypertension", 10) == ["C1", "C2"]  # ties: dictionary order


def test_item_hits_per_item_and_ranking_hits_totals() -> None:
    from xlnel.analysis.coverage import item_hits, ranking_hits

    ranked = {"a": ["C1", "C2"], "b": ["C3", "C4"], "c": []}
    items = [("a", ("C1",)), ("b", ("C4",)), ("c", ("C5",)), ("a", ("C9",))]
    rank = lambda keys: [ranked[k] for k in keys]  # noqa: E731
    assert item_hits(rank, items, 2) == [(True, True), (False, True), (False, False),
                                         (False, False)]
    assert ranking_hits(rank, items, 2) == (1, 2)


# "hypertension" names C1 (a rendering the builder scores 0.01) and C3 (a KB name, no score);
# "hypertensiona" names C2 (score 1.0), at a cosine c < 1 of the text "hypertension".
WEIGHTED = [Entry("hypertension", "C1", "composed", 0.01), Entry("hypertension", "C3"),
            Entry("hypertensiona", "C2", "composed", 1.0), Entry("kkkk", "C4", "composed", 1.0)]


def test_weighted_ranking_multiplies_the_cosine_by_the_builder_score() -> None:
    lookup = DictionaryLookup(Dictionary(WEIGHTED), "en", rank="weighted", weight=1.0)
    c = lookup.search(["hypertension"])[0][1].score
    assert 0.8 < c < 1.0
    # cosine: C1 and C3 share the exact name (dictionary order), C2 is further
    assert lookup.ranked_concepts("hypertension", 10, rank="cosine") == ["C1", "C3", "C2"]
    # weighted: C3 1.0 * 1 (no score counts 1), C2 c * 1.0, C1 1.0 * 0.01
    assert lookup.ranked_concepts("hypertension", 10) == ["C3", "C2", "C1"]
    assert lookup.ranked_concepts("hypertension", 2) == ["C3", "C2"]
    # a weight of 0 ignores the score: the cosine ranking
    flat = DictionaryLookup(Dictionary(WEIGHTED), "en", rank="weighted", weight=0.0)
    assert flat.ranked_concepts("hypertension", 10) == ["C1", "C3", "C2"]
    # a small weight lifts C2 over C1 only when c > 0.01 ** w: 0.01 ** 0.5 = 0.1 < c
    half = DictionaryLookup(Dictionary(WEIGHTED), "en", rank="weighted", weight=0.5)
    assert half.ranked_concepts("hypertension", 10) == ["C3", "C2", "C1"]


def test_weighted_ranking_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="rank must be one of"):
        DictionaryLookup(Dictionary(WEIGHTED), "en", rank="bm25")
    with pytest.raises(ValueError, match="weight must be at least 0"):
        DictionaryLookup(Dictionary(WEIGHTED), "en", weight=-1.0)
    lookup = DictionaryLookup(Dictionary(WEIGHTED), "en")
    with pytest.raises(ValueError, match="rank must be one of"):
        lookup.ranked_concepts("kkkk", 1, rank="best")


def test_cli_weighted_ranking(tmp_path: Path) -> None:
    dict_path = tmp_path / "dict.tsv"
    Dictionary(WEIGHTED).save(dict_path)  # with a score column
    assert load_dictionary(dict_path).concepts_of("kkkk") == ["C4"]
    gold = _write_tsv(tmp_path / "gold.tsv", [("C2", "Hypertension", "hypertension")])
    runner = CliRunner()
    args = ["dictionary", "coverage", str(dict_path), str(gold), "--json", "--k", "2"]
    cosine = json.loads(runner.invoke(app, args).output)
    weighted = runner.invoke(app, [*args, "--rank", "weighted", "--weight", "1"])
    assert weighted.exit_code == 0, weighted.output
    report = json.loads(weighted.output)
    assert (report["rank"], report["weight"]) == ("weighted", 1.0)
    assert (cosine["total"]["linked_at_1"], cosine["total"]["linked_at_k"]) == (0, 0)
    assert (report["total"]["linked_at_1"], report["total"]["linked_at_k"]) == (0, 1)
    r = runner.invoke(app, [*args, "--rank", "bm25"])
    assert r.exit_code == 1 and "rank must be one of" in r.output


def test_details_rows_agree_with_the_counts(tmp_path: Path, dictionary: Dictionary) -> None:
    path = tmp_path / "details.tsv"
    s = coverage_of(dictionary, [("gold", _items())], "en", 0.8, k=2, details=path).total
    header, *rows = [line.split("\t") for line in
                     path.read_text(encoding="utf-8").splitlines()]
    assert header[:4] == ["gold", "text", "concept_ids", "exact"]
    assert len(rows) == s.items
    assert sum(r[5] == "1" for r in rows) == s.concept_exact
    assert sum(r[6] == "1" for r in rows) == s.linked_at_1
    assert sum(r[6] in ("1", "2") for r in rows) == s.linked_at_k
    by_text = {(r[1], r[2]): r for r in rows}
    assert by_text[("diabetes", "C4")][6:8] == ["2", "C1"]  # C1's exact name ranks first
    assert by_text[("kkkk", "C3")][3:9] == ["0", "0", "0", "", "", ""]  # nothing near
    gold = _write_tsv(tmp_path / "gold.tsv", ROWS)
    dict_path = tmp_path / "d.tsv"
    dictionary.save(dict_path)
    result = CliRunner().invoke(app, ["dictionary", "coverage", str(dict_path), str(gold),
                                      "--details", str(tmp_path / "cli.tsv")])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "cli.tsv").read_text(encoding="utf-8").splitlines()) == 7
    result = CliRunner().invoke(app, ["dictionary", "coverage", str(dict_path), str(gold),
                                      "--details", str(gold)])
    assert result.exit_code != 0 and "is the input" in result.output
    kb = _write_tsv(tmp_path / "kb.tsv", [])  # a KB named by a spec is an input too
    kb.write_text("concept_id\tname\nC1\tdiabetes\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["dictionary", "coverage", f"tsv:{kb}", str(gold),
                                      "--details", str(kb)])
    assert result.exit_code != 0 and "is the input" in result.output
    assert kb.read_text(encoding="utf-8") == "concept_id\tname\nC1\tdiabetes\n"


def test_details_give_texts_without_concept_ids_a_row(tmp_path: Path) -> None:
    # "diabetes" (C1 in the KB) and "foo", both without ids: texts 2, items 0, two rows.
    # With "diabetes" also given C1, its row is the item's; "foo" keeps its id-less row.
    kb = Dictionary([Entry("diabetes", "C1")])
    items = [GoldItem("diabetes", ()), GoldItem("foo", ())]
    path = tmp_path / "details.tsv"
    s = coverage_of(kb, [("g", items)], "en", 0.8, k=2, details=path).total
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    assert (s.texts, s.items) == (2, 0)
    assert rows == [["g", "diabetes", "", "1", "1", "", "", "", "diabetes", "1.0000"],
                    ["g", "foo", "", "0", "0", "", "", "", "", ""]]
    coverage_of(kb, [("g", [*items, GoldItem("diabetes", ("C1",))])], "en", 0.8, k=2,
                details=path)
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    assert [r[1:3] for r in rows] == [["diabetes", "C1"], ["foo", ""]]
    assert rows[0][5:8] == ["1", "1", "C1"]


def test_cli_gold_without_concept_ids_measures_text_coverage_only(tmp_path: Path) -> None:
    Dictionary([Entry("heart failure", "C1")]).save(tmp_path / "d.tsv")
    doc = {"id": "d1", "text": "heart failure here",
           "entities": [{"start": 0, "end": 13, "text": "heart failure"}]}
    (tmp_path / "gold.jsonl").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["dictionary", "coverage", str(tmp_path / "d.tsv"),
                                      str(tmp_path / "gold.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    total = json.loads(result.output)["total"]
    assert (total["texts"], total["exact"], total["items"]) == (1, 1, 0)
    assert total["accuracy@1"] is None and total["concept_exact_share"] is None


@pytest.mark.parametrize(("rows", "line", "fields"), [
    ("C1\theart failure\tinsuffisance\tcardiaque\n", 1, 4),
    ("hpo_id\tenglish\ttranslation\nC1 heart failure insuffisance\n", 2, 1),
    ("C1\theart failure\tinsuffisance cardiaque\nC2\tliver\n", 2, 2),
])
def test_cli_tsv_gold_with_another_column_count_names_file_and_line(
        tmp_path: Path, rows: str, line: int, fields: int) -> None:
    Dictionary([Entry("heart failure", "C1")]).save(tmp_path / "d.tsv")
    (tmp_path / "gold.tsv").write_text(rows, encoding="utf-8")
    result = CliRunner().invoke(app, ["dictionary", "coverage", str(tmp_path / "d.tsv"),
                                      str(tmp_path / "gold.tsv")])
    assert result.exit_code == 1
    assert f"gold.tsv:{line}: expected 'concept_id<TAB>english<TAB>translation'" in result.output
    assert f"got {fields} field(s)" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("rows", ["", "-\tC1\tkb\n"])
def test_a_dictionary_without_names_is_named(tmp_path: Path, rows: str) -> None:
    (tmp_path / "d.tsv").write_text("name\tconcept_id\tsource\n" + rows, encoding="utf-8")
    gold = _write_tsv(tmp_path / "gold.tsv", ROWS)
    with pytest.raises(ValueError, match=rf"dictionary {tmp_path / 'd.tsv'} has no name"):
        coverage(tmp_path / "d.tsv", [gold])
