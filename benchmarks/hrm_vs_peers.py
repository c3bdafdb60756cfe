"""High-recall matching side by side: xlnel's exact matcher, scispacy's CandidateGenerator and
QuickUMLS on the same dictionary and the same queries.

Dictionary: the MeSH names of ``../shared/data/kb/mesh_names.tsv`` (then, with
``--synthetic N``, the MeSH names plus synthetic names as in ``hrm_speed.py``, N in all).
Queries: the BC5CDR dev gold mentions and every candidate span (1-3 words) of its documents.
For each tool: build time, peak memory (max RSS of its own process), queries per second over
all queries and recall@1/10/50 of the gold concept over the gold mentions, with ratios against
xlnel.

The peers are not project dependencies: the script installs each into a throwaway virtual
environment (``--venvs``, default ``/tmp/peers-venv-*``) with pip from the configured index and
runs it there in a subprocess; every offline workaround is recorded in the result.

    python -m benchmarks hrm_vs_peers [--synthetic 3000000] [--time-box 3600]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, result_name, run_isolated, write_result

ROOT = Path(__file__).resolve().parent.parent
KS = (1, 10, 50)

PEERS: dict[str, dict[str, Any]] = {
    "scispacy": {
        "packages": ["scispacy", "nmslib-metabrainz"],
        "workarounds": [
            "nmslib has no wheel for Python 3.11; installed the nmslib-metabrainz wheel, which "
            "provides the same nmslib module",
            "custom KnowledgeBase from a jsonl written from the dictionary, index built with "
            "create_tfidf_ann_index (no download of scispacy's UMLS/MeSH linker files), called "
            "with out_path=None and its scipy<1.11 check (which guards only the float16 copy "
            "saved to disk) patched out, so the index is built in memory with scispacy's own "
            "parameters (char_wb 3-grams, min_df 10, HNSW M 100, efConstruction 2000)",
            "CandidateGenerator given ann_index, tfidf_vectorizer, concept aliases and kb, so it "
            "fetches nothing",
            "candidates ranked by their best alias similarity (scispacy's linker threshold of "
            "0.7 not applied, so that recall@50 is comparable)",
            "efSearch set to 200, scispacy's default ef_search: create_tfidf_ann_index returns "
            "its in-memory index without query-time parameters (nmslib's default efSearch is "
            "20), and CandidateGenerator applies ef_search only to the index it loads itself",
        ],
    },
    "quickumls": {
        "packages": ["quickumls (--no-deps)", "spacy", "unidecode", "nltk", "unqlite", "six",
                     "numpy", "pysimstring"],
        "workarounds": [
            "quickumls requires leveldb (no wheel, needs a compiler and libleveldb) and "
            "quickumls-simstring (not on the index): installed quickumls with --no-deps, its "
            "other requirements as wheels, pysimstring (the same SWIG binding of simstring) "
            "behind a quickumls_simstring shim module, and an empty leveldb stub module (the "
            "unqlite database backend is used)",
            "MRCONSO.RRF and MRSTY.RRF written from the dictionary (every concept given the "
            "semantic type T047 and accepted), installed with quickumls.install",
            "spacy.load replaced by spacy.blank('en') (no spaCy model download, which "
            "quickumls.install and QuickUMLS attempt) and ignore_syntax=True; the installer run "
            "in-process",
            "nltk's stop-word corpus (a download) replaced by spaCy's English stop words",
            "threshold 0.4 cosine on character 3-grams, best_match=False; candidates ranked "
            "by similarity",
        ],
    },
}

SCISPACY_RUNNER = '''
import json, resource, sys, time
from scispacy import candidate_generation
from scispacy.candidate_generation import CandidateGenerator, create_tfidf_ann_index
from scispacy.linking_utils import KnowledgeBase
work, k, ef_construction = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if ef_construction != 2000:  # scispacy's own value is a local of create_tfidf_ann_index
    _nmslib = candidate_generation.nmslib

    class _Index:
        def __init__(self, index):
            self._index = index

        def __getattr__(self, name):
            return getattr(self._index, name)

        def createIndex(self, params, **kw):
            return self._index.createIndex({**params, "efConstruction": ef_construction}, **kw)

    candidate_generation.nmslib = type("Nmslib", (), {
        "DataType": _nmslib.DataType,
        "init": staticmethod(lambda **kw: _Index(_nmslib.init(**kw)))})
t0 = time.perf_counter()
kb = KnowledgeBase(work + "/kb.jsonl")
# the check guards only the float16 copy written to disk; building in memory needs no save
candidate_generation.scipy_supports_sparse_float16 = lambda: True
aliases, vectorizer, index = create_tfidf_ann_index(None, kb)
index.setQueryTimeParams({"efSearch": 200})  # scispacy's default ef_search (see workarounds)
gen = CandidateGenerator(ann_index=index, tfidf_vectorizer=vectorizer,
                         ann_concept_aliases_list=aliases, kb=kb)
build = time.perf_counter() - t0
queries = json.load(open(work + "/queries.json"))
t0 = time.perf_counter()
ranked = []
for lo in range(0, len(queries), 1000):
    for cands in gen(queries[lo:lo + 1000], k):
        cands = sorted(cands, key=lambda c: -max(c.similarities))
        ranked.append([c.concept_id for c in cands])
search = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
json.dump({"build_seconds": build, "search_seconds": search, "peak_rss_mib": peak,
           "ranked": ranked}, open(work + "/scispacy_out.json", "w"))
'''

QUICKUMLS_RUNNER = '''
import contextlib, io, json, os, resource, sys, time
import spacy
spacy.load = lambda *a, **kw: spacy.blank("en")  # no model download
import nltk.corpus
from spacy.lang.en.stop_words import STOP_WORDS
stop = sorted(STOP_WORDS)
nltk.corpus.stopwords = type("Stop", (), {"words": staticmethod(lambda lang="en": stop)})
from quickumls import QuickUMLS, install
work = sys.argv[1]
t0 = time.perf_counter()
os.makedirs(work + "/qumls")  # or the installer asks on stdin
sys.argv = ["quickumls.install", "--lowercase", work + "/umls", work + "/qumls"]
with contextlib.redirect_stdout(io.StringIO()):
    install.main()
matcher = QuickUMLS(work + "/qumls", threshold=0.4, similarity_name="cosine", window=5,
                    accepted_semtypes={"T047"})
build = time.perf_counter() - t0
queries = json.load(open(work + "/queries.json"))
t0 = time.perf_counter()
ranked = []
for q in queries:
    found = {}
    for group in matcher.match(q, best_match=False, ignore_syntax=True):
        for m in group:
            found[m["cui"]] = max(found.get(m["cui"], 0.0), m["similarity"])
    ranked.append(sorted(found, key=lambda c: -found[c]))
search = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
json.dump({"build_seconds": build, "search_seconds": search, "peak_rss_mib": peak,
           "ranked": ranked}, open(work + "/quickumls_out.json", "w"))
'''


# ------------------------------------------------------------------------------------- data
def mesh_dictionary(path: Path) -> list[tuple[str, str]]:
    """(concept id, name) pairs of a ``tsv`` knowledge base."""
    from xlnel.io import load_kb

    return [(c.id, n) for c in load_kb(f"tsv:{path}") for n in c.names]


def bc5cdr_queries(path: Path) -> tuple[list[str], list[tuple[str, ...]]]:
    """Gold mention texts first, then every distinct candidate span text of the documents; and
    the gold concepts of the mentions."""
    from xlnel.candidates.spans import generate_spans
    from xlnel.io import read_documents

    docs = read_documents(path)
    gold = [(e.text, e.concept_ids) for d in docs for e in d.entities if e.concept_ids]
    spans = sorted({s.text for d in docs for s in generate_spans(d.text, "en")})
    return [t for t, _ in gold] + spans, [c for _, c in gold]


def write_inputs(work: Path, entries: list[tuple[str, str]], queries: list[str]) -> None:
    """The dictionary as a scispacy jsonl KB and as UMLS RRF files, and the queries."""
    by_concept: dict[str, list[str]] = {}
    for cid, name in entries:
        by_concept.setdefault(cid, []).append(name)
    with open(work / "kb.jsonl", "w", encoding="utf-8") as f:
        for cid, names in by_concept.items():
            f.write(json.dumps({"concept_id": cid, "canonical_name": names[0],
                                "aliases": names[1:], "types": ["T047"]}) + "\n")
    (work / "umls").mkdir(exist_ok=True)
    with open(work / "umls" / "MRCONSO.RRF", "w", encoding="utf-8") as f:
        for i, (cid, name) in enumerate(entries):
            name = name.replace("|", " ")
            f.write(f"{cid}|ENG|P|L{i}|PF|S{i}|Y|A{i}||||MSH|PT|{cid}|{name}|0|N||\n")
    with open(work / "umls" / "MRSTY.RRF", "w", encoding="utf-8") as f:
        for cid in by_concept:
            f.write(f"{cid}|T047|B2.2.1.2.1|Disease or Syndrome|AT0|256|\n")
    (work / "queries.json").write_text(json.dumps(queries), encoding="utf-8")


def recall(ranked: list[list[str]], gold: list[tuple[str, ...]]) -> dict[str, float]:
    """recall@k of the gold concept among the first k distinct concepts of each gold query."""
    out = {}
    for k in KS:
        hits = sum(bool(set(r[:k]) & set(g)) for r, g in zip(ranked, gold, strict=False))
        out[f"recall@{k}"] = round(hits / max(1, len(gold)), 4)
    return out


# ------------------------------------------------------------------------------------ tools
def run_ours(work: str, n_gold: int, matcher: dict[str, Any]) -> dict[str, Any]:
    """xlnel's matcher on the written inputs: pipeline defaults (th 0.4, top 50 names, 1-3-grams)
    updated with ``matcher`` (MatcherConfig fields)."""
    from xlnel.candidates.tfidf import MatcherConfig, TfidfMatcher
    from xlnel.normalization import normalize_string

    w = Path(work)
    t0 = time.perf_counter()
    keys: dict[str, int] = {}
    concepts: list[list[str]] = []
    lines = (w / "kb.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        e = json.loads(line)
        for name in [e["canonical_name"], *e["aliases"]]:
            i = keys.setdefault(normalize_string(name, "en"), len(keys))
            if i == len(concepts):
                concepts.append([])
            if e["concept_id"] not in concepts[i]:
                concepts[i].append(e["concept_id"])
    m = TfidfMatcher(MatcherConfig(**{"top_m": 50, "threshold": 0.4, **matcher})).fit(list(keys))
    build = time.perf_counter() - t0
    queries = json.loads((w / "queries.json").read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    distinct: dict[str, int] = {}
    q_keys = [distinct.setdefault(normalize_string(q, "en"), len(distinct)) for q in queries]
    found = m.search(list(distinct))
    ranked = []
    for k in q_keys[:n_gold]:
        seen: dict[str, None] = {}
        for match in found[k]:
            seen.update(dict.fromkeys(concepts[match.name_index]))
        ranked.append(list(seen))
    search = time.perf_counter() - t0
    return {"build_seconds": build, "search_seconds": search, "ranked": ranked}


def ensure_venv(tool: str, root: Path) -> tuple[Path, float]:
    """The tool's throwaway venv, created and filled with pip on first use."""
    venv = root / f"peers-venv-{tool}"
    python = venv / "bin" / "python"
    t0 = time.perf_counter()
    if not (venv / ".ok").is_file():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--only-binary=:all:"]
        if tool == "quickumls":
            subprocess.run([*pip, "--no-deps", "quickumls"], check=True)
            subprocess.run([*pip, *PEERS[tool]["packages"][1:]], check=True)
            site = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()"
                                   "[0])"], check=True, capture_output=True, text=True)
            shim = Path(site.stdout.strip())
            (shim / "quickumls_simstring").mkdir(exist_ok=True)
            (shim / "quickumls_simstring" / "__init__.py").write_text(
                "from pysimstring import simstring\n")
            (shim / "leveldb.py").write_text("# stub: quickumls uses the unqlite backend\n")
        else:
            subprocess.run([*pip, *PEERS[tool]["packages"]], check=True)
        (venv / ".ok").touch()
    return python, time.perf_counter() - t0


