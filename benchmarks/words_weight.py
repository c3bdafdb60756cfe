"""The word-overlap weight of the ``words`` lookup, chosen on development rows of the official
labels.

The ``words`` ranking (:class:`xlnel.analysis.lookup.DictionaryLookup`, ``rank="words"``) adds
a weighted word overlap (:class:`xlnel.analysis.word_overlap.WordOverlap`) between the label
and each name to the TF-IDF cosine among a built dictionary's names. This benchmark scores
accuracy@1/@10 of each weight (``--weights``, listed in their order in the results file, so
that the docs can quote them by index; weight 0 is the cosine ranking) on the
development rows of :mod:`benchmarks.hybrid_weight` (same options: rows of
``hpo_translations/L.tsv`` outside those ``adapt_new_language.py`` scores, so German and
Italian, scored whole there, have none), with the dictionaries ``adapt_new_language.py``
built (``--work``); retired HPO ids are mapped as there.

    python -m benchmarks words_weight [--langs fr ja] [--weights 0 0.1 0.2 0.25 0.3 0.5 1]

Writes ``benchmarks/results/words_weight.json``.
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

from benchmarks._common import write_result
from benchmarks.adapt_new_language import DATA, K, with_intervals
from benchmarks.hybrid_weight import add_dev_row_arguments, dev_rows
from xlnel.analysis.coverage import DictionaryLookup, gold_items, item_hits, read_gold_tsv
from xlnel.analysis.gold import resolve_gold
from xlnel.dictionary.dictionary import Dictionary
from xlnel.io.kb_history import kb_id_history

logger = logging.getLogger("words_weight")


def score_language(lang: str, args: argparse.Namespace) -> dict[str, Any]:
    """Accuracy of every weight on one language's development rows."""
    rows, resolved = resolve_gold(read_gold_tsv(DATA / f"hpo_translations/{lang}.tsv"),
                                  kb_id_history("hpo"))
    dev = dev_rows(rows, args)
    built = Dictionary.load(args.work / f"adapt-{lang}" / "dictionary.tsv")
    lookup = DictionaryLookup(built, lang)
    items = gold_items(dev, lang)
    t0 = time.perf_counter()
    lookup.search([key for key, _ in items])
    out: dict[str, Any] = {"rows": len(rows), "dev_rows": len(dev), "retired_ids_resolved":
                           resolved, "dictionary": str(args.work / f"adapt-{lang}"),
                           "search_seconds": round(time.perf_counter() - t0, 1), "weights": []}
    for weight in args.weights:
        lookup.words_weight = weight
        t0 = time.perf_counter()
        scores = with_intervals(item_hits(
            lambda ks: [lookup.ranked_concepts(k, K, rank="words") for k in ks], items, K),
            time.perf_counter() - t0)
        out["weights"].append({"weight": weight, **scores})
        logger.info("%s weight %g: accuracy@1 %.4f", lang, weight, scores["accuracy@1"])
    return out


def main() -> None:
    """Score every weight on every language's development rows, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=["fr", "ja"])
    parser.add_argument("--weights", nargs="+", type=float,
                        default=[0, 0.1, 0.2, 0.25, 0.3, 0.5, 1])
    add_dev_row_arguments(parser)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    results = {lang: score_language(lang, args) for lang in args.langs}
    write_result("words_weight", {"benchmark": "words_weight", "k": K, "languages": results},
                 settings={"langs": args.langs, "weights": args.weights,
                           "dev_rows": args.dev_rows, "dev_seed": args.dev_seed,
                           "limit": args.limit, "whole_up_to": args.whole_up_to,
                           "seed": args.seed, "work": str(args.work)})
    for lang, r in results.items():
        line = ", ".join(f"{s['weight']:g} {s['accuracy@1']:.3f}" for s in r["weights"])
        print(f"{lang}: {line}")


if __name__ == "__main__":
    main()
