"""How much of the official HPO labels' English the word pairs translate, per language.

The dictionary ``xlnel adapt`` builds can only be as good as the word pairs behind it. For each
language L (``--langs``, default ``fr de it ja``), this reads the English side of
``../shared/data/hpo_translations/L.tsv`` (never the translations) and
``../shared/data/muse/en-L.txt``, and counts, over the distinct English labels:

- ``word_share``: of their content words (tokens less the connectors and articles the builder
  treats apart, numbers and one-letter tokens), the share the pairs translate: the lexicon gives
  the word (or a base form of it) a sense that is not a copy of the English word;
- ``label_share``: the share of labels whose every content word is so translated;
- the same two with copies counted (``copies``): a Latin-script language writes many medical
  words as English does (*syndrome*), and the builder keeps such senses there, though the
  pairs also copy names and English text.

The rest of a label has to come from the builder's fallbacks (cognate rewrites, affixes,
morphemes, transliteration). Writes ``benchmarks/results/pairs_coverage.json`` and prints its
table; ``python -m benchmarks tables`` renders it into the docs.

Run from the repository root::

    python -m benchmarks pairs_coverage [--langs fr de it ja]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks._common import write_result
from xlnel.dictionary.compose import tokenize
from xlnel.dictionary.langdata import DEFAULT_CONNECTORS
from xlnel.dictionary.lexicon import Lexicon
from xlnel.errors import FormatError

DATA = Path("../shared/data")
#: English words that are no content word: single-word connectors and articles.
FUNCTION_WORDS = frozenset({c for c in DEFAULT_CONNECTORS if " " not in c} | {"the", "a", "an"})


def english_labels(path: Path) -> list[str]:
    """The distinct English labels of a ``hpo_id<TAB>english<TAB>translation`` file, in order.

    Raises:
        FormatError: On a line without three tab-separated fields, naming file and line.
    """
    labels: dict[str, None] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if number == 1 and fields[:2] == ["hpo_id", "english"]:
                continue
            if len(fields) != 3:
                raise FormatError(f"expected 3 tab-separated fields, got {len(fields)}: "
                                  f"{line.rstrip()!r}", path, number)
            labels.setdefault(fields[1], None)
    return list(labels)


def content_words(label: str) -> list[str]:
    """A label's normalised tokens less function words and one-letter tokens."""
    return [t for t in tokenize(label) if t not in FUNCTION_WORDS and len(t) > 1
            and not t.isdigit()]


def translated(lexicon: Lexicon, word: str, copies: bool = False) -> bool:
    """Whether the pairs give ``word`` (or a base form) a sense other than itself, or any sense
    with ``copies``."""
    return any(copies or s.text.casefold() != word for s in lexicon.senses(word))


def coverage(labels: Iterable[str], lexicon: Lexicon, copies: bool = False) -> dict[str, Any]:
    """Word and label shares of ``labels`` that ``lexicon`` translates (see the module)."""
    words = found = full = n = 0
    known: dict[str, bool] = {}
    for label in labels:
        tokens = content_words(label)
        if not tokens:
            continue
        n += 1
        hits = [known.setdefault(t, translated(lexicon, t, copies)) for t in tokens]
        words += len(hits)
        found += sum(hits)
        full += all(hits)
    return {"labels": n, "words": words, "words_translated": found, "labels_translated": full,
            "word_share": round(found / words, 4) if words else None,
            "label_share": round(full / n, 4) if n else None}


def main(argv: list[str] | None = None) -> None:
    """Count, write the results file, print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=["fr", "de", "it", "ja"])
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    results: dict[str, Any] = {}
    for lang in args.langs:
        pairs = DATA / f"muse/en-{lang}.txt"
        gold = DATA / f"hpo_translations/{lang}.tsv"
        labels, lexicon = english_labels(gold), Lexicon.from_file(pairs)
        results[lang] = {"pairs": str(pairs), "gold": str(gold), **coverage(labels, lexicon),
                         "copies": coverage(labels, lexicon, copies=True)}
    write_result("pairs_coverage", {"languages": results,
                                    "seconds": round(time.perf_counter() - t0, 1)},
                 {"langs": args.langs, "function_words": sorted(FUNCTION_WORDS)})
    from benchmarks._tables_dictionary import pairs_coverage

    print(pairs_coverage())


if __name__ == "__main__":
    main()
