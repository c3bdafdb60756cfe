from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SENTENCES, make_documents
from xlnel.config import NerConfig, load_config
from xlnel.errors import ArtifactError, ConfigError
from xlnel.ner.base import tagger_class
from xlnel.types import Document, Link

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("torchcrf")

from xlnel.ner.crf import CrfTagger  # noqa: E402

HEBREW = [("אני חולה סוכרת ולוקח אינסולין.", ["חולה סוכרת", "אינסולין"]),
          ("הרופא נתן לי מטפורמין בבוקר", ["מטפורמין"]),
          ("טיפול בסוכרת עם אינסולין", ["סוכרת", "אינסולין"])]
# Fast enough to overfit a handful of sentences with the tiny model.
FAST = {"lr": 5e-3, "head_lr": 5e-2, "epochs": 15, "batch_size": 4, "dev_fraction": 0.0,
        "warmup_ratio": 0.0, "dropout": 0.0, "crf_weight": 0.1, "device": "cpu",
        "freeze_embeddings": False}


def english_documents() -> list[Document]:
    docs = []
    for i, d in enumerate(make_documents(1)):
        ents = tuple(Link(e["start"], e["end"], e["text"], type=e["type"]) for e in d["entities"])
        docs.append(Document(f"en{i}", d["text"], ents))
    return docs


