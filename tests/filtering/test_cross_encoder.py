from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlnel.config import FilterConfig
from xlnel.errors import ArtifactError, ConfigError
from xlnel.filtering._pairs import (
    candidate_windows,
    document_windows,
    name_ranks,
    span_ranks,
    top_k_mask,
)
from xlnel.filtering.labels import label_candidates
from xlnel.types import Candidate, Document, Link, Span

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from xlnel.filtering._cross_encoder_data import recall_cut  # noqa: E402
from xlnel.filtering.cross_encoder import CrossEncoderFilter  # noqa: E402
from xlnel.filtering.cross_encoder_options import parse_options  # noqa: E402
from xlnel.models import torch_utils as _torch_utils  # noqa: E402

FAST = {"lr": 1e-3, "epochs": 2, "batch_size": 8, "device": "cpu", "dev_fraction": 0.25,
        "neg_ratio": None, "inference_batch_size": 16}


def _span(text: str, word: str, prefix: str = "") -> Span:
    start = text.index(word)
    return Span(start, start + len(word), word, prefix)


def _filter(model: Path, threshold: float | None = None, **options: object) -> CrossEncoderFilter:
    config = FilterConfig(name="xlnel.cross_encoder.v1", threshold=threshold,
                          options={**FAST, "model": str(model), **options})
    return CrossEncoderFilter(config, "en")


