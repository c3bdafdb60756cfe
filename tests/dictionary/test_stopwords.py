"""Stop words of a language without a list, from the word pairs' renderings of English ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xlnel.candidates.spans import generate_spans
from xlnel.dictionary.adapt import adapt
from xlnel.dictionary.langdata import LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.stopwords import (
    MIN_NAME_STARTS,
    connector_words,
    name_starts,
    translated_stopwords,
)
from xlnel.stopwords import read_stopword_file

# "qq": the -> lo, la; of -> di, del, dal, dul; a -> un; pain -> dolo; dead -> la (a content
# word sharing a rendering with "the")
PAIRS = [("the", "lo"), ("the", "La"), ("of", "di"), ("of", "del"), ("of", "dal"),
         ("of", "dul"), ("a", "un"), ("a", "un uno"), ("pain", "dolo"), ("dead", "la"),
         ("ofs", "ofso")]


def test_renderings_of_english_stop_words_that_no_content_word_shares() -> None:
    lexicon = Lexicon(PAIRS)
    found = translated_stopwords(lexicon, "qq", ["pain", "dead", "the"],
                                 english={"the", "of", "a", "with"})
    # "la" also renders "dead"; "dul" is the fourth rendering of "of"; "un uno" is no word;
    # "with" is not in the pairs, and no guessed base form of it is looked up
    assert found == ["dal", "del", "di", "lo", "un"]
    assert translated_stopwords(lexicon, "qq", [], english={"the"}) == ["la", "lo"]
    assert translated_stopwords(lexicon, "qq", [], english={"of"}, senses=1) == ["di"]


def test_connector_words_are_stop_words_unless_a_content_word_renders_them() -> None:
    profile = LanguageProfile("qq", connectors={
        "of": ("{left} di {right}", "{left|gen} {right}"),
        "secondary to": ("{left} sekunda al {right}",)})
    assert connector_words(profile) == {"di", "sekunda", "al"}
    assert connector_words(LanguageProfile("qq")) == set()
    lexicon = Lexicon([("secondary", "sekunda"), ("the", "lo")])
    found = translated_stopwords(lexicon, "qq", ["secondary"], english={"the"},
                                 connectors=connector_words(profile))
    assert found == ["al", "di", "lo"]


def _adapt_tiny(tmp_path: Path) -> dict[str, Any]:
    """``adapt`` on the "qq" pairs (and *cyst* -> *kisto*) and a two-concept KB, into OUT."""
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{en}\t{t}\n" for en, t in PAIRS + [("cyst", "kisto")]),
                     encoding="utf-8")
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nC1\tPain of the cyst\nC2\tDead cyst\n", encoding="utf-8")
    return adapt("qq", pairs, [f"tsv:{kb}"], tmp_path / "out", transliteration_seconds=0)


def test_adapt_writes_the_stop_words_a_pipeline_reads(tmp_path: Path) -> None:
    report = _adapt_tiny(tmp_path)
    path = tmp_path / "out" / "stopwords.txt"
    words = read_stopword_file(path, "qq")
    assert {"lo", "di", "un"} <= words and "la" not in words and "dolo" not in words
    assert path.read_text(encoding="utf-8").startswith("# qq stop words")
    saved = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert saved["stopwords"] == report["stopwords"] == {"out": str(path), "words": len(words)}
    spans = {s.text for s in generate_spans("un kisto di dolo", "qq", stopwords=words)}
    assert "kisto di dolo" in spans and not spans & {"un kisto", "kisto di", "di dolo"}


def test_adapt_writes_a_pipeline_config_that_links_without_annotations(tmp_path: Path) -> None:
    from xlnel.config import load_config
    from xlnel.pipeline import Pipeline, train

    report = _adapt_tiny(tmp_path)
    path = tmp_path / "out" / "pipeline.yaml"
    assert report["pipeline"] == str(path)
    assert path.read_text(encoding="utf-8").startswith("# Links qq text")
    config = load_config(path)
    assert config.lang == "qq" and config.dictionary.kb == []
    # linking.tsv: dictionary.tsv less the one-word names that read as everyday words
    assert config.dictionary.extra == [str((tmp_path / "out" / "linking.tsv").resolve())]
    assert config.candidates.stopwords == str((tmp_path / "out" / "stopwords.txt").resolve())
    assert config.filter.name == "xlnel.similarity.v1" and config.filter.threshold == 1.0
    assert config.dft.R == 0.0 and config.data.train is None
    train(config, tmp_path / "pipe")
    links = Pipeline.load(tmp_path / "pipe").link("un kisto e un dolo di kisto")
    # the derived stop words keep the article out; the exact rendering is linked, whole
    assert {(link.text, link.concept_id) for link in links} == {("dolo di kisto", "C1")}


def test_a_word_many_english_names_start_with_is_no_stop_word() -> None:
    lexicon = Lexicon([("not", "non"), ("the", "lo")])
    names = [f"Non-progressive thing {i}" for i in range(MIN_NAME_STARTS)] + ["The end"]
    starts = name_starts(names)
    assert starts["non"] == MIN_NAME_STARTS and starts["the"] == 1
    english = {"not", "the"}
    assert translated_stopwords(lexicon, "qq", [], english=english) == ["lo", "non"]
    assert translated_stopwords(lexicon, "qq", [], english=english, starts=starts) == ["lo"]
    fewer = name_starts(names[1:])
    assert translated_stopwords(lexicon, "qq", [], english=english, starts=fewer) == ["lo", "non"]
