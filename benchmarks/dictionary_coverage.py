"""Coverage of the Camoni gold terms by a built Hebrew dictionary and by the reference names.

Builds a Hebrew dictionary with ``xlnel adapt --lang he --pairs ../shared/data/muse/en-he.txt
--kb hpo --kb tsv:../shared/data/kb/mesh_names.tsv`` (timed, peak memory recorded; reused when
``WORK/adapt-he`` holds a build of the same command, unless ``--rebuild``), then scores, per
community (diabetes, sclerosis, depression) and over all of them, the share of the distinct
normalised gold entity texts found exactly and fuzzily (TF-IDF char 1-3-gram cosine >= 0.8, top
1) by :func:`xlnel.analysis.coverage.coverage_of` in (i) the reference Hebrew UMLS names
(``camoni/hebrew_umls_names.txt``), (ii) the built dictionary, (iii) both together.

The text of the posts (not their annotations) is given as ``--corpus`` unless ``--no-corpus``:
it ranks senses, marks attested renderings and induces entries
(:mod:`xlnel.dictionary.induction`). ``--kb-limit N`` translates only the first N concepts of
each knowledge base (time budget); ``--adapt-args`` passes more ``xlnel adapt`` options
(``'--translit-seconds 60'`` bounds the transliterator's training); ``--dictionary DIR`` scores
an existing ``xlnel adapt`` folder (its ``benchmark_build.json``, when there, is recorded as the
build). Run from the repository root::

    python -m benchmarks.dictionary_coverage [--kb-limit N] [--adapt-args '...'] [--rebuild]
        [--no-corpus] [--dictionary DIR] [--work DIR] [--result NAME]

Writes ``benchmarks/results/dictionary_coverage.json`` (``--result`` names another file, for a
build with other ``--adapt-args`` in another ``--work`` folder) and prints its table;
``python -m benchmarks tables`` renders it into the docs.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from benchmarks._adapt import BUILD_FILE, adapt_options, add_adapt_arguments, run_adapt
from benchmarks._common import result_name, write_result
from xlnel.analysis.coverage import coverage_of, load_dictionary, read_gold
from xlnel.dictionary.dictionary import Dictionary

DATA = Path("../shared/data")
COMMUNITIES = ("diabetes", "sclerosis", "depression")
REFERENCE = DATA / "camoni/hebrew_umls_names.txt"
KBS = ("hpo", f"tsv:{DATA / 'kb/mesh_names.tsv'}")
#: The unlabelled text of the visible posts (annotations are not read): the ``--corpus``.
CORPUS = tuple(DATA / f"camoni/{c}.jsonl" for c in COMMUNITIES)
THRESHOLD = 0.8


def score(dictionary: Dictionary, source: str) -> dict[str, Any]:
    """Exact and fuzzy coverage per community and over all of them ("all")."""
    gold = [(c, read_gold(DATA / f"camoni/{c}.jsonl")) for c in COMMUNITIES]
    report = coverage_of(dictionary, gold, "he", THRESHOLD, source=source)
    keep = ("texts", "exact", "fuzzy", "exact_share", "fuzzy_share")
    out = {name: {k: v for k, v in s.to_dict().items() if k in keep} for name, s in report.files}
    out["all"] = {k: v for k, v in report.total.to_dict().items() if k in keep}
    return {"names": report.names, "results": out}


def main() -> None:
    """Build (or reuse) the dictionary, score the three name sets, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-limit", type=int, default=None,
                        help="Translate only the first N concepts of each knowledge base.")
    add_adapt_arguments(parser)
    parser.add_argument("--no-corpus", action="store_true",
                        help="Build without the posts' text as --corpus.")
    parser.add_argument("--dictionary", type=Path, default=None,
                        help="Score this xlnel adapt folder instead of building one.")
    parser.add_argument("--result", type=result_name, default="dictionary_coverage",
                        help="Results file name under benchmarks/results.")
    args = parser.parse_args()
    if args.dictionary is not None and not (args.dictionary / "dictionary.tsv").is_file():
        parser.error(f"--dictionary {args.dictionary}: no dictionary.tsv there; give a folder "
                     "written by xlnel adapt")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    extra = adapt_options(args)
    if not args.no_corpus:
        extra += [x for path in CORPUS for x in ("--corpus", str(path))]
    if args.kb_limit is not None:
        extra += ["--limit", str(args.kb_limit)]
    if args.dictionary is not None:
        target = args.dictionary
        record = target / BUILD_FILE
        build = (json.loads(record.read_text(encoding="utf-8")) if record.is_file()
                 else {"command": None, "note": f"built elsewhere, no {BUILD_FILE}"})
    else:
        target = args.work / ("adapt-he" if args.kb_limit is None
                              else f"adapt-he-limit{args.kb_limit}")
        build = run_adapt("he", DATA / "muse/en-he.txt", KBS, target, extra, args.rebuild)
    reference = load_dictionary(f"names:{REFERENCE}")
    built = Dictionary.load(target / "dictionary.tsv")
    both = Dictionary([*reference, *built])
    scored = {"reference": score(reference, str(REFERENCE)),
              "built": score(built, str(target / "dictionary.tsv")),
              "both": score(both, "reference + built")}
    communities = [*COMMUNITIES, "all"]
    payload = {
        "benchmark": "dictionary_coverage", "build": build,
        "dictionaries": list(scored), "names": {k: v["names"] for k, v in scored.items()},
        "gold": "distinct entity texts of ../shared/data/camoni/{diabetes,sclerosis,depression}"
                ".jsonl, normalize_string(.., 'he')",
        "fuzzy": {"matcher": "TF-IDF char 1-3-grams", "threshold": THRESHOLD, "top_m": 1},
        "results": {c: {name: s["results"][c] for name, s in scored.items()}
                    for c in communities},
    }
    write_result(args.result, payload)
    from benchmarks._tables_dictionary import dictionary_coverage

    print(dictionary_coverage(f"{args.result}.json"))


if __name__ == "__main__":
    main()
