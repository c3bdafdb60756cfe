from __future__ import annotations

import numpy as np
import pytest

from tests.filtering.conftest import vocabulary
from xlnel.config import FilterConfig
from xlnel.filtering.encoder_features import (
    COSINE_FEATURES,
    EmbeddingStore,
    EncoderFeatures,
    context_pieces,
)
from xlnel.filtering.gbdt import GradientBoostingFilter
from xlnel.types import Candidate, Document, Span


@pytest.fixture(scope="module")
def tiny_encoder_dir(tmp_path_factory):
    """A tiny random bare BERT (no classifier head) knowing the corpus words."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from xlnel.models.testing import tiny_bert

    return tiny_bert(tmp_path_factory.mktemp("tiny_encoder"), vocabulary())


def test_context_pieces_split_sentences_and_long_ones():
    text = "a b c. d e f g h\ni"
    got = [text[s:e] for s, e in context_pieces(text, 4)]
    assert got == ["a b c.", "d e f g", "f g h", "i"]
    assert [text[s:e] for s, e in context_pieces(text, 10)] == ["a b c.", "d e f g h", "i"]
    assert [text[s:e] for s, e in context_pieces("a b c", 1)] == ["a", "b", "c"]
    assert context_pieces("", 3) == []
    with pytest.raises(ValueError, match="context_words"):
        context_pieces(text, 0)


def test_store_embeds_each_text_once_and_reads_the_disk_store(tmp_path, tiny_encoder_dir):
    store = EmbeddingStore(str(tiny_encoder_dir), folder=tmp_path / "s")
    v = store.get(["insulin", "asthma", "insulin"])
    assert v.shape[0] == 3 and store.embedded == 2
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(v[0], v[2])
    again = EmbeddingStore(str(tiny_encoder_dir), folder=tmp_path / "s")
    np.testing.assert_allclose(again.get(["asthma"])[0], v[1], rtol=1e-6)
    assert again.embedded == 0  # read from disk, the encoder never loaded


def test_features_are_cosines_of_context_span_and_name(tmp_path, tiny_encoder_dir):
    store = EmbeddingStore(str(tiny_encoder_dir), folder=tmp_path / "s")
    feats = EncoderFeatures(store, pca=0, context_words=3)
    doc = Document("d", "the patient has diabetes. takes insulin daily")
    span = Span(16, 24, "diabetes")
    cands = [Candidate(span, "D1", "diabetes", 1.0), Candidate(span, "D4", "diabetic foot", 0.6)]
    x = feats.transform(doc, cands)
    assert x.shape == (2, len(COSINE_FEATURES))
    # 3-word pieces start at every word; "patient has diabetes." holds the span
    ctx, sp, names = (store.get(["patient has diabetes."]), store.get(["diabetes"]),
                      store.get(["diabetes", "diabetic foot"]))
    np.testing.assert_allclose(x[:, 0], names @ ctx[0], rtol=1e-5)
    np.testing.assert_allclose(x[:, 1], names @ sp[0], rtol=1e-5)
    assert x[0, 1] == pytest.approx(1.0, abs=1e-5)  # the span is its name
    np.testing.assert_allclose(x[:, 2], float(ctx[0] @ sp[0]), rtol=1e-5)
    assert feats.transform(doc, []).shape == (0, 3)


def test_gbdt_with_encoder_features_round_trips(tmp_path, monkeypatch, corpus,
                                                tiny_encoder_dir):
    monkeypatch.setenv("XLNEL_CACHE", str(tmp_path / "cache"))
    docs, cands = corpus
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={
        "folds": 2, "max_iter": 20, "encoder": str(tiny_encoder_dir), "encoder_pca": 2})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    assert f.feature_names[-5:] == (*COSINE_FEATURES, "enc_span_pc0", "enc_span_pc1")
    scores = f.score_batch(docs, cands)
    f.save(tmp_path / "f")
    g = GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    for a, b in zip(scores, g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b)
    (tmp_path / "f" / "encoder_pca.npz").unlink()
    with pytest.raises(FileNotFoundError, match="encoder PCA"):
        GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    with pytest.raises(ValueError, match="encoder_pca"):
        EncoderFeatures(EmbeddingStore("x"), pca=-1)


def test_gbdt_copies_a_local_encoder_folder(tmp_path, monkeypatch, corpus, tiny_encoder_dir):
    """The trees learnt the features of the encoder as it was: a saved filter keeps a copy of
    a local encoder folder (named here by a relative path), so it loads from any working
    folder and scores the same once the folder is gone or retrained."""
    import shutil

    monkeypatch.setenv("XLNEL_CACHE", str(tmp_path / "cache"))
    shutil.copytree(tiny_encoder_dir, tmp_path / "models" / "enc")
    monkeypatch.chdir(tmp_path)
    docs, cands = corpus
    cfg = FilterConfig(name="xlnel.gbdt.v1", options={
        "folds": 2, "max_iter": 20, "encoder": "models/enc"})
    f = GradientBoostingFilter(cfg, "en").fit(docs, cands)
    scores = f.score_batch(docs, cands)
    f.save(tmp_path / "f")
    assert (tmp_path / "f" / "encoder" / "model.safetensors").is_file()
    shutil.rmtree(tmp_path / "models")
    monkeypatch.chdir(tmp_path / "f")
    g = GradientBoostingFilter.load(tmp_path / "f", cfg, "en")
    for a, b in zip(scores, g.score_batch(docs, cands), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    g.save(tmp_path / "f")  # saved again where it was loaded from: the copy stays
    assert (tmp_path / "f" / "encoder" / "model.safetensors").is_file()
