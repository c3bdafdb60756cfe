"""The encoder weight of the hybrid lookup, chosen on development rows of the official labels.

The hybrid ranking (:class:`xlnel.analysis.lookup.DictionaryLookup`, ``rank="hybrid"``) adds a
weighted encoder cosine among the English HPO names to the TF-IDF cosine among a built
dictionary's names. This benchmark scores accuracy@1/@10 of each weight (``--weights``) on
development rows: for each language (``--langs``, default ``fr ja``) a seeded sample of
``--dev-rows`` rows (seed ``--dev-seed``) of ``hpo_translations/L.tsv`` *outside* the rows that
``adapt_new_language.py`` scores with the same ``--limit``, ``--whole-up-to`` and ``--seed``.
A language that benchmark scores whole has no such rows and is refused. The dictionaries are
those ``adapt_new_language.py`` built (``--work``, default ``dictionary/built``: ``adapt-L``);
retired HPO ids are mapped as there. Also reported: TF-IDF alone (the ``cosine`` ranking)
and the encoder alone (concepts by their encoder cosine). Weight 0 differs from TF-IDF alone
where TF-IDF finds no name: the encoder's concepts are then ranked (all at TF-IDF's floor, in
the encoder's order).

    python -m benchmarks hybrid_weight [--langs fr ja] [--weights 0 1 2 4 8 12 20]

Writes ``benchmarks/results/hybrid_weight.json``.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from pathlib import Path
from typing import Any

from benchmarks._common import write_result
from benchmarks.adapt_new_language import (
    DATA,
    E5,
    K,
    by_cosine,
    sample_rows,
    with_intervals,
)
from xlnel.analysis.coverage import DictionaryLookup, gold_items, item_hits, read_gold_tsv
from xlnel.analysis.encoder_lookup import encoder_scores
from xlnel.analysis.gold import GoldItem, resolve_gold
from xlnel.dictionary.dictionary import Dictionary
from xlnel.io import load_kb
from xlnel.io.kb_history import kb_id_history

logger = logging.getLogger("hybrid_weight")


def dev_rows(rows: list[GoldItem], args: argparse.Namespace) -> list[GoldItem]:
    """``--dev-rows`` seeded rows outside the rows ``adapt_new_language`` scores."""
    scored = sample_rows(rows, args.limit, args.seed, args.whole_up_to)
    if len(scored) == len(rows):
        raise SystemExit("every row is scored by adapt_new_language: no development rows left")
    taken = {id(row) for row in scored}
    rest = [row for row in rows if id(row) not in taken]
    pick = sorted(random.Random(args.dev_seed).sample(range(len(rest)),
                                                      min(args.dev_rows, len(rest))))
    return [rest[i] for i in pick]


def add_dev_row_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that pick development rows (:func:`dev_rows`) and the built dictionaries."""
    parser.add_argument("--dev-rows", type=int, default=1000)
    parser.add_argument("--dev-seed", type=int, default=1)
    parser.add_argument("--limit", type=int, default=500,
                        help="adapt_new_language's --limit (its rows are left out).")
    parser.add_argument("--whole-up-to", type=int, default=1000,
                        help="adapt_new_language's --whole-up-to.")
    parser.add_argument("--seed", type=int, default=0, help="adapt_new_language's --seed.")
    parser.add_argument("--work", type=Path, default=Path("dictionary/built"))


def score_language(lang: str, args: argparse.Namespace, english: Dictionary) -> dict[str, Any]:
    """Accuracy of TF-IDF alone, the encoder alone and every weight on one language's rows
    (the encoder searches the ``english`` names)."""
    dense = encoder_scores(english, lang, E5)
    rows, resolved = resolve_gold(read_gold_tsv(DATA / f"hpo_translations/{lang}.tsv"),
                                  kb_id_history("hpo"))
    dev = dev_rows(rows, args)
    built = Dictionary.load(args.work / f"adapt-{lang}" / "dictionary.tsv")
    lookup = DictionaryLookup(built, lang, dense=dense)
    items = gold_items(dev, lang)
    keys = [key for key, _ in items]
    t0 = time.perf_counter()
    lookup.search(keys)
    found = dict(zip(keys, lookup.dense_search(keys), strict=True))
    out: dict[str, Any] = {"rows": len(rows), "dev_rows": len(dev), "retired_ids_resolved":
                           resolved, "dictionary": str(args.work / f"adapt-{lang}"),
                           "encoding_seconds": round(time.perf_counter() - t0, 1)}
    t0 = time.perf_counter()
    out["tfidf"] = with_intervals(item_hits(
        lambda ks: [lookup.ranked_concepts(k, K, rank="cosine") for k in ks], items, K),
        time.perf_counter() - t0)
    t0 = time.perf_counter()
    out["encoder"] = with_intervals(item_hits(
        lambda ks: [by_cosine(found[k]) for k in ks], items, K), time.perf_counter() - t0)
    out["weights"] = {}
    for weight in args.weights:
        lookup.encoder_weight = weight
        t0 = time.perf_counter()
        out["weights"][f"{weight:g}"] = with_intervals(item_hits(
            lambda ks: [lookup.ranked_concepts(k, K, rank="hybrid") for k in ks], items, K),
            time.perf_counter() - t0)
        logger.info("%s weight %g: accuracy@1 %.4f", lang, weight,
                    out["weights"][f"{weight:g}"]["accuracy@1"])
    return out


def main() -> None:
    """Score every weight on every language's development rows, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=["fr", "ja"])
    parser.add_argument("--weights", nargs="+", type=float, default=[0, 1, 2, 4, 8, 12, 20])
    add_dev_row_arguments(parser)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    english = Dictionary.from_concepts(load_kb("hpo"))
    results = {lang: score_language(lang, args, english) for lang in args.langs}
    write_result("hybrid_weight", {"benchmark": "hybrid_weight", "encoder": E5, "k": K,
                                   "languages": results},
                 settings={"langs": args.langs, "weights": args.weights,
                           "dev_rows": args.dev_rows, "dev_seed": args.dev_seed,
                           "limit": args.limit, "whole_up_to": args.whole_up_to,
                           "seed": args.seed, "work": str(args.work)})
    for lang, r in results.items():
        line = ", ".join(f"{w} {s['accuracy@1']:.3f}" for w, s in r["weights"].items())
        print(f"{lang}: tf-idf {r['tfidf']['accuracy@1']:.3f}, encoder "
              f"{r['encoder']['accuracy@1']:.3f}, weights {line}")


if __name__ == "__main__":
    main()
