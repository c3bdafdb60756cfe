from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.analysis.lookup import WORDS_WEIGHT, DictionaryLookup
from xlnel.analysis.word_overlap import WordOverlap, word_similarity
from xlnel.cli.main import app
from xlnel.dictionary.dictionary import Dictionary, Entry


def test_word_similarity_hand_worked() -> None:
    # "#ab#": bigrams #a ab b#, trigrams #ab ab#; "#ac#": #a ac c#, #ac ac#: one of five shared
    assert word_similarity("ab", "ac") == pytest.approx(2 * 1 / 10)
    assert word_similarity("ab", "ab") == 1.0
    assert word_similarity("ab", "xy") == 0.0


def test_word_overlap_weighs_words_by_their_idf_among_the_names() -> None:
    overlap = WordOverlap(["x of y", "z of y", "w"])
    assert overlap.idf("of") == pytest.approx(math.log(4 / 3) + 1)
    assert overlap.idf("unseen") == pytest.approx(math.log(4) + 1)
    # "x of q" against "x of y": x and of found exactly, q not at all (no shared n-gram)
    idf = overlap.idf
    side = (idf("x") + idf("of")) / (idf("x") + idf("of") + idf("q"))
    other = (idf("x") + idf("of")) / (idf("x") + idf("of") + idf("y"))
    assert overlap("x of q", "x of y") == pytest.approx(2 * side * other / (side + other))
    assert overlap("of y x", "x of y") == 1.0  # word order does not count
    assert overlap("x", "") == 0.0


# many names hold "de l", so those words weigh little; "kyste ouraq" shares a longer stretch
# of letters with the text, "ouraque kyste" holds both its content words in another order
NAMES = [f"{a} de l {b}" for a in ("anomalie", "fracture", "douleur", "tumeur", "fievre")
         for b in ("os", "oreille", "oeil", "enfant")]


def test_words_ranking_adds_the_weighted_overlap_to_the_cosine() -> None:
    entries = [Entry("kyste ouraq", "A"), Entry("ouraque kyste", "B"), Entry("kyste", "B")]
    entries += [Entry(name, f"N{i}") for i, name in enumerate(NAMES)]
    lookup = DictionaryLookup(Dictionary(entries), "fr", rank="words")
    text = "kyste de l ouraque"
    cosine = dict(lookup.scored_concepts(text, 30, rank="cosine"))
    assert cosine["A"] > cosine["B"]
    words = dict(lookup.scored_concepts(text, 30))
    assert lookup.ranked_concepts(text, 2) == ["B", "A"]
    found = {lookup.keys[m.name_index]: m.score for m in lookup.search([text])[0]}
    # a concept takes its best name's cosine plus overlap (B: "ouraque kyste", not "kyste")
    for cid, name in (("A", "kyste ouraq"), ("B", "ouraque kyste")):
        assert words[cid] == pytest.approx(
            found[name] + WORDS_WEIGHT * lookup.word_overlap(text, name))
    flat = DictionaryLookup(Dictionary(entries), "fr", rank="words", words_weight=0.0)
    assert flat.ranked_concepts(text, 2) == ["A", "B"]  # a weight of 0: the cosine ranking
    with pytest.raises(ValueError, match="words_weight must be at least 0"):
        DictionaryLookup(Dictionary(entries), "fr", words_weight=-0.1)


def test_cli_words_ranking(tmp_path: Path) -> None:
    entries = [Entry("kyste ouraq", "A"), Entry("ouraque kyste", "B")]
    entries += [Entry(name, f"N{i}") for i, name in enumerate(NAMES)]
    dict_path = tmp_path / "dict.tsv"
    Dictionary(entries).save(dict_path)
    gold = tmp_path / "gold.tsv"
    gold.write_text("concept_id\tenglish\ttranslation\nB\turachal cyst\tkyste de l ouraque\n",
                    encoding="utf-8")
    args = ["dictionary", "coverage", str(dict_path), str(gold), "--json", "--lang", "fr"]
    runner = CliRunner()
    cosine = json.loads(runner.invoke(app, args).output)
    r = runner.invoke(app, [*args, "--rank", "words"])
    assert r.exit_code == 0, r.output
    words = json.loads(r.output)
    assert (words["rank"], words["words_weight"]) == ("words", WORDS_WEIGHT)
    assert (cosine["total"]["linked_at_1"], words["total"]["linked_at_1"]) == (0, 1)
