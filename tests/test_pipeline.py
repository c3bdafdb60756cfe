from __future__ import annotations

import json
import re

import pytest

from xlnel.config import load_config
from xlnel.errors import ArtifactError, ConfigError
from xlnel.evaluation import evaluate
from xlnel.io import read_documents
from xlnel.ner.base import TAGGERS, SpanTagger
from xlnel.pipeline import Pipeline, candidate_recall, link, train
from xlnel.types import Document, Span


@pytest.mark.parametrize("filter_name", ["xlnel.gbdt.v1", "xlnel.similarity.v1"])
def test_train_save_load_link_evaluate(tmp_path, tiny_config, filter_name):
    cfg = load_config(tiny_config, {"filter.name": filter_name,
                                    "filter.options": {} if "sim" in filter_name else
                                    {"folds": 2, "max_iter": 30}})
    report = train(cfg, tmp_path / "pipe")
    assert report["test_documents"] == 6 and report["train_documents"] == 18
    assert report["dictionary"]["by_source"]["kb"] == 8
    pipe = Pipeline.load(tmp_path / "pipe")
    gold = read_documents(tmp_path / "pipe" / "test.jsonl")
    n = link(pipe, tmp_path / "pipe" / "test.jsonl", tmp_path / "pred.jsonl")
    assert n == len(gold)
    pred = read_documents(tmp_path / "pred.jsonl")
    assert all(e.score is not None and e.concept_id for d in pred for e in d.entities)
    assert evaluate(gold, pred, "span").f1 > 0.5


def test_link_keeps_offsets_into_original_text(tmp_path, tiny_config):
    train(load_config(tiny_config, {"filter.name": "xlnel.similarity.v1",
                                    "filter.options": {}, "filter.threshold": 0.9}),
          tmp_path / "pipe")
    pipe = Pipeline.load(tmp_path / "pipe")
    text = "Known (Diabetes) and  HYPERTENSION."
    doc = pipe.link(Document("x", text))
    assert {text[e.start:e.end] for e in doc.entities} == {"Diabetes", "HYPERTENSION"}
    assert {e.concept_id for e in doc.entities} == {"C1", "C2"}


def test_candidate_recall_reports_both_levels(tmp_path, tiny_config):
    train(load_config(tiny_config, {"filter.name": "xlnel.similarity.v1",
                                    "filter.options": {}}), tmp_path / "pipe")
    rep = candidate_recall(tmp_path / "pipe", tmp_path / "pipe" / "test.jsonl")
    assert rep["span"]["recall"] == pytest.approx(1.0)
    assert rep["concept"]["recall"] == pytest.approx(1.0)
    bare = tmp_path / "bare.jsonl"  # no mention: recall is undefined, not 0
    bare.write_text('{"id": "a", "text": "asthma"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="none of its 1 documents has a mention"):
        candidate_recall(tmp_path / "pipe", bare)


def test_retraining_replaces_the_folder_atomically(tmp_path, tiny_config):
    cfg = load_config(tiny_config, {"filter.name": "xlnel.similarity.v1", "filter.options": {}})
    train(cfg, tmp_path / "pipe")
    train(cfg, tmp_path / "pipe")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".pipe")) == []
    assert json.loads((tmp_path / "pipe" / "train_report.json").read_text())["test_documents"]


def test_missing_pipeline_and_empty_dictionary(tmp_path):
    with pytest.raises(ArtifactError, match="not a pipeline folder"):
        Pipeline.load(tmp_path)
    with pytest.raises(ConfigError, match="dictionary is empty"):
        train(load_config(None, {"dictionary.kb": []}), tmp_path / "p")


def test_gbdt_needs_positive_examples(tmp_path, tiny_kb):
    docs = tmp_path / "d.jsonl"
    docs.write_text(json.dumps({"id": "a", "text": "diabetes here", "entities": []}) + "\n",
                    encoding="utf-8")
    cfg = load_config(None, {"data.train": str(docs), "dictionary.kb": [f"tsv:{tiny_kb}"],
                             "dft.R": 0.0, "filter.name": "xlnel.gbdt.v1"})
    with pytest.raises(ValueError, match="positive"):
        train(cfg, tmp_path / "p")


class _CapitalisedTagger(SpanTagger):
    """Test tagger: every word starting with a capital letter is a mention."""

    registered_name = "test.capitalised.v1"
    fitted_on = 0

    def fit(self, documents, progress=False):
        type(self).fitted_on = len(documents)
        return self

    def predict_batch(self, documents, progress=False):
        return [[Span(m.start(), m.end(), m.group()) for m in re.finditer(r"\b[A-Z]\w+", d.text)]
                for d in documents]

    def save(self, directory):
        directory.mkdir(parents=True)
        (directory / "tagger.json").write_text("{}", encoding="utf-8")

    @classmethod
    def load(cls, directory, config, lang):
        assert (directory / "tagger.json").is_file()
        return cls(config, lang)


def test_tagger_spans_replace_the_span_enumeration(tmp_path, tiny_config):
    TAGGERS.register(_CapitalisedTagger)
    cfg = load_config(tiny_config, {"filter.name": "xlnel.similarity.v1", "filter.options": {},
                                    "filter.threshold": 0.9, "ner.name": "test.capitalised.v1"})
    report = train(cfg, tmp_path / "pipe")
    assert _CapitalisedTagger.fitted_on == report["train_documents"]
    pipe = Pipeline.load(tmp_path / "pipe")
    assert isinstance(pipe.tagger, _CapitalisedTagger)
    doc = pipe.link(Document("x", "Insulin for diabetes, Asthma and Hypertension."))
    # "diabetes" is lower-case, so the tagger never proposes it.
    assert [e.text for e in doc.entities] == ["Insulin", "Asthma", "Hypertension"]