def _count_predicted_pairs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make every model call append its number of pairs to the returned list."""
    seen: list[int] = []
    real_predict = _torch_utils.predict

    def counting_predict(model, features, *args, **kwargs):
        seen.append(len(features))
        return real_predict(model, features, *args, **kwargs)

    monkeypatch.setattr(_torch_utils, "predict", counting_predict)
    return seen


@pytest.fixture(scope="module")
def trained(tiny_model_dir, corpus, tmp_path_factory):
    docs, cands = corpus
    filt = _filter(tiny_model_dir).fit(docs, cands)
    folder = tmp_path_factory.mktemp("cross_encoder")
    filt.save(folder)
    return filt, folder


# ------------------------------------------------------------------ pairs, no model


def test_registered_name_resolves():
    from xlnel.filtering.base import filter_class

    assert filter_class("xlnel.cross_encoder.v1") is CrossEncoderFilter


def test_window_english_exact():
    doc = Document("e", "Yesterday, my son's type 1 diabetes got worse (again).")
    span = _span(doc.text, "diabetes")
    assert document_windows(doc, [span], 0) == ["diabetes"]
    assert document_windows(doc, [span], 2) == ["type 1 diabetes got worse"]
    # the text between words is kept verbatim; the window stops at the text's edges
    assert document_windows(doc, [span], 4) == ["my son's type 1 diabetes got worse (again"]
    first = _span(doc.text, "Yesterday")
    assert document_windows(doc, [first], 2) == ["Yesterday, my son's"]


def test_window_hebrew_exact_with_stripped_prefix():
    doc = Document("h", "שלום,\nאני חולה סוכרת ורציתי לדעת על משאבת אינסולין")
    span = _span(doc.text, "סוכרת")
    assert document_windows(doc, [span], 1) == ["חולה סוכרת ורציתי"]
    assert document_windows(doc, [span], 3) == ["שלום,\nאני חולה סוכרת ורציתי לדעת על"]
    # a span starting after a stripped prefix ('ו') takes its whole word into the window
    stripped = _span(doc.text, "רציתי", prefix="ו")
    assert document_windows(doc, [stripped], 0) == ["ורציתי"]
    assert document_windows(doc, [stripped], 1) == ["סוכרת ורציתי לדעת"]
    last = _span(doc.text, "אינסולין")
    assert document_windows(doc, [last], 2) == ["על משאבת אינסולין"]


def test_marked_windows_tell_prefix_variants_apart():
    doc = Document("h", "אני חולה ולחולי סוכרת יש")
    start = doc.text.index("ולחולי")
    variants = [Span(start + i, start + 6, doc.text[start + i:start + 6], "ול"[:i])
                for i in range(3)]
    assert len(set(document_windows(doc, variants, 1))) == 1
    assert document_windows(doc, variants, 1, mark_span=True) == [
        "חולה [ולחולי] סוכרת", "חולה ו[לחולי] סוכרת", "חולה ול[חולי] סוכרת"]
    english = Document("e", "Yesterday, my son's type 1 diabetes got worse (again).")
    assert document_windows(english, [_span(english.text, "diabetes")], 2, True) == [
        "type 1 [diabetes] got worse"]


def test_candidate_windows_follow_candidates():
    doc = Document("e", "a b c d e")
    spans = [_span(doc.text, "c"), _span(doc.text, "a")]
    cands = [Candidate(spans[0], "X", "x", 1.0), Candidate(spans[1], "Y", "y", 1.0),
             Candidate(spans[0], "Z", "z", 0.5)]
    assert candidate_windows(doc, cands, 1) == ["b c d", "a b", "b c d"]


def test_labels_rule():
    text = "foo bar baz qux"
    doc = Document("d", text, (Link(0, 7, "foo bar", ("C1",)), Link(12, 15, "qux")))
    whole, part, free = Span(0, 7, "foo bar"), Span(0, 3, "foo"), Span(12, 15, "qux")
    cands = [Candidate(whole, "C1", "foo bar", 1.0),   # span and concept match
             Candidate(whole, "C2", "foo baz", 0.9),   # right span, wrong concept
             Candidate(part, "C1", "foo bar", 0.8),    # concept right, span not exact
             Candidate(free, "quux", "quux", 0.7),     # gold without ids: span decides
             Candidate(Span(8, 11, "baz"), "C1", "baz", 0.6)]
    labels = label_candidates(doc, cands, level="concept")
    assert labels.tolist() == [True, False, False, True, False]


def test_top_k_mask_ranks_by_score_per_span_and_keeps_order_on_ties():
    a, b = Span(0, 1, "a"), Span(2, 3, "b")
    cands = [Candidate(a, "1", "n1", 0.5), Candidate(a, "2", "n2", 0.9),
             Candidate(b, "3", "n3", 0.7), Candidate(a, "4", "n4", 0.5),
             Candidate(b, "5", "n5", 0.7)]
    assert span_ranks(cands).tolist() == [2, 1, 1, 3, 2]
    assert top_k_mask(cands, 1).tolist() == [False, True, True, False, False]
    assert top_k_mask(cands, 2).tolist() == [True, True, True, False, True]
    assert top_k_mask(cands, None).all()
    assert top_k_mask([], 3).shape == (0,)


def test_top_k_counts_a_name_under_several_concepts_once():
    a = Span(0, 1, "a")
    cands = [Candidate(a, "n1", "n1", 0.9), Candidate(a, "C1", "n1", 0.9),
             Candidate(a, "n2", "n2", 0.8), Candidate(a, "n3", "n3", 0.7)]
    assert name_ranks(cands).tolist() == [1, 1, 2, 3]
    assert top_k_mask(cands, 2).tolist() == [True, True, True, False]


def _pair_filter(level: str) -> CrossEncoderFilter:
    return CrossEncoderFilter(FilterConfig(name="xlnel.cross_encoder.v1", select_level=level,
                                           options={"window": 0, "top_k_per_span": 2}), "en")


def test_training_labels_follow_select_level_and_pairs_are_unique():
    doc = Document("d", "foo bar", (Link(0, 7, "foo bar", ("C1",)),))
    span = Span(0, 7, "foo bar")
    # a names-list entry (its name is its id) beside the same name with the gold concept
    cands = [Candidate(span, "foo bar", "foo bar", 1.0), Candidate(span, "C1", "foo bar", 1.0),
             Candidate(span, "foo baz", "foo baz", 0.9)]
    pos, neg = _pair_filter("span")._training_pairs([doc], [cands])
    assert pos == [("[foo bar]", "foo bar"), ("[foo bar]", "foo baz")] and neg == []
    pos, neg = _pair_filter("concept")._training_pairs([doc], [cands])
    assert pos == [("[foo bar]", "foo bar")] and neg == [("[foo bar]", "foo baz")]


def test_bad_options_raise_config_error():
    with pytest.raises(ConfigError, match="windw"):
        parse_options({"windw": 3})
    with pytest.raises(ConfigError, match="top_k_per_span"):
        parse_options({"top_k_per_span": 0})
    assert parse_options({}).top_k_per_span == 5
    with pytest.raises(ConfigError, match="xlnel.gbdt.v9"):
        CrossEncoderFilter(FilterConfig(name="xlnel.cross_encoder.v1",
                                        options={"prefilter": "xlnel.gbdt.v9"}), "en")


def test_fit_needs_documents_and_positives(tiny_model_dir, corpus):
    docs, cands = corpus
    with pytest.raises(ValueError, match="needs annotated"):
        _filter(tiny_model_dir).fit([], [])
    unlabelled = [Document(d.id, d.text) for d in docs]
    with pytest.raises(ValueError, match="no candidate"):
        _filter(tiny_model_dir).fit(unlabelled, cands)


# ------------------------------------------------------------------ trained model


def test_a_dev_split_without_mentions_is_not_used(tiny_model_dir, corpus, caplog):
    """On a dev split without gold mentions every epoch would score F1 0, so early stopping
    would keep the first epoch and the threshold would be the highest dev score: every epoch
    runs on all documents instead, and the threshold comes from them."""
    import dataclasses
    import logging

    from xlnel.filtering._cross_encoder_data import split_indices

    docs, cands = corpus
    dev = set(split_indices(len(docs), 0.25, 0)[0])
    docs = [dataclasses.replace(d, entities=()) if i in dev else d for i, d in enumerate(docs)]
    with caplog.at_level(logging.WARNING, logger="xlnel.filtering._cross_encoder_data"):
        filt = _filter(tiny_model_dir, epochs=3).fit(docs, cands)
    assert any("hold no gold mention" in r.message for r in caplog.records)
    assert filt.report["dev_documents"] == 0 and len(filt.report["epochs"]) == 3
    assert filt.report["threshold_f1"] > 0


def test_fit_reports_and_chooses_threshold(trained):
    filt, _ = trained
    assert filt.report["positive_pairs"] > 0 and filt.report["negative_pairs"] > 0
    assert 1 <= len(filt.report["epochs"]) <= 2
    assert filt.report["dev_documents"] == 4
    assert 0.0 <= filt.threshold <= 1.0


def test_config_threshold_wins(tiny_model_dir, corpus):
    docs, cands = corpus
    filt = _filter(tiny_model_dir, threshold=0.0, epochs=1).fit(docs[:6], cands[:6])
    assert filt.threshold == 0.0


def test_save_load_gives_identical_scores(trained, corpus):
    filt, folder = trained
    docs, cands = corpus
    meta = json.loads((folder / "filter.json").read_text(encoding="utf-8"))
    assert meta["filter"] == "xlnel.cross_encoder.v1"
    assert meta["options"]["window"] == 2 and "xlnel_version" in meta
    loaded = CrossEncoderFilter.load(folder, FilterConfig(name="xlnel.cross_encoder.v1"), "en")
    assert loaded.threshold == filt.threshold
    for a, b in zip(filt.score_batch(docs, cands), loaded.score_batch(docs, cands),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_load_rejects_other_folders(tmp_path):
    config = FilterConfig(name="xlnel.cross_encoder.v1")
    with pytest.raises(ArtifactError, match="filter.json"):
        CrossEncoderFilter.load(tmp_path, config, "en")
    (tmp_path / "model").mkdir()
    (tmp_path / "filter.json").write_text(json.dumps({"filter": "xlnel.similarity.v1"}))
    with pytest.raises(ArtifactError, match="similarity"):
        CrossEncoderFilter.load(tmp_path, config, "en")


def test_identical_pairs_are_scored_once(trained, corpus, monkeypatch):
    filt, _ = trained
    docs, cands = corpus
    seen = _count_predicted_pairs(monkeypatch)
    copy = Document("copy", docs[0].text, docs[0].entities)
    # the same span and name under two concept ids is one pair as well
    twin = [*cands[0], *(Candidate(c.span, c.concept_id + "x", c.name, c.score)
                         for c in cands[0])]
    scores = filt.score_batch([docs[0], copy], [cands[0], twin])
    windows = candidate_windows(docs[0], cands[0], filt.options.window, filt.options.mark_span)
    unique = {(w, c.name) for w, c in zip(windows, cands[0], strict=True)}
    assert seen == [len(unique)]
    np.testing.assert_array_equal(scores[0], scores[1][:len(cands[0])])
    np.testing.assert_array_equal(scores[0], scores[1][len(cands[0]):])


def test_candidates_beyond_top_k_score_zero(trained, corpus):
    filt, _ = trained
    docs, cands = corpus
    span = cands[0][0].span
    crowd = [Candidate(span, f"X{i}", name, 1.0 - i / 10)
             for i, name in enumerate(["diabetes", "asthma", "insulin", "aspirin",
                                       "metformin", "migraine", "hypertension"])]
    scores = filt.score_batch([docs[0]], [crowd])[0]
    assert filt.options.top_k_per_span == 5
    assert (scores[:5] > 0).all()
    assert (scores[5:] == 0).all()


def test_int8_scores_close_to_fp32(trained, corpus, caplog):
    filt, folder = trained
    docs, cands = corpus
    # inference options come from the config; the others stay as trained
    config = FilterConfig(name="xlnel.cross_encoder.v1", options={"quantize": True, "window": 5})
    int8 = CrossEncoderFilter.load(folder, config, "en")
    assert int8.options.quantize and int8.options.window == filt.options.window == 2
    assert "window=5 ignored" in caplog.text
    fp32 = np.concatenate(filt.score_batch(docs, cands))
    q = np.concatenate(int8.score_batch(docs, cands))
    assert not np.array_equal(fp32, q)  # the quantised model did run
    assert np.abs(fp32 - q).max() < 0.05


def test_bfloat16_scores_close_to_fp32(trained, corpus):
    filt, folder = trained
    docs, cands = corpus
    config = FilterConfig(name="xlnel.cross_encoder.v1",
                          options={"inference_dtype": "bfloat16"})
    bf16 = CrossEncoderFilter.load(folder, config, "en")
    assert bf16.options.inference_dtype == "bfloat16"
    fp32 = np.concatenate(filt.score_batch(docs, cands))
    low = np.concatenate(bf16.score_batch(docs, cands))
    assert not np.array_equal(fp32, low)  # autocast did run
    assert np.abs(fp32 - low).max() < 0.05


def test_int8_and_a_low_precision_dtype_exclude_each_other():
    with pytest.raises(ConfigError, match="quantize.*inference_dtype=float16"):
        parse_options({"quantize": True, "inference_dtype": "float16"})


def test_training_is_seeded(tiny_model_dir, corpus):
    docs, cands = corpus
    a = _filter(tiny_model_dir, epochs=1).fit(docs[:8], cands[:8])
    b = _filter(tiny_model_dir, epochs=1).fit(docs[:8], cands[:8])
    np.testing.assert_array_equal(np.concatenate(a.score_batch(docs[8:], cands[8:])),
                                  np.concatenate(b.score_batch(docs[8:], cands[8:])))


def test_scores_feed_the_linking_decision(trained, corpus):
    from xlnel.linkers.decide import decide

    filt, _ = trained
    docs, cands = corpus
    scores = filt.score_batch(docs, cands)
    linked = [decide(d, c, s, filt.threshold) for d, c, s in zip(docs, cands, scores,
                                                                   strict=True)]
    assert all(0 <= link.score <= 1 for d in linked for link in d.entities)


def test_train_layers_freezes_all_but_the_top_layers(tiny_model_dir, corpus):
    docs, cands = corpus
    filt = _filter(tiny_model_dir, epochs=1, train_layers=1)
    filt.build_model()
    model = filt._model
    layers = model.base_model.encoder.layer
    assert all(not p.requires_grad for p in model.base_model.embeddings.parameters())
    assert all(not p.requires_grad for layer in layers[:-1] for p in layer.parameters())
    assert all(p.requires_grad for p in layers[-1].parameters())
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    filt.fit(docs[:8], cands[:8])
    changed = {n for n, p in filt._model.named_parameters()
               if not torch.equal(p.detach(), before[n])}
    assert changed and all(".layer.0." not in n and "embeddings" not in n for n in changed)


def test_max_length_beyond_the_model_is_a_config_error(tiny_model_dir):
    """Pairs of up to max_length tokens would reach past the tiny BERT's 128 positions and
    fail inside the model on the first long window."""
    with pytest.raises(ConfigError, match=r"filter\.options\.max_length=512 .* at most 128"):
        _filter(tiny_model_dir, max_length=512).build_model()


def test_train_layers_errors_are_config_errors(tiny_model_dir):
    with pytest.raises(ConfigError, match="layers"):
        _filter(tiny_model_dir, train_layers=99).build_model()
    with pytest.raises(ConfigError, match="freeze_embeddings"):
        _filter(tiny_model_dir, train_layers=1, freeze_embeddings=False).build_model()


# ------------------------------------------------------------------ cascade


def test_recall_cut_keeps_the_asked_share_of_positives():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.1])
    labels = np.array([True, False, True, True, False, True])
    assert recall_cut(scores, labels, 1.0) == 0.1
    assert recall_cut(scores, labels, 0.75) == 0.6
    assert recall_cut(scores, labels, 0.5) == 0.7
    assert recall_cut(scores, labels, 0.01) == 0.9
    with pytest.raises(ValueError, match="no positive"):
        recall_cut(scores, np.zeros(6, dtype=bool), 0.9)


@pytest.fixture(scope="module")
def cascade(tiny_model_dir, corpus, tmp_path_factory):
    docs, cands = corpus
    filt = _filter(tiny_model_dir, prefilter="xlnel.gbdt.v1", prefilter_recall=0.9,
                   prefilter_options={"window": 1})
    filt.fit(docs, cands)
    folder = tmp_path_factory.mktemp("cascade")
    filt.save(folder)
    return filt, folder


def test_cascade_reads_only_candidates_over_the_cut(cascade, corpus, monkeypatch):
    filt, _ = cascade
    docs, cands = corpus
    report = filt.report["prefilter"]
    assert report["name"] == "xlnel.gbdt.v1" and report["positives_kept"] >= 0.9
    assert filt.combine_mode in ("cross_encoder", "mean")
    assert set(filt.report["dev_f1_by_combine"]) == {"cross_encoder", "mean"}
    seen = _count_predicted_pairs(monkeypatch)
    pre = filt._prefilter.score_batch(docs, cands)
    scores = filt.score_batch(docs, cands)
    allowed = [p >= filt.cut for p in pre]
    read = sum(int((top_k_mask(c, filt.options.top_k_per_span) & a).sum())
               for c, a in zip(cands, allowed, strict=True))
    assert 0 < seen[0] <= read
    if filt.combine_mode == "cross_encoder":
        for s, a in zip(scores, allowed, strict=True):
            assert (s[~a] == 0).all()


def test_cascade_save_load_gives_identical_scores(cascade, corpus):
    filt, folder = cascade
    docs, cands = corpus
    assert (folder / "prefilter" / "filter.json").is_file()
    loaded = CrossEncoderFilter.load(folder, FilterConfig(name="xlnel.cross_encoder.v1"), "en")
    assert loaded.cut == filt.cut and loaded.combine_mode == filt.combine_mode
    # the prefilter trained, and comes back, with its own options
    assert filt._prefilter.options["window"] == loaded._prefilter.options["window"] == 1
    for a, b in zip(filt.score_batch(docs, cands), loaded.score_batch(docs, cands),
                    strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_a_cascade_folder_without_its_prefilter_is_an_artifact_error(cascade, tmp_path):
    import shutil

    _, folder = cascade
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    shutil.rmtree(copy / "prefilter")
    with pytest.raises(ArtifactError, match="prefilter"):
        CrossEncoderFilter.load(copy, FilterConfig(name="xlnel.cross_encoder.v1"), "en")


def test_a_prefilter_without_out_of_fold_scores_is_a_config_error(tiny_model_dir, corpus):
    docs, cands = corpus
    with pytest.raises(ConfigError, match="out-of-fold"):
        _filter(tiny_model_dir, prefilter="xlnel.similarity.v1").fit(docs, cands)


def test_prefilter_options_are_checked_before_training(tiny_model_dir):
    with pytest.raises(ConfigError, match="prefilter_options.*no_such_option"):
        _filter(tiny_model_dir, prefilter="xlnel.gbdt.v1",
                prefilter_options={"no_such_option": 1})
    with pytest.raises(ConfigError, match="prefilter_options.*unit"):
        _filter(tiny_model_dir, prefilter="xlnel.gbdt.v1", prefilter_options={"unit": "x"})
    with pytest.raises(ConfigError, match="without a prefilter"):
        _filter(tiny_model_dir, prefilter_options={"window": 1})


def test_saving_over_a_cascade_leaves_no_stale_prefilter(trained, cascade, corpus, tmp_path):
    """A filter without a prefilter saved over a cascade's folder replaces it whole: no old
    ``prefilter/`` stays, and the folder reads back as the new filter."""
    import shutil

    filt, _ = trained
    folder = tmp_path / "filter"
    shutil.copytree(cascade[1], folder)
    filt.save(folder)
    assert not (folder / "prefilter").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["filter.json", "model"]
    loaded = CrossEncoderFilter.load(folder, FilterConfig(name="xlnel.cross_encoder.v1"), "en")
    assert loaded._prefilter is None and loaded.threshold == filt.threshold
    docs, cands = corpus
    for a, b in zip(filt.score_batch(docs, cands), loaded.score_batch(docs, cands),
                    strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["filter"]  # no temporaries