def hebrew_documents() -> list[Document]:
    docs = []
    for i, (text, mentions) in enumerate(HEBREW):
        ents, pos = [], 0
        for m in mentions:
            start = text.index(m, pos)
            ents.append(Link(start, start + len(m), m, type="Disorder"))
            pos = start + len(m)
        docs.append(Document(f"he{i}", text, tuple(ents)))
    return docs


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT encoder knowing the words of the test sentences."""
    from xlnel.models.testing import tiny_bert

    words = [w for text, _ in SENTENCES for w in text.split()]
    words += [w for text, _ in HEBREW for w in text.split()]
    return tiny_bert(tmp_path_factory.mktemp("tiny_encoder"), words)


def _tagger(model: Path, **options: Any) -> CrfTagger:
    return CrfTagger(NerConfig(name=CrfTagger.registered_name,
                               options={"model": str(model), **FAST, **options}), "en")


def _triples(spans_per_doc: list[list[Any]]) -> list[list[tuple[int, int, str]]]:
    return [[(s.start, s.end, s.text) for s in spans] for spans in spans_per_doc]


@pytest.fixture(scope="session")
def trained(tiny_encoder: Path) -> CrfTagger:
    return _tagger(tiny_encoder).fit(english_documents() + hebrew_documents())


def test_registered_by_name():
    assert tagger_class("xlnel.crf_tagger.v1") is CrfTagger


def test_overfits_and_recovers_gold_spans(trained):
    docs = english_documents() + hebrew_documents()
    got = _triples(trained.predict_batch(docs))
    assert got == [[(e.start, e.end, e.text) for e in d.entities] for d in docs]
    assert trained.labels == ["O", "B-Disorder", "I-Disorder"]
    assert trained.report["epochs"][-1]["loss"] < trained.report["epochs"][0]["loss"]


def test_prefix_head_strips_hebrew_prefix(trained):
    (span, _) = trained.predict(hebrew_documents()[2])
    assert (span.text, span.stripped_prefix) == ("סוכרת", "ב")


def test_save_load_gives_identical_predictions(trained, tmp_path):
    trained.save(tmp_path / "ner")
    meta = json.loads((tmp_path / "ner" / "tagger.json").read_text(encoding="utf-8"))
    assert meta["labels"] == trained.labels and "xlnel_version" in meta
    loaded = CrfTagger.load(tmp_path / "ner", NerConfig(name=CrfTagger.registered_name,
                                                        options={"inference_batch_size": 2}),
                            "en")
    docs = english_documents() + hebrew_documents()
    assert loaded.predict_batch(docs) == trained.predict_batch(docs)
    assert loaded.options.inference_batch_size == 2 and loaded.options.lr == FAST["lr"]


def test_load_compares_options_as_validated(trained, tmp_path, caplog):
    """YAML reads ``lr: 5e-3`` as the string '5e-3': the same learning rate as trained, so
    no 'ignored' warning; a different one is still named."""
    trained.save(tmp_path / "ner")
    for options, warned in [({"lr": "5e-3", "epochs": 15}, False), ({"lr": "1e-3"}, True)]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="xlnel.ner.crf"):
            loaded = CrfTagger.load(tmp_path / "ner", NerConfig(
                name=CrfTagger.registered_name, options=options), "en")
        assert any("ignored" in r.message for r in caplog.records) is warned
        assert loaded.options.lr == FAST["lr"]


def test_load_errors(tmp_path, trained):
    cfg = NerConfig(name=CrfTagger.registered_name)
    with pytest.raises(ArtifactError, match="lacks"):
        CrfTagger.load(tmp_path, cfg, "en")
    trained.save(tmp_path / "ner")
    meta = json.loads((tmp_path / "ner" / "tagger.json").read_text(encoding="utf-8"))
    meta["tagger"] = "other.v1"
    (tmp_path / "ner" / "tagger.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ArtifactError, match="other.v1"):
        CrfTagger.load(tmp_path / "ner", cfg, "en")
    # labels that do not fit the saved layers (torch's size-mismatch RuntimeError)
    meta["tagger"] = CrfTagger.registered_name
    meta["labels"] = ["O", "B-X", "I-X", "B-Y", "I-Y"]
    (tmp_path / "ner" / "tagger.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ArtifactError, match="does not fit the 5 labels"):
        CrfTagger.load(tmp_path / "ner", cfg, "en")


def test_empty_documents_and_long_sentences(trained, tiny_encoder):
    assert trained.predict_batch([]) == []
    assert trained.predict_batch([Document("e", ""), Document("s", "  \n ")]) == [[], []]
    # a sentence longer than max_length sub-tokens is cut into chunks: every word is tagged
    text = " ".join(["diabetes"] * 60)
    tagger = _tagger(tiny_encoder, max_length=16, epochs=1)
    tagger._build(str(tiny_encoder), ["O", "B-X", "I-X"], for_training=False)
    from xlnel.candidates.spans import tokenize
    from xlnel.ner._network import make_chunks

    chunks = make_chunks(tagger._tokenizer, 0, text, tokenize(text), 16)
    assert len(chunks) > 1 and all(len(c.input_ids) <= 16 for c in chunks)
    assert [w for c in chunks for w in c.words] == list(range(60))
    spans = tagger.predict(Document("long", text))
    assert all(text[s.start:s.end] == s.text for s in spans)


def test_max_length_beyond_the_encoder_is_refused_before_training(tiny_encoder):
    """Chunks of up to max_length sub-tokens would reach past the tiny BERT's 128 positions
    and fail inside the model on the first long sentence."""
    with pytest.raises(ConfigError, match=r"ner\.options\.max_length=256 .* at most 128"):
        _tagger(tiny_encoder, max_length=256).fit(english_documents())


def test_a_dev_split_without_entities_is_not_used(tiny_encoder, caplog):
    """On a dev split without gold entities every epoch would score span F1 0 and early
    stopping would keep the first epoch: the tagger trains every epoch on all documents
    instead, and says so."""
    import dataclasses

    from xlnel.dictionary.dft import split_documents

    docs = english_documents()
    dev_ids = {d.id for d in split_documents(docs, 0.25, 0)[0]}
    docs = [dataclasses.replace(d, entities=()) if d.id in dev_ids else d for d in docs]
    with caplog.at_level(logging.WARNING, logger="xlnel.ner.crf"):
        tagger = _tagger(tiny_encoder, dev_fraction=0.25, epochs=3, patience=1).fit(docs)
    assert any("hold no gold entity" in r.message for r in caplog.records)
    assert tagger.report["dev_documents"] == 0 and tagger.report["train_documents"] == 8
    assert len(tagger.report["epochs"]) == 3


def test_needs_entities(tiny_encoder):
    with pytest.raises(ValueError, match="gold entities"):
        _tagger(tiny_encoder).fit([Document("a", "no mentions here")])
    # entities on punctuation align to no word: the tagger would train on O tags alone
    punctuation = [Document("p", "... ;", (Link(0, 3, "...", type="X"),)),
                   Document("q", "a , b", (Link(2, 3, ",", type="X"),))]
    with pytest.raises(ValueError, match="no gold entity of the 2 training documents covers"):
        _tagger(tiny_encoder, epochs=1).fit(punctuation)


def test_predict_before_fit(tiny_encoder):
    with pytest.raises(RuntimeError, match="fit"):
        _tagger(tiny_encoder).predict(Document("a", "text"))


@pytest.mark.parametrize("options, key", [
    ({"lr": 0}, "lr"), ({"device": "tpu"}, "device"), ({"epochs": "many"}, "epochs"),
    ({"learning_rate": 1e-3}, "learning_rate"), ({"max_length": 4}, "max_length"),
])
def test_bad_options(options, key):
    with pytest.raises(ConfigError, match=rf"ner\.options\.{key}"):
        CrfTagger(NerConfig(name=CrfTagger.registered_name, options=options), "en")


def test_dev_split_early_stopping_and_overlap_warning(tiny_encoder, caplog):
    docs = english_documents()
    text = "type two diabetes"
    docs.append(Document("ov", text, (Link(0, 17, text, type="Disorder"),
                                      Link(9, 17, "diabetes", type="Disorder"))))
    with caplog.at_level(logging.WARNING, logger="xlnel.ner.crf"):
        tagger = _tagger(tiny_encoder, dev_fraction=0.3, epochs=3, patience=1).fit(docs)
    assert sum("overlapping" in r.message for r in caplog.records) == 1
    assert tagger.report["dropped_overlapping"] == 1 and tagger.report["dev_documents"] == 3
    assert 1 <= len(tagger.report["epochs"]) <= 3
    assert "dev_span_f1" in tagger.report["epochs"][0]


def test_pipeline_with_tagger(tmp_path, tiny_config, tiny_encoder):
    from xlnel.evaluation import evaluate
    from xlnel.io import read_documents
    from xlnel.pipeline import Pipeline, link, train

    # the similarity filter: the gbdt one needs negatives, which a tagger that fits its
    # training documents perfectly does not leave
    cfg = load_config(tiny_config, {"ner.name": "xlnel.crf_tagger.v1",
                                    "ner.options": {"model": str(tiny_encoder), **FAST},
                                    "filter.name": "xlnel.similarity.v1",
                                    "filter.options": {}})
    train(cfg, tmp_path / "pipe")
    assert (tmp_path / "pipe" / "ner" / "head.safetensors").is_file()
    pipe = Pipeline.load(tmp_path / "pipe")
    assert isinstance(pipe.tagger, CrfTagger)
    # the tagger's device and batch change when linking (a GPU-trained tagger on a CPU)
    moved = Pipeline.load(tmp_path / "pipe", {"ner.options.device": "cpu",
                                              "ner.options.inference_batch_size": 2})
    assert moved.tagger.options.inference_batch_size == 2
    with pytest.raises(ConfigError, match="can change when linking: ner.options.device, "
                                          "ner.options.inference_batch_size"):
        Pipeline.load(tmp_path / "pipe", {"ner.options.lr": 1.0})
    link(pipe, tmp_path / "pipe" / "test.jsonl", tmp_path / "pred.jsonl")
    gold = read_documents(tmp_path / "pipe" / "test.jsonl")
    pred = read_documents(tmp_path / "pred.jsonl")
    assert evaluate(gold, pred, "span").f1 > 0.5


@pytest.mark.slow
def test_real_encoder_on_camoni(tmp_path):
    from xlnel.evaluation import evaluate
    from xlnel.io import read_documents

    path = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "camoni" / \
        "diabetes.jsonl"
    if not path.is_file():
        pytest.skip("Camoni data not available")
    docs = [d for d in read_documents(path) if len(d.text) < 400][:24]
    train_docs, test_docs = docs[:20], docs[20:]
    tagger = CrfTagger(NerConfig(name=CrfTagger.registered_name,
                                 options={"epochs": 8, "batch_size": 4, "lr": 1e-4,
                                          "head_lr": 2e-3, "max_length": 64, "device": "cpu",
                                          "dev_fraction": 0.0}), "he").fit(train_docs)
    spans = tagger.predict_batch(test_docs)
    for doc, doc_spans in zip(test_docs, spans, strict=True):
        assert all(doc.text[s.start:s.end] == s.text for s in doc_spans)
    tagger.save(tmp_path / "ner")
    loaded = CrfTagger.load(tmp_path / "ner", NerConfig(name=CrfTagger.registered_name), "he")
    assert loaded.predict_batch(test_docs) == spans
    pred = [Document(d.id, d.text, tuple(Link(s.start, s.end, s.text) for s in ss))
            for d, ss in zip(train_docs, tagger.predict_batch(train_docs), strict=True)]
    # a few epochs on 20 posts learn something of the training mentions
    assert evaluate(train_docs, pred, "span").recall > 0.1


def test_bucketed_batches_cover_every_chunk_once():
    import random

    from xlnel.ner._network import Chunk
    from xlnel.ner.crf import _bucketed_batches

    chunks = [Chunk(0, [i], [0] * (1 + i % 17), [1]) for i in range(1000)]
    batches = _bucketed_batches(chunks, 8, random.Random(0))
    assert len(batches) == 125 and all(len(b) == 8 for b in batches)
    assert sorted(c.words[0] for b in batches for c in b) == list(range(1000))
    # neighbours by length: a batch spans few lengths
    assert max(len({len(c.input_ids) for c in b}) for b in batches) <= 3


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[2] / "configs")
                                        .glob("*tagger*.yaml")), ids=lambda p: p.name)
def test_shipped_tagger_configs_validate(path):
    cfg = load_config(path)
    tagger = tagger_class(cfg.ner.name)(cfg.ner, cfg.lang)  # options are validated on creation
    assert isinstance(tagger, CrfTagger)


def test_save_over_an_earlier_tagger_keeps_only_the_new_files(trained, tiny_encoder, tmp_path):
    """A folder saved again holds the new tagger's files only: the layers, labels and options
    read back are the new ones, and a file an earlier save left (a pickled weights file of
    an older model) is gone."""
    folder = tmp_path / "ner"
    trained.save(folder)
    fresh = tmp_path / "fresh"
    other = _tagger(tiny_encoder, max_prefix=1)
    other._build(str(tiny_encoder), ["O", "B-X", "I-X", "B-Y", "I-Y"], for_training=False)
    other.save(fresh)
    (folder / "model" / "pytorch_model.bin").write_bytes(b"stale")
    other.save(folder)

    def listing(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*"))

    assert listing(folder) == listing(fresh)
    loaded = CrfTagger.load(folder, NerConfig(name=CrfTagger.registered_name), "en")
    assert loaded.labels == ["O", "B-X", "I-X", "B-Y", "I-Y"]
    assert loaded.options.max_prefix == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh", "ner"]  # no temporaries


def test_a_word_without_sub_tokens_gets_a_stand_in_id():
    """A word the tokenizer reduces to nothing takes the unknown token, the padding token
    without one, and is refused by name when the tokenizer has neither."""
    from xlnel.ner._network import word_pieces

    class Tokenizer:
        name_or_path = "tiny-no-unk"

        def __init__(self, unk: int | None, pad: int | None) -> None:
            self.unk_token_id, self.pad_token_id = unk, pad

        def __call__(self, words: list[str], add_special_tokens: bool) -> dict[str, Any]:
            return {"input_ids": [[] if w == "\u05b4" else [7, 8, 9][:len(w)] for w in words]}

    text = "ab \u05b4 c"
    words = [(0, 2), (3, 4), (5, 6)]
    assert word_pieces(Tokenizer(1, 0), text, words, 1) == [[7], [1], [7]]
    assert word_pieces(Tokenizer(None, 0), text, words, 4) == [[7, 8], [0], [7]]
    with pytest.raises(ValueError, match=r"tiny-no-unk turns the word '\u05b4' \(characters "
                                         r"3-4\) into no token"):
        word_pieces(Tokenizer(None, None), text, words, 4)
