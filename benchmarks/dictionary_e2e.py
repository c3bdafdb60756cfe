"""End to end on Camoni: the built Hebrew dictionary against the reference names, by 5-fold CV.

Three dictionaries, each with DFT and the shipped GBDT pipeline of the community
(``configs/camoni-<community>.yaml``, whose training sets take the other two communities'
visible posts as well, ``data.extra_train``; decisions as in :mod:`_oof`, ``linker.propagate``
off):

* ``reference``: the reference Hebrew UMLS names (``camoni/hebrew_umls_names.txt``);
* ``built``: the dictionary ``xlnel adapt`` builds from English HPO + MeSH, the en-he word pairs
  and the unlabelled text of the visible posts (``python -m benchmarks dictionary_coverage``
  writes it to ``dictionary/built/adapt-he``), restricted to the entries the posts attest
  (``attested.tsv``; ``configs/pipelines/built.yaml`` uses the same file);
* ``both``: the two together (``configs/pipelines/both.yaml``).

Every visible post of a community is dealt into 5 folds by document (:mod:`_oof`); each fold
applies DFT to its training posts (the other communities' among them), fits the filter and
predicts its held-out posts (of the community only). Reported per
community and pooled over the three: strict span precision, recall and F1 of the out-of-fold
predictions with a 95% document-bootstrap interval, and paired document bootstraps (1,000
resamples) of built - reference, both - reference and both - built; and where gold spans are
lost: the HRM span recall of the candidates, and the spans with an exact match (matcher score 1),
gold or not, and how many of them were linked, in all and among the novel ones (whose text no
training document of the fold has as a gold mention). Out-of-fold runs are cached
under ``XLNEL_CACHE`` (default ``/tmp``) in ``dictionary-e2e``, keyed by the content of the
dictionary files each variant reads (the reference runs are shared by every built file).

``--common-top N`` leaves out the one-word built names that read as one of the N most frequent
English words of the word pairs (:func:`xlnel.dictionary.induction.drop_common`), and
``--min-single-score S`` the one-word built names scoring below S; the filtered entries are
written beside the built file and used as ``built``. ``--prune K`` sets ``dft.prune`` of the
built and both variants: each fold removes the built names its DFT posts hold K times or more
and never as a gold mention (:func:`xlnel.dictionary.dft.prune_unlinked_names`). ``--fallback
X``, ``--generated-min-score Y`` and ``--generated-min-chars C`` set
``candidates.generated_fallback``, ``generated_min_score`` and ``generated_min_chars`` of the both
variant (:mod:`xlnel.candidates.tiers`): there the built names give candidates only for spans
that no given name (reference or DFT annotation) matches at X or more, only where they match at
Y or more, and only when they have C letters or digits or more. ``--set
KEY=VALUE`` (repeatable) overrides the config of every variant, as ``xlnel train --set``;
``--built-set KEY=VALUE`` (repeatable) adds the variants ``built_set`` and ``both_set``, built and
both with those overrides, paired against built, both and reference; with ``--reference-set``
also ``reference_set``, the reference with them, paired against the reference
(every variant's filter has ``filter.options.provenance`` on, as ``configs/pipelines/built.yaml``
and ``both.yaml``; ``--set filter.options.provenance=false`` leaves those features out;
``--set 'data.extra_train=[]'`` trains each community on its own posts only).

    python -m benchmarks dictionary_e2e [--communities diabetes ...] [--built PATH]
        [--common-top N] [--min-single-score S] [--prune K] [--fallback X]
        [--generated-min-score Y] [--generated-min-chars C] [--set KEY=VALUE ...]
        [--built-set KEY=VALUE ...] [--reference-set] [--result NAME]

writes ``benchmarks/results/dictionary_e2e.json`` (or ``NAME.json``).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks import _oof
from benchmarks._common import result_name, write_result
from xlnel.config import parse_overrides
from xlnel.dictionary.dictionary import Dictionary
from xlnel.dictionary.induction import common_words, drop_common
from xlnel.dictionary.langdata import load_profile
from xlnel.dictionary.pairs import read_pairs
from xlnel.evaluation import (
    bootstrap_counts,
    document_counts,
    hrm_recall,
    paired_bootstrap_counts,
)
from xlnel.normalization import normalize_string

COMMUNITIES = ("diabetes", "sclerosis", "depression")
REFERENCE = "names:../shared/data/camoni/hebrew_umls_names.txt"
BUILT = Path("dictionary/built/adapt-he/attested.tsv")
PAIRS = (("built", "reference"), ("both", "reference"), ("both", "built"))
#: Paired tests of the ``--built-set`` variants, when they run.
SET_PAIRS = (("built_set", "built"), ("both_set", "both"), ("built_set", "reference"),
             ("both_set", "reference"), ("both_set", "built_set"),
             ("reference_set", "reference"), ("built_set", "reference_set"),
             ("both_set", "reference_set"))
WORD_PAIRS = Path("../shared/data/muse/en-he.txt")


def variants(built: Path, prune: int = 0, common: dict[str, Any] | None = None,
             tiers: dict[str, Any] | None = None,
             with_built: dict[str, Any] | None = None,
             with_reference: bool = False) -> dict[str, dict[str, Any]]:
    """Config overrides of each dictionary variant (``prune``: ``dft.prune`` of the built;
    ``common``: overrides of every variant; ``tiers``: the ``candidates.generated_*``
    overrides of both; ``with_built``: overrides of the added variants ``built_set`` and
    ``both_set``, none when empty; ``with_reference``: ``reference_set`` too, the reference
    with those overrides)."""
    pruning = {"dft.prune": prune} if prune else {}
    shared = {"filter.options.provenance": True, **(common or {})}
    out = {"reference": {"dictionary.kb": [REFERENCE], "dictionary.extra": [], **shared},
           "built": {"dictionary.kb": [], "dictionary.extra": [str(built)], **pruning,
                     **shared},
           "both": {"dictionary.kb": [REFERENCE], "dictionary.extra": [str(built)],
                    **pruning, **(tiers or {}), **shared}}
    if with_built:
        out["built_set"] = {**out["built"], **with_built}
        out["both_set"] = {**out["both"], **with_built}
        if with_reference:
            out["reference_set"] = {**out["reference"], **with_built}
    return out


def filtered(built: Path, top: int, min_single_score: float) -> Path:
    """The built entries without everyday one-word names, written beside ``built``."""
    if top <= 0 and min_single_score <= 0:
        return built
    profile = load_profile("he")
    common = common_words(read_pairs(WORD_PAIRS), top, "he") if top > 0 else frozenset()
    prefixes = [normalize_string(p, "he") for p in profile.prefixes]
    entries = Dictionary.load(built)
    kept = drop_common(entries, common, prefixes, min_single_score, lang="he")
    out = built.with_name(f"{built.stem}-top{top}-min{min_single_score:g}.tsv")
    Dictionary(kept).save(out)
    logging.info("%s: %d one-word names left out", out, len(entries) - len(kept))
    return out


def file_digest(path: str) -> str:
    """Content hash of a dictionary file (its path after any ``kind:`` prefix)."""
    return hashlib.sha256(Path(path.split(":", 1)[-1]).read_bytes()).hexdigest()[:12]


def run_variant(community: str, overrides: dict[str, Any]) -> _oof.OutOfFold:
    """Out-of-fold predictions of one community with one dictionary (cached by content)."""
    key = repr(sorted(overrides.items()))
    if overrides["dictionary.extra"]:
        key += repr([file_digest(p) for p in overrides["dictionary.extra"]])
    return _oof.cached(community, "dictionary-e2e", key,
                       lambda c: _oof.out_of_fold(c, _oof.folds(c, overrides), overrides))


def scores(oof: _oof.OutOfFold, seen: dict[str, frozenset[str]]) -> dict[str, Any]:
    """Strict span scores with a 95% document-bootstrap interval of F1, and where the gold
    spans were lost: the share with a candidate (HRM span recall), and the spans with an exact
    match (matcher score 1), gold or not, and how many of each were linked (``seen``: per
    document, the normalised gold texts of its fold's training documents)."""
    ci = bootstrap_counts(document_counts(oof.gold, oof.pred, "span"), seed=0)
    hrm = hrm_recall(oof.gold, {d.id: c for d, c in zip(oof.gold, oof.candidates, strict=True)},
                     "span")
    return {**ci.scores.to_dict(), "f1_ci": list(ci.f1_ci), "hrm_span_recall": hrm.recall,
            "candidates": hrm.candidates, "exact": exact_matches(oof, seen)}


def exact_matches(oof: _oof.OutOfFold, seen: dict[str, frozenset[str]]) -> dict[str, int]:
    """Spans with an exact match: all of them and the gold ones, and how many were linked;
    then the same of the ``novel`` ones, whose text no training document of the fold has as
    a gold mention (the filter has no prior of them)."""
    keys = ("spans", "spans_linked", "gold", "gold_linked")
    out = dict.fromkeys((*keys, *(f"novel_{k}" for k in keys)), 0)
    for gold, cands, pred in zip(oof.gold, oof.candidates, oof.pred, strict=True):
        texts = {(c.span.start, c.span.end): c.span.text for c in cands if c.score >= 1.0}
        exact = set(texts)
        novel = {k for k, t in texts.items()
                 if normalize_string(t, "he") not in seen.get(gold.id, frozenset())}
        linked = {(e.start, e.end) for e in pred.entities}
        spans = {(e.start, e.end) for e in gold.entities}
        for prefix, group in (("", exact), ("novel_", novel)):
            out[prefix + "spans"] += len(group)
            out[prefix + "spans_linked"] += len(group & linked)
            out[prefix + "gold"] += len(group & spans)
            out[prefix + "gold_linked"] += len(group & spans & linked)
    return out


def seen_texts(community: str, overrides: dict[str, Any] | None = None
               ) -> dict[str, frozenset[str]]:
    """Per held-out document: the normalised gold texts of its fold's training documents (with
    the config ``overrides``: ``data.extra_train`` changes them)."""
    out: dict[str, frozenset[str]] = {}
    for train, test in _oof.fold_documents(community, overrides):
        texts = frozenset(normalize_string(e.text, "he") for d in train for e in d.entities)
        out.update((d.id, texts) for d in test)
    return out


def paired(a: _oof.OutOfFold, b: _oof.OutOfFold) -> dict[str, Any]:
    """Paired document bootstrap of span F1(b) - F1(a)."""
    test = paired_bootstrap_counts(document_counts(a.gold, a.pred, "span"),
                                   document_counts(b.gold, b.pred, "span"), seed=0)
    return {"delta_f1": test.delta_f1, "delta_f1_ci": list(test.delta_f1_ci), "p": test.p_value}


def join(runs: list[_oof.OutOfFold]) -> _oof.OutOfFold:
    """Out-of-fold runs of several communities as one (document ids made distinct)."""
    out = _oof.OutOfFold([], [], [], [], [], [])
    for i, r in enumerate(runs):
        out.gold += [replace(d, id=f"{i}:{d.id}") for d in r.gold]
        out.pred += [replace(d, id=f"{i}:{d.id}") for d in r.pred]
        out.candidates += r.candidates
    return out


def compare(runs: dict[str, _oof.OutOfFold], seen: dict[str, frozenset[str]]) -> dict[str, Any]:
    """Scores of each variant and the paired tests between them."""
    return {"scores": {name: scores(oof, seen) for name, oof in runs.items()},
            "paired": {f"{b}-{a}": paired(runs[a], runs[b]) for b, a in PAIRS + SET_PAIRS
                       if a in runs and b in runs}}


def main() -> None:
    """Run the variants of each community, score them, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--communities", nargs="*", default=list(COMMUNITIES))
    parser.add_argument("--built", type=Path, default=BUILT)
    parser.add_argument("--common-top", type=int, default=0)
    parser.add_argument("--min-single-score", type=float, default=0.0)
    parser.add_argument("--result", type=result_name, default="dictionary_e2e",
                        help="Results file name (benchmarks/results/NAME.json).")
    parser.add_argument("--prune", type=int, default=0,
                        help="dft.prune of the built and both variants (0: off).")
    parser.add_argument("--fallback", type=float, default=None,
                        help="candidates.generated_fallback of the both variant.")
    parser.add_argument("--generated-min-score", type=float, default=None,
                        help="candidates.generated_min_score of the both variant.")
    parser.add_argument("--generated-min-chars", type=int, default=None,
                        help="candidates.generated_min_chars of the both variant.")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="Config override of every variant (repeatable).")
    parser.add_argument("--built-set", action="append", default=[], metavar="KEY=VALUE",
                        help="Config override of added variants built_set and both_set "
                             "(repeatable).")
    parser.add_argument("--reference-set", action="store_true",
                        help="With --built-set, add reference_set: the reference with those "
                             "overrides.")
    args = parser.parse_args()
    common = parse_overrides(args.set)
    with_built = parse_overrides(args.built_set)
    tiers = {f"candidates.generated_{key}": value for key, value in
             (("fallback", args.fallback), ("min_score", args.generated_min_score),
              ("min_chars", args.generated_min_chars))
             if value is not None}
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if not args.built.is_file():
        raise SystemExit(f"{args.built} not found: run python -m benchmarks dictionary_coverage")
    args.built = filtered(args.built, args.common_top, args.min_single_score)
    digest = file_digest(str(args.built))
    os.environ["XLNEL_CACHE"] = str(Path(os.environ.get("XLNEL_CACHE", "/tmp"))
                                    / "dictionary-e2e")
    started = time.perf_counter()
    by_community: dict[str, dict[str, _oof.OutOfFold]] = {}
    results: dict[str, Any] = {}
    seen: dict[str, dict[str, frozenset[str]]] = {}
    table = variants(args.built, args.prune, common, tiers, with_built, args.reference_set)
    for community in args.communities:
        runs = {}
        for name, overrides in table.items():
            mark = time.perf_counter()
            runs[name] = run_variant(community, overrides)
            logging.info("%s %s: %.0f s", community, name, time.perf_counter() - mark)
        by_community[community] = runs
        seen[community] = seen_texts(community, common)
        results[community] = compare(runs, seen[community])
    if len(by_community) > 1:
        results["pooled"] = compare({name: join([r[name] for r in by_community.values()])
                                     for name in table},
                                    {f"{i}:{doc}": texts for i, one in enumerate(seen.values())
                                     for doc, texts in one.items()})
    write_result(args.result, {
        "benchmark": "dictionary_e2e", "level": "span (strict)",
        "protocol": f"{_oof.FOLDS}-fold cross-validation by document over all visible posts "
                    f"(seed {_oof.SEED}) of each community, every training set also taking the "
                    "posts of data.extra_train (settings.extra_train); out-of-fold predictions "
                    "pooled",
        "settings": {"extra_train": {c: _oof.corpus_config(c, common).data.extra_train
                                     for c in args.communities},
                     "common_top": args.common_top,
                     "min_single_score": args.min_single_score, "dft_prune": args.prune,
                     "tiers": tiers, "set": common, "built_set": with_built,
                     "reference_set": args.reference_set},
        "dictionaries": {"reference": REFERENCE,
                         "built": f"{args.built} (sha256 {digest}), from "
                                  "python -m benchmarks dictionary_coverage",
                         "both": "reference + built"},
        "interval": "95% bootstrap over documents, 1000 resamples",
        "test": "paired bootstrap over documents, 1000 resamples, two-sided p",
        "results": results, "seconds": round(time.perf_counter() - started, 1)})
    for community, r in results.items():
        for name, s in r["scores"].items():
            print(f"{community:10s} {name:9s} F1 {s['f1']:.3f} [{s['f1_ci'][0]:.3f}, "
                  f"{s['f1_ci'][1]:.3f}]")
        for pair, t in r["paired"].items():
            print(f"{community:10s} {pair:18s} dF1 {t['delta_f1']:+.3f} p {t['p']:.3f}")


if __name__ == "__main__":
    main()