def run_peer(tool: str, work: Path, venvs: Path, time_box: int,
             ef_construction: int = 2000) -> dict[str, Any]:
    """Install (once) and run a peer; an error or a timeout is recorded, not raised.
    ``ef_construction`` replaces scispacy's HNSW efConstruction (2000) when different."""
    out: dict[str, Any] = {"packages": PEERS[tool]["packages"],
                           "workarounds": PEERS[tool]["workarounds"]}
    if tool == "scispacy" and ef_construction != 2000:
        out["workarounds"] = [*out["workarounds"], (
            f"NOT scispacy's own index: HNSW efConstruction {ef_construction} instead of its "
            "2000, so that the build finishes on this machine (a cheaper graph; M 100 and "
            "efSearch 200 unchanged)")]
        out["ef_construction"] = ef_construction
    try:
        python, install = ensure_venv(tool, venvs)
    except subprocess.CalledProcessError as e:
        return {**out, "error": f"install failed: {e}"}
    out["install_seconds"] = round(install, 1)
    runner = work / f"{tool}_runner.py"
    runner.write_text(textwrap.dedent(SCISPACY_RUNNER if tool == "scispacy"
                                      else QUICKUMLS_RUNNER), encoding="utf-8")
    args = [str(python), str(runner), str(work)]
    if tool == "scispacy":
        args += ["50", str(ef_construction)]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=time_box)
    except subprocess.TimeoutExpired:
        return {**out, "error": f"did not finish within the time box of {time_box} s"}
    if proc.returncode != 0:
        return {**out, "error": f"exit {proc.returncode}: {proc.stderr[-1500:]}"}
    return {**out, **json.loads((work / f"{tool}_out.json").read_text(encoding="utf-8"))}


