"""Entity encoder: unit vectors, pooling, prefix, save/load, embedding cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from xlnel.linkers.encoder import ENCODER_FILE, EntityEncoder, cached_encode  # noqa: E402

TEXTS = ["diabetes", "insulin pump", "high blood pressure", "the patient has severe asthma"]


def test_encode_gives_unit_float32_rows(tiny_encoder_dir: Path) -> None:
    enc = EntityEncoder(str(tiny_encoder_dir), pooling="cls", prefix="", device="cpu")
    vectors = enc.encode(TEXTS, batch_size=2)
    assert vectors.dtype == np.float32 and vectors.shape == (4, enc.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # batching by length must not change any vector
    one_by_one = np.vstack([enc.encode([t]) for t in TEXTS])
    assert np.allclose(vectors, one_by_one, atol=1e-5)
    assert enc.encode([]).shape == (0, enc.dim)


def test_pooling_and_prefix_change_the_vectors(tiny_encoder_dir: Path) -> None:
    cls = EntityEncoder(str(tiny_encoder_dir), pooling="cls", prefix="", device="cpu")
    mean = EntityEncoder(str(tiny_encoder_dir), pooling="mean", prefix="", device="cpu")
    pre = EntityEncoder(str(tiny_encoder_dir), pooling="mean", prefix="the ", device="cpu")
    a, b, c = (e.encode(["insulin pump"]) for e in (cls, mean, pre))
    assert not np.allclose(a, b) and not np.allclose(b, c)
    assert np.allclose(c, mean.encode(["the insulin pump"]), atol=1e-5)


def test_save_load_keeps_settings_and_vectors(tiny_encoder_dir: Path, tmp_path: Path) -> None:
    enc = EntityEncoder(str(tiny_encoder_dir), pooling="cls", prefix="x ", max_length=16,
                        device="cpu")
    enc.save(tmp_path / "enc")
    meta = json.loads((tmp_path / "enc" / ENCODER_FILE).read_text())
    assert meta["pooling"] == "cls" and meta["prefix"] == "x " and meta["max_length"] == 16
    back = EntityEncoder.load(tmp_path / "enc", device="cpu")
    assert (back.pooling, back.prefix, back.max_length) == ("cls", "x ", 16)
    assert np.allclose(back.encode(TEXTS), enc.encode(TEXTS), atol=1e-6)
    with pytest.raises(FileNotFoundError):
        EntityEncoder.load(tmp_path / "missing")


def test_cached_encode_reuses_the_file(tiny_encoder_dir: Path, tmp_path: Path) -> None:
    enc = EntityEncoder(str(tiny_encoder_dir), pooling="cls", prefix="", device="cpu")
    first = cached_encode(enc, TEXTS, root=tmp_path)
    files = list((tmp_path / "embeddings").glob("*.npy"))
    assert len(files) == 1
    np.save(files[0], first * 0)  # a cache hit returns what the file holds
    assert np.allclose(cached_encode(enc, TEXTS, root=tmp_path), 0.0)
    assert not np.allclose(cached_encode(enc, TEXTS[:2], root=tmp_path), 0.0)


def test_max_length_beyond_the_model_is_refused_and_long_texts_are_truncated(
        tiny_encoder_dir: Path) -> None:
    """The tiny BERT has 128 positions: a longer max_length would fail inside the model on
    the first long text ("The expanded size of the tensor ... must match")."""
    from xlnel.errors import ConfigError

    with pytest.raises(ConfigError, match=r"max_length=512 .* at most 128 tokens"):
        EntityEncoder(str(tiny_encoder_dir), max_length=512, device="cpu")
    enc = EntityEncoder(str(tiny_encoder_dir), prefix="", max_length=128, device="cpu")
    long = " ".join(["diabetes"] * 300)
    vectors = enc.encode([long, "diabetes"])
    assert vectors.shape == (2, enc.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_sizes_are_taken_as_given(tiny_encoder_dir: Path) -> None:
    """0 is refused, not read as 'not given' (None alone means the default)."""
    with pytest.raises(ValueError, match="at least 1, got 0 and 128"):
        EntityEncoder(str(tiny_encoder_dir), max_length=0, device="cpu")
    enc = EntityEncoder(str(tiny_encoder_dir), prefix="", device="cpu")
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        enc.encode(TEXTS, batch_size=0)
