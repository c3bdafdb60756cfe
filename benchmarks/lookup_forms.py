"""The form in which the lookup compares names and texts, measured on development rows.

A :class:`xlnel.analysis.lookup.LookupForm` can fold the accents of Latin letters and drop stop
words (those of the build's ``stopwords.txt``) on both sides before TF-IDF compares a text with
a built dictionary's names. This benchmark scores accuracy@1/@10 of the four forms (as they
are, accents folded, stop words dropped, both) under the ``cosine`` ranking, and of the plain
and both forms under the ``hybrid`` ranking, on development rows: for each language
(``--langs``, default ``fr ja``) the seeded rows outside those ``adapt_new_language.py``
scores (:func:`benchmarks.hybrid_weight.dev_rows`, same options). Each form is paired with the
plain one (paired bootstrap of accuracy@1). Under ``unaccented_labels``, the plain and folded
forms again on the same labels written without accents (their Latin combining marks removed),
as terms typed on a keyboard without them come. The dictionaries are those
``adapt_new_language.py`` built (``--work``, default ``dictionary/built``: ``adapt-L``).

    python -m benchmarks lookup_forms [--langs fr ja]

Writes ``benchmarks/results/lookup_forms.json``.
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

from benchmarks._common import write_result
from benchmarks.adapt_new_language import DATA, E5, K, paired_hits, ranking_accuracy
from benchmarks.hybrid_weight import add_dev_row_arguments, dev_rows
from xlnel.analysis.coverage import DictionaryLookup, gold_items, read_gold_tsv
from xlnel.analysis.encoder_lookup import encoder_scores
from xlnel.analysis.gold import resolve_gold
from xlnel.analysis.lookup import LookupForm
from xlnel.dictionary.adapt import STOPWORDS_FILE
from xlnel.dictionary.dictionary import Dictionary
from xlnel.io import load_kb
from xlnel.io.kb_history import kb_id_history
from xlnel.normalization import fold_latin_marks
from xlnel.stopwords import read_stopword_file

logger = logging.getLogger("lookup_forms")

#: Form name -> (drop the build's stop words, fold Latin accents).
FORMS = {"plain": (False, False), "fold_accents": (False, True), "stopwords": (True, False),
         "both": (True, True)}
#: Forms also scored under the hybrid ranking.
HYBRID_FORMS = ("plain", "both")
#: Forms also scored on the labels written without accents.
UNACCENTED_FORMS = ("plain", "fold_accents")


def score_language(lang: str, args: argparse.Namespace, english: Dictionary) -> dict[str, Any]:
    """Accuracy of every form on one language's development rows."""
    rows, resolved = resolve_gold(read_gold_tsv(DATA / f"hpo_translations/{lang}.tsv"),
                                  kb_id_history("hpo"))
    dev = dev_rows(rows, args)
    folder = args.work / f"adapt-{lang}"
    built = Dictionary.load(folder / "dictionary.tsv")
    stopwords = read_stopword_file(folder / STOPWORDS_FILE, lang)
    dense = None if args.no_e5 else encoder_scores(english, lang, E5)
    items = gold_items(dev, lang)
    unaccented = [(fold_latin_marks(key), ids) for key, ids in items]
    out: dict[str, Any] = {"rows": len(rows), "dev_rows": len(dev), "retired_ids_resolved":
                           resolved, "dictionary": str(folder), "stopwords": len(stopwords),
                           "cosine": {}, "hybrid": {}, "unaccented_labels": {
                               "changed": sum(a != b for (a, _), (b, _) in zip(
                                   items, unaccented, strict=True))}}
    for name, (drop, fold) in FORMS.items():
        t0 = time.perf_counter()
        form = LookupForm(stopwords if drop else frozenset(), fold)
        lookup = DictionaryLookup(built, lang, dense=dense, form=form)
        out["cosine"][name] = {**form.to_dict(), "names": len(lookup.keys),
                               **ranking_accuracy(lookup, items, "cosine", t0)}
        if dense is not None and name in HYBRID_FORMS:
            t0 = time.perf_counter()
            out["hybrid"][name] = {**form.to_dict(), "encoder": E5,
                                   "encoder_weight": lookup.encoder_weight,
                                   **ranking_accuracy(lookup, items, "hybrid", t0)}
        if name in UNACCENTED_FORMS:
            t0 = time.perf_counter()
            out["unaccented_labels"][name] = {**form.to_dict(), **ranking_accuracy(
                lookup, unaccented, "cosine", t0)}
        logger.info("%s %s: accuracy@1 %.4f", lang, name,
                    out["cosine"][name]["accuracy@1"])
    for scored in (out["cosine"], out["hybrid"], out["unaccented_labels"]):
        for name, entry in scored.items():
            if name not in ("plain", "changed"):
                entry["paired_with_plain"] = paired_hits(scored["plain"], entry)
    return out


def main() -> None:
    """Score every form on every language's development rows, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=["fr", "ja"])
    parser.add_argument("--no-e5", action="store_true", help="Skip the hybrid ranking.")
    add_dev_row_arguments(parser)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    english = Dictionary.from_concepts(load_kb("hpo"))
    results = {lang: score_language(lang, args, english) for lang in args.langs}
    write_result("lookup_forms", {"benchmark": "lookup_forms", "k": K, "languages": results},
                 settings={"langs": args.langs, "no_e5": args.no_e5, "dev_rows": args.dev_rows,
                           "dev_seed": args.dev_seed, "limit": args.limit,
                           "whole_up_to": args.whole_up_to, "seed": args.seed,
                           "work": str(args.work)})
    for lang, r in results.items():
        line = ", ".join(f"{name} {s['accuracy@1']:.3f}" for name, s in r["cosine"].items())
        hybrid = ", ".join(f"{name} {s['accuracy@1']:.3f}" for name, s in r["hybrid"].items())
        bare = r["unaccented_labels"]
        print(f"{lang}: tf-idf {line}; hybrid {hybrid}; labels without accents: plain "
              f"{bare['plain']['accuracy@1']:.3f}, folded {bare['fold_accents']['accuracy@1']:.3f}")


if __name__ == "__main__":
    main()