def compare(entries: list[tuple[str, str]], queries: list[str], gold: list[tuple[str, ...]],
            peers: list[str], venvs: Path, time_box: int, matcher: dict[str, Any],
            ef_construction: int = 2000) -> dict[str, Any]:
    """All tools on one dictionary; summaries without the ranked lists."""
    result: dict[str, Any] = {"dictionary_names": len(entries), "queries": len(queries),
                              "gold_mentions": len(gold)}
    with tempfile.TemporaryDirectory(prefix="hrm-peers-") as tmp:
        work = Path(tmp)
        write_inputs(work, entries, queries)
        runs = {"xlnel": run_isolated(run_ours, tmp, len(gold), matcher)}
        runs["xlnel"].update(matcher)
        for tool in peers:
            runs[tool] = run_peer(tool, work, venvs, time_box, ef_construction)
            print(f"  {tool}: {runs[tool].get('error', 'done')}", flush=True)
    for r in runs.values():
        if "ranked" in r:
            r.update(recall(r.pop("ranked")[:len(gold)], gold))
            r["queries_per_second"] = round(len(queries) / r["search_seconds"], 1)
            r["build_seconds"] = round(r["build_seconds"], 2)
            r["search_seconds"] = round(r["search_seconds"], 2)
    ours = runs["xlnel"]
    for tool, r in runs.items():
        if tool != "xlnel" and "queries_per_second" in r:
            r["ratios_xlnel_over_peer"] = {
                "queries_per_second": round(ours["queries_per_second"]
                                            / r["queries_per_second"], 2),
                "build_seconds": round(ours["build_seconds"] / r["build_seconds"], 3),
                "peak_rss_mib": round(ours["peak_rss_mib"] / r["peak_rss_mib"], 3)}
    result["tools"] = runs
    return result


