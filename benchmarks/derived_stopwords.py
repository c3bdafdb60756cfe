"""Stop words derived from word pairs against a curated list and none: Camoni, cross-validated.

``xlnel adapt`` writes ``stopwords.txt``: the renderings the word pairs give English stop words
(:func:`xlnel.dictionary.stopwords.kb_stopwords`), for a language xlnel ships no list
for. Hebrew has a curated list (``candidates/stopwords/he.txt``), so Camoni measures what the
derived list is worth: the Hebrew list derived from ``muse/en-he.txt`` with the content words of
HPO and MeSH (as ``xlnel adapt --lang he --kb hpo --kb tsv:mesh_names.tsv`` derives it) is
compared with the curated list (``shipped``) and with no list (``none``, what a language
without one had), for two pipelines:

* ``gbdt``: the shipped community configs (a GBDT filter trained on the training folds);
* ``similarity``: the same with ``filter.name=xlnel.similarity.v1`` and ``linker.propagate``
  off (no learned filter: a cosine threshold chosen on the training folds), the pipeline of a
  language with few annotations, where nothing else keeps function words out of the spans.

Each cell is 5-fold cross-validation by document over the visible posts (seed 0), scored at
span level on the pooled out-of-fold predictions with a 95% document-bootstrap interval, and
``derived`` is compared with ``none`` and with ``shipped`` by the paired bootstrap over
documents (1,000 resamples). Also reported: the derived list's size and its overlap with the
curated one, and the sizes of the lists derived for ``--langs``.

    python -m benchmarks derived_stopwords [--communities diabetes ...] [--work DIR]
        [--cache DIR] [--langs fr de it ja]

Writes ``benchmarks/results/derived_stopwords.json``. Run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks._common import counts_by_document, paired_scores, write_result
from benchmarks.adapt_new_language import DATA
from benchmarks.cv_accuracy import cross_validate
from xlnel.dictionary.adapt import load_concepts, write_stopwords
from xlnel.dictionary.langdata import load_profile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.stopwords import kb_stopwords
from xlnel.experiments.summary import pooled
from xlnel.stopwords import load_stopwords

COMMUNITIES = ("diabetes", "sclerosis", "depression")
FILTERS: dict[str, dict[str, Any]] = {
    "gbdt": {},
    "similarity": {"filter.name": "xlnel.similarity.v1", "linker.propagate": False},
}
FOLDS, LEVEL = 5, "span"


def derive(lang: str, kbs: list[str]) -> list[str]:
    """The list ``xlnel adapt --lang LANG --kb ...`` writes, from ``muse/en-LANG.txt``."""
    concepts, _ = load_concepts(kbs)
    return kb_stopwords(Lexicon.from_file(DATA / f"muse/en-{lang}.txt"), load_profile(lang),
                        concepts)


def cell(community: str, pipeline: str, stopwords: Path | None, args: argparse.Namespace
         ) -> list[dict[str, Any]]:
    """The fold records of one community, pipeline and stop-word list."""
    overrides = dict(FILTERS[pipeline])
    if stopwords is not None:
        overrides["candidates.stopwords"] = str(stopwords)
    name = "shipped" if stopwords is None else stopwords.stem
    ((_, records),) = cross_validate(f"configs/camoni-{community}.yaml", FOLDS,
                                     args.work / f"{community}-{pipeline}-{name}", args.cache,
                                     overrides=overrides)
    return records


def compare(records: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Pooled span scores of each list, and ``derived`` against ``none`` and ``shipped``."""
    out: dict[str, Any] = {name: pooled(r)[LEVEL] for name, r in records.items()}
    counts = {name: counts_by_document(r, LEVEL) for name, r in records.items()}
    for base in ("none", "shipped"):
        out[f"derived_vs_{base}"] = paired_scores(counts[base], counts["derived"])
    return out


def main() -> None:
    """Derive the lists, cross-validate every cell, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--communities", nargs="+", default=list(COMMUNITIES),
                        choices=COMMUNITIES)
    parser.add_argument("--langs", nargs="+", default=["fr", "de", "it", "ja"])
    parser.add_argument("--work", type=Path, default=Path("/tmp/xlnel-derived-stopwords"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    args = parser.parse_args()
    t0 = time.perf_counter()
    kbs = ["hpo", f"tsv:{DATA / 'kb/mesh_names.tsv'}"]
    derived = derive("he", kbs)
    curated = load_stopwords("he")
    args.work.mkdir(parents=True, exist_ok=True)
    files = {"derived": args.work / "derived.txt", "none": args.work / "none.txt"}
    write_stopwords(files["derived"], derived, "he", DATA / "muse/en-he.txt")
    files["none"].write_text("# no stop words\n", encoding="utf-8")
    shared = set(derived) & curated
    lists = {"he": {"derived": len(derived), "curated": len(curated), "shared": len(shared),
                    "share_of_derived_curated": round(len(shared) / len(derived), 4),
                    "share_of_curated_derived": round(len(shared) / len(curated), 4),
                    "kb": kbs},
             **{lang: {"derived": len(derive(lang, ["hpo"])), "kb": ["hpo"]}
                for lang in args.langs}}
    results: dict[str, Any] = {}
    for community in args.communities:
        results[community] = {}
        for pipeline in FILTERS:
            records = {"shipped": cell(community, pipeline, None, args),
                       **{name: cell(community, pipeline, path, args)
                          for name, path in files.items()}}
            results[community][pipeline] = compare(records)
    write_result("derived_stopwords", {"benchmark": "derived_stopwords", "level": LEVEL,
                                       "folds": FOLDS, "lists": lists, "results": results,
                                       "seconds": round(time.perf_counter() - t0, 1)},
                 settings={"communities": args.communities, "langs": args.langs})
    for community, by_pipeline in results.items():
        for pipeline, r in by_pipeline.items():
            print(f"{community} {pipeline}: " + ", ".join(
                f"{name} {r[name]['f1']:.3f}" for name in ("shipped", "derived", "none"))
                + f"; derived - none {r['derived_vs_none']['delta_f1']:+.3f} "
                f"(p {r['derived_vs_none']['p']:.3f})")


if __name__ == "__main__":
    main()