def test_pretrained_tagger_is_reused_not_retrained(tmp_path, tiny_config):
    TAGGERS.register(_CapitalisedTagger)
    over = {"filter.name": "xlnel.similarity.v1", "filter.options": {},
            "filter.threshold": 0.9, "ner.name": "test.capitalised.v1"}
    train(load_config(tiny_config, over), tmp_path / "first")
    _CapitalisedTagger.fitted_on = -1
    cfg = load_config(tiny_config, {**over, "ner.pretrained": str(tmp_path / "first"),
                                    "candidates.top_m": 5})
    train(cfg, tmp_path / "second")
    assert _CapitalisedTagger.fitted_on == -1  # loaded, not fitted
    assert (tmp_path / "second" / "ner" / "tagger.json").is_file()
    assert isinstance(Pipeline.load(tmp_path / "second").tagger, _CapitalisedTagger)
    # the ner/ folder itself works too; a tagger trained on other data is refused
    cfg = load_config(tiny_config, {**over, "ner.pretrained": str(tmp_path / "first" / "ner"),
                                    "data.test_fraction": 0.5})
    with pytest.raises(ConfigError, match="trained with data"):
        train(cfg, tmp_path / "third")


def test_unknown_tagger_is_a_config_error(tmp_path, tiny_config):
    cfg = load_config(tiny_config, {"ner.name": "no.such.tagger"})
    with pytest.raises(ConfigError, match="unknown tagger 'no.such.tagger'"):
        train(cfg, tmp_path / "pipe")


def test_lexicon_is_saved_with_the_pipeline_and_required_when_on(tmp_path, tiny_config):
    over = {"filter.name": "xlnel.similarity.v1", "filter.options": {}}
    train(load_config(tiny_config, {**over, "linker.lexicon": True,
                                    "linker.lexicon_rate": 0.5}), tmp_path / "pipe")
    assert (tmp_path / "pipe" / "lexicon.json").is_file()
    pipe = Pipeline.load(tmp_path / "pipe")
    assert pipe.lexicon is not None and pipe.lexicon.concepts
    gold = read_documents(tmp_path / "pipe" / "test.jsonl")
    assert evaluate(gold, pipe.link_batch(gold), "concept").f1 > 0.5
    train(load_config(tiny_config, over), tmp_path / "plain")
    assert not (tmp_path / "plain" / "lexicon.json").exists()
    with pytest.raises(ArtifactError, match="trained without linker.lexicon"):
        Pipeline.load(tmp_path / "plain", {"linker.lexicon": True})


def test_links_carry_the_training_annotations_entity_type(tmp_path, tiny_config):
    over = {"filter.name": "xlnel.similarity.v1", "filter.options": {}}
    report = train(load_config(tiny_config, over), tmp_path / "pipe")
    assert list(report["entity_types"]) == ["Disorder"] and report["entity_types"]["Disorder"] > 0
    assert (tmp_path / "pipe" / "entity_types.json").is_file()
    links = Pipeline.load(tmp_path / "pipe").link("She has diabetes and asthma.")
    assert links and {link.type for link in links} == {"Disorder"}
    off = Pipeline.load(tmp_path / "pipe", {"linker.entity_types": False})
    assert {link.type for link in off.link("She has diabetes and asthma.")} == {None}
    # a pipeline saved without a typer (untyped training documents) links without types
    (tmp_path / "pipe" / "entity_types.json").unlink()
    assert Pipeline.load(tmp_path / "pipe").typer is None


def test_link_time_alternatives(tmp_path):
    import xlnel
    from xlnel.io import read_jsonl
    from xlnel.pipeline import SavedPipeline

    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nC1\tdiabetes\nC2\tdiabetes insipidus\nC3\tdiabetic foot\n"
                  "C4\tasthma\n", encoding="utf-8")
    cfg = load_config(None, {"lang": "en", "dictionary.kb": [f"tsv:{kb}"], "dft.R": 0.0,
                             "filter.name": "xlnel.similarity.v1", "filter.threshold": 0.9})
    train(cfg, tmp_path / "pipe")
    (plain,) = xlnel.load(tmp_path / "pipe").link("She has diabetes.")
    (found,) = xlnel.load(tmp_path / "pipe", {"linker.alternatives": 5}).link("She has diabetes.")
    assert plain.alternatives == () and found.concept_id == plain.concept_id == "C1"
    assert [c for c, _, _ in found.alternatives] == ["C2", "C3"]  # closer name first
    assert all(0 < sim < 1 for _, _, sim in found.alternatives)
    # the JSONL output carries them and reads back
    docs = tmp_path / "in.jsonl"
    docs.write_text('{"id": "a", "text": "She has diabetes."}\n', encoding="utf-8")
    link(SavedPipeline.of(tmp_path / "pipe", {"linker.alternatives": 1}), docs,
         tmp_path / "out.jsonl")
    (doc,) = read_jsonl(tmp_path / "out.jsonl")
    assert doc.entities[0].alternatives == found.alternatives[:1]