def _keep_earlier(results: dict[str, Any], path: Path) -> None:
    """Copy into ``results`` the tools of the earlier result file that this run did not run;
    their ratios against xlnel are dropped, as they were measured against another xlnel run."""
    if not path.is_file():
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    earlier = data["results"]
    for part, r in results.items():
        for tool, entry in earlier.get(part, {}).get("tools", {}).items():
            if tool not in r["tools"]:
                entry = {k: v for k, v in entry.items() if k != "ratios_xlnel_over_peer"}
                r["tools"][tool] = {**entry, "from_earlier_run": data["command"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=Path, default=ROOT.parent / "shared/data/kb/mesh_names.tsv")
    ap.add_argument("--docs", type=Path,
                    default=ROOT.parent / "shared/data/bc5cdr/dev.pubtator")
    ap.add_argument("--peers", default="scispacy,quickumls")
    ap.add_argument("--synthetic", type=int, default=0,
                    help="also compare on a synthetic dictionary of this many names")
    ap.add_argument("--venvs", type=Path, default=Path("/tmp"))
    ap.add_argument("--time-box", type=int, default=3600, help="seconds per peer run")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threshold", type=float, default=0.4, help="xlnel's cosine threshold")
    ap.add_argument("--ngrams", default="1-3", help="xlnel's character n-gram sizes, MIN-MAX")
    ap.add_argument("--pad-ends", action="store_true",
                    help="xlnel's n-grams of each string with a space added at both ends")
    ap.add_argument("--only-synthetic", action="store_true",
                    help="skip the comparison on the MeSH names alone (needs --synthetic)")
    ap.add_argument("--scispacy-ef-construction", type=int, default=2000,
                    help="HNSW efConstruction of scispacy's index; 2000 is scispacy's own, "
                         "a lower value is recorded as not scispacy's own index")
    ap.add_argument("--max-queries", type=int, default=0, help="keep the first N (0 = all)")
    ap.add_argument("--name", type=result_name, default="hrm_vs_peers",
                    help="result file benchmarks/results/NAME.json")
    ap.add_argument("--keep-earlier", action="store_true",
                    help="keep the entries of tools not run now from the existing result file, "
                         "each marked with the command that produced it")
    a = ap.parse_args()
    if a.only_synthetic and not a.synthetic:
        ap.error("--only-synthetic needs --synthetic N")
    peers = [p for p in a.peers.split(",") if p]
    lo, _, hi = a.ngrams.partition("-")
    matcher = {"workers": a.workers, "threshold": a.threshold, "ngram_min": int(lo),
               "ngram_max": int(hi or lo), "pad_ends": a.pad_ends}
    queries, gold = bc5cdr_queries(a.docs)
    if a.max_queries:
        queries, gold = queries[:a.max_queries], gold[:a.max_queries]
    print(f"{len(gold):,} gold mentions, {len(queries):,} queries", flush=True)
    results: dict[str, Any] = {}
    if not a.only_synthetic:
        results["mesh"] = compare(mesh_dictionary(a.kb), queries, gold, peers, a.venvs,
                                  a.time_box, matcher, a.scispacy_ef_construction)
    if a.synthetic:
        from benchmarks.hrm_speed import synthetic_names

        # the MeSH names plus synthetic distractors up to the size asked for, so that recall
        # of the gold concepts stays meaningful
        mesh = mesh_dictionary(a.kb)
        names = synthetic_names(max(0, a.synthetic - len(mesh)))
        entries = mesh + [(f"S{i}", n) for i, n in enumerate(names)]
        del names
        results["synthetic"] = compare(entries, queries, gold, peers, a.venvs, a.time_box,
                                       matcher, a.scispacy_ef_construction)
    for part, r in results.items():
        for tool, t in r["tools"].items():
            print(f"{part} {tool}: " + json.dumps({k: v for k, v in t.items()
                                                    if k not in ("workarounds", "packages")}))
    if a.keep_earlier:
        _keep_earlier(results, RESULTS / f"{a.name}.json")
    path = write_result(a.name, results)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
