"""A synthetic language for the adapt tests: English-like words written in Greek letters."""

from __future__ import annotations

import random
from pathlib import Path

# a letter-substitution "language": Latin letters written as Greek ones
CIPHER = {chr(ord("a") + i): chr(0x3B1 + i) for i in range(26)}
KB_ROWS = [("X:1", "maleno", "1"), ("X:1", "cardo pelon", "0"), ("X:2", "tirasu", "1"),
           ("X:3", "pelon 2", "1")]


def encipher(word: str) -> str:
    """The synthetic language's rendering of an English word."""
    return "".join(CIPHER.get(ch, ch) for ch in word)


def synthetic_words(n: int = 150, seed: int = 0) -> list[str]:
    """Distinct pronounceable pseudo-English words."""
    rng = random.Random(seed)
    syllables = ["ma", "le", "no", "car", "do", "pe", "lon", "ti", "ra", "su", "ki", "ven", "os"]
    words: dict[str, None] = {}
    while len(words) < n:
        words["".join(rng.choice(syllables) for _ in range(rng.randint(2, 3)))] = None
    return list(words)


def write_cipher_pairs(path: Path, n: int = 150) -> Path:
    """Pairs file ``english<TAB>cipher`` with a header, one copy pair and one tagged pair."""
    lines = ["source\ttarget"] + [f"{w}\t{encipher(w)}" for w in synthetic_words(n)]
    lines += ["rbd\trbd", f"maleno\t{encipher('maleno')}\ttransliteration"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_kb(path: Path) -> Path:
    """A tiny English KB TSV."""
    rows = ["concept_id\tname\tpreferred"] + ["\t".join(r) for r in KB_ROWS]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path
