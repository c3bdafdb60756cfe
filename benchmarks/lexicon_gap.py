"""What the built dictionary's TF-IDF lookup misses, and whether the word pairs hold it.

On development rows of the official HPO label translations (picked as ``hybrid_weight.py``
picks them: a seeded sample outside the rows ``adapt_new_language.py`` scores), a label is a
miss when the TF-IDF lookup among the names ``adapt_new_language.py`` built (the ``cosine``
ranking) does not rank its concept first. Each content word of a missed label (a word of two
letters or more that neither the language file's connectors nor a rendering the pairs give an
English stop word hold) is looked for, in turn:

* ``rendered``: among the words of the concept's rendered names (its entries not from ``kb``);
* ``pairs_for_its_words``: among the renderings the pairs give the words of the concept's
  English names (or their singular or plural): the builder had the word and did not use it;
* ``pairs_other_words``: among the renderings the pairs give other English words only;
* ``not_in_pairs``: nowhere in the pairs.

Two words match when they are equal or, both at least five letters long, share their first five
(inflected forms: *fine* / *fines*, *musculaire* / *musculaires*). A miss counts as
``word_missing`` when one of its content words is not ``rendered``. The analysis needs words
written apart, so a language written without spaces is refused.

    python -m benchmarks lexicon_gap [--langs fr] [--dev-rows 1000]

Writes ``benchmarks/results/lexicon_gap.json``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from benchmarks._common import write_result
from benchmarks.adapt_new_language import DATA
from benchmarks.hybrid_weight import add_dev_row_arguments, dev_rows
from xlnel.analysis.coverage import DictionaryLookup, gold_items, read_gold_tsv
from xlnel.analysis.gold import resolve_gold
from xlnel.dictionary.compose import tokenize
from xlnel.dictionary.dictionary import Dictionary
from xlnel.dictionary.langdata import load_profile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.render import number_forms
from xlnel.dictionary.stopwords import connector_words
from xlnel.io import load_kb
from xlnel.io.kb_history import kb_id_history
from xlnel.normalization import normalize_string
from xlnel.stopwords import load_stopwords

#: Letters two inflected forms share at their start (and the least length of each).
PREFIX = 5
CLASSES = ("rendered", "pairs_for_its_words", "pairs_other_words", "not_in_pairs")


def stems(words: Iterable[str]) -> set[str]:
    """The words, and the first :data:`PREFIX` letters of those at least that long."""
    out: set[str] = set()
    for word in words:
        out.add(word)
        if len(word) >= PREFIX:
            out.add(word[:PREFIX] + "…")
    return out


def matches(word: str, known: set[str]) -> bool:
    """Whether ``word`` is in ``known`` (a :func:`stems` set) up to its inflection."""
    return word in known or (len(word) >= PREFIX and word[:PREFIX] + "…" in known)


def rendering_words(lexicon: Lexicon, lang: str, english: Iterable[str]) -> set[str]:
    """Normalised words of the renderings the pairs give ``english`` words (and their other
    number)."""
    out: set[str] = set()
    for word in english:
        for form in (word, *number_forms(word)):
            for sense in lexicon.senses(form):
                out.update(normalize_string(sense.text, lang).split())
    return out


def analyse(lang: str, args: argparse.Namespace) -> dict[str, Any]:
    """The misses of one language's development rows and where their words are."""
    t0 = time.perf_counter()
    lexicon = Lexicon.from_file(DATA / f"muse/en-{lang}.txt")
    rows, resolved = resolve_gold(read_gold_tsv(DATA / f"hpo_translations/{lang}.tsv"),
                                  kb_id_history("hpo"))
    dev = dev_rows(rows, args)
    items = gold_items(dev, lang)
    if not any(" " in key for key, _ in items):
        raise SystemExit(f"{lang}: the labels are written without spaces; no words to look for")
    built = Dictionary.load(args.work / f"adapt-{lang}" / "dictionary.tsv")
    rendered: dict[str, set[str]] = {}
    for entry in built:
        if entry.source != "kb":
            rendered.setdefault(entry.concept_id, set()).update(entry.name.split())
    names = {c.id: c.names for c in load_kb("hpo")}
    function = connector_words(load_profile(lang))
    for word in load_stopwords("en"):
        for sense in lexicon.senses(word):
            function.update(normalize_string(sense.text, lang).split())
    vocabulary = stems(w for _, senses in lexicon.items() for s in senses
                       for w in normalize_string(s.text, lang).split())
    lookup = DictionaryLookup(built, lang)
    misses = Counter[str]()
    words = Counter[str]()
    examples: list[dict[str, Any]] = []
    for key, concepts in items:
        ranked = lookup.ranked_concepts(key, 1, rank="cosine")
        if ranked and ranked[0] in concepts:
            continue
        misses["misses"] += 1
        own = stems(w for c in concepts for name in rendered.get(c, ()) for w in name.split())
        english = {t for c in concepts for name in names.get(c, ()) for t in tokenize(name)}
        from_pairs = stems(rendering_words(lexicon, lang, english))
        where: dict[str, str] = {}
        for word in key.split():
            if len(word) < 2 or word in function or word in where:
                continue
            where[word] = ("rendered" if matches(word, own)
                           else "pairs_for_its_words" if matches(word, from_pairs)
                           else "pairs_other_words" if matches(word, vocabulary)
                           else "not_in_pairs")
        words.update(where.values())
        missing = [w for w, c in where.items() if c != "rendered"]
        misses["word_missing" if missing else "every_word_rendered"] += 1
        if missing and len(examples) < args.examples:
            examples.append({"label": key, "concepts": list(concepts),
                             "english": list(names.get(concepts[0], ()))[:1],
                             "top": ranked[:1], "words": where})
    content = sum(words.values())
    return {"rows": len(rows), "dev_rows": len(dev), "retired_ids_resolved": resolved,
            "dictionary": str(args.work / f"adapt-{lang}"),
            "misses": misses["misses"],
            "accuracy@1": round(1 - misses["misses"] / len(items), 4),
            "misses_word_missing": misses["word_missing"],
            "misses_every_word_rendered": misses["every_word_rendered"],
            "share_word_missing": round(misses["word_missing"] / max(misses["misses"], 1), 4),
            "content_words": content,
            "words": {c: words[c] for c in CLASSES},
            "word_shares": {c: round(words[c] / max(content, 1), 4) for c in CLASSES},
            "examples": examples, "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    """Analyse each language's development rows, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=["fr"])
    add_dev_row_arguments(parser)
    parser.add_argument("--examples", type=int, default=15)
    args = parser.parse_args()
    results = {lang: analyse(lang, args) for lang in args.langs}
    write_result("lexicon_gap", {"benchmark": "lexicon_gap", "prefix": PREFIX,
                                 "languages": results},
                 settings={"langs": args.langs, "dev_rows": args.dev_rows,
                           "dev_seed": args.dev_seed, "limit": args.limit,
                           "whole_up_to": args.whole_up_to, "seed": args.seed,
                           "work": str(args.work)})
    for lang, r in results.items():
        print(f"{lang}: {r['misses']} misses of {r['dev_rows']} rows; a word missing from the "
              f"concept's renderings in {r['share_word_missing']:.1%}; content words of misses: "
              + ", ".join(f"{c} {s:.1%}" for c, s in r["word_shares"].items()))


if __name__ == "__main__":
    main()
