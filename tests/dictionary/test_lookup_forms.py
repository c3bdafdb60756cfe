"""The lookup's looser form (:class:`LookupForm`): folded Latin accents, dropped stop words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.analysis.coverage import GoldItem, coverage, coverage_of
from xlnel.analysis.lookup import DictionaryLookup, LookupForm, read_form
from xlnel.analysis.terms import lookup_terms
from xlnel.cli.main import app
from xlnel.dictionary.dictionary import Dictionary, Entry
from xlnel.normalization import fold_latin_marks

# C1's rendering has a wrong accent and a function word; C2 is a near neighbour without them.
ENTRIES = [Entry("douleur de l'épaule", "C1", "composed", 0.9),
           Entry("douleur d epaules", "C2", "composed", 0.9)]


@pytest.mark.parametrize(("text", "expected"), [
    ("épaule", "epaule"), ("über ñandú", "uber nandu"), ("œil ß", "œil ß"),
    ("ガラス が", "ガラス が"),  # Japanese voicing marks are not accents
    ("शिक्षा", "शिक्षा"), ("שָׁלוֹם", "שָׁלוֹם"),  # nor are Devanagari signs or niqqud
    ("abc", "abc")])
def test_fold_latin_marks(text: str, expected: str) -> None:
    assert fold_latin_marks(text) == expected


def test_form_drops_stop_words_and_folds() -> None:
    form = LookupForm(frozenset({"de", "l"}), fold_accents=True)
    assert form("douleur de l épaule") == "douleur epaule"
    assert form("de l") == "de l"  # nothing but stop words: kept whole
    assert LookupForm().plain and not form.plain
    assert form.to_dict() == {"stopwords": 2, "fold_accents": True}
    assert LookupForm()("de l épaule") == "de l épaule"
    # folded, a stop word also drops its unaccented spelling; unfolded, it does not
    assert LookupForm(frozenset({"à"}), fold_accents=True)("mal a la tete") == "mal la tete"
    assert LookupForm(frozenset({"à"}))("mal a la tête") == "mal a la tête"


def test_lookup_compares_forms_on_both_sides() -> None:
    text = "douleur de l epaule"
    plain = DictionaryLookup(Dictionary(ENTRIES), "fr")
    form = LookupForm(frozenset({"de", "l", "d"}), fold_accents=True)
    loose = DictionaryLookup(Dictionary(ENTRIES), "fr", form=form)
    assert loose.ranked_concepts(text, 1) == ["C1"]
    assert loose.scored_concepts(text, 1)[0][1] == pytest.approx(1.0, abs=1e-4)
    assert plain.scored_concepts(text, 1)[0][1] < 0.99
    assert "douleur epaule" in loose.index and ("douleur epaule", "C1") in loose.pairs
    assert [m.score for m in loose.names_over(text, 0.99)] == [pytest.approx(1.0, abs=1e-4)]


def test_coverage_counts_exact_names_in_the_form() -> None:
    gold = [("g", [GoldItem("Douleur de l'epaule", ("C1",))])]
    form = LookupForm(frozenset({"de", "l", "d"}), fold_accents=True)
    plain = coverage_of(Dictionary(ENTRIES), gold, "fr")
    loose = coverage_of(Dictionary(ENTRIES), gold, "fr", form=form)
    assert plain.total.exact == 0 and plain.total.concept_exact == 0
    assert loose.total.exact == 1 and loose.total.concept_exact == 1
    assert loose.total.linked_at_1 == 1
    assert "form" not in plain.settings
    assert loose.settings["form"] == {"stopwords": 3, "fold_accents": True}


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    dictionary = tmp_path / "dict.tsv"
    Dictionary(ENTRIES).save(dictionary)
    stopwords = tmp_path / "stopwords.txt"
    stopwords.write_text("# fr\nde\nL\nd\n", encoding="utf-8")
    gold = tmp_path / "gold.tsv"
    gold.write_text("concept_id\tenglish\ttranslation\nC1\tshoulder pain\tdouleur de l'epaule\n",
                    encoding="utf-8")
    return dictionary, stopwords, gold


def test_files_and_cli(tmp_path: Path) -> None:
    dictionary, stopwords, gold = _files(tmp_path)
    assert read_form("fr", stopwords).stopwords == {"de", "l", "d"}  # normalised as fr
    report = coverage(dictionary, [gold], "fr", stopwords=stopwords, fold_accents=True)
    assert report.total.exact == 1 and report.settings["stopwords"] == str(stopwords)
    found = lookup_terms(dictionary, ["Douleur de l'epaule"], "fr", k=1, stopwords=stopwords,
                         fold_accents=True)
    assert found[0].key == "douleur de l epaule"  # the key shown is the normalised text
    assert found[0].concepts[0].concept_id == "C1"
    runner = CliRunner()
    r = runner.invoke(app, ["dictionary", "coverage", str(dictionary), str(gold), "--lang", "fr",
                            "--stopwords", str(stopwords), "--fold-accents", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["total"]["exact"] == 1
    r = runner.invoke(app, ["dictionary", "lookup", str(dictionary), "douleur de l'epaule",
                            "--lang", "fr", "--stopwords", str(stopwords), "--fold-accents",
                            "--k", "1"])
    assert r.exit_code == 0, r.output
    assert r.output.split("\t")[2:4] == ["C1", "1.0000"]
    r = runner.invoke(app, ["dictionary", "lookup", str(dictionary), "x", "--stopwords",
                            str(tmp_path / "missing.txt")])
    assert r.exit_code == 1 and "missing.txt does not exist" in r.output
