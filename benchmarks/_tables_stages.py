"""Stage and system tables: the matcher's recall, speed and memory (also against peers), the
held-out split end to end and the alternative linkers, linking throughput, the filters' speed,
the dense index and the service (rendered by ``benchmarks/tables.py``)."""

from __future__ import annotations

import shlex
from typing import Any

from benchmarks._tables_base import (
    _CAMONI,
    RESULTS,
    Row,
    _envelope,
    _load,
    _table,
    mib,
    num,
    pct,
    recalls,
)


def hrm_recall() -> str:
    """High-recall matching on the held-out Camoni posts and BC5CDR dev."""
    res = _load("accuracy.json")["results"]
    rows = []
    for key, label in [*_CAMONI.items(), ("bc5cdr", "BC5CDR dev")]:
        h = res[key]["hrm"]
        span = f"{pct(h['span']['recall'])} ({h['span']['found']:,}/{h['span']['total']:,})"
        concept = "—"
        if key == "bc5cdr":
            c = h["concept"]
            concept = f"{pct(c['recall'])} ({c['found']:,}/{c['total']:,})"
        rows.append([label, span, concept, f"{h['span']['candidates_per_span']:.1f}",
                     num(h["span"]["spans"])])
    return _table(["corpus", "HRM recall, span", "HRM recall, concept", "candidates per span",
                   "candidate spans"], rows, ["accuracy.json"])


def end_to_end() -> str:
    """End-to-end precision, recall and F1 of the shipped GBDT configs."""
    res = _load("accuracy.json")["results"]
    rows = []
    for key, label, level in [*((k, v, "span") for k, v in _CAMONI.items()),
                              ("bc5cdr", "BC5CDR dev", "concept")]:
        m, s = res[key][level], res[key]["seconds"]
        rows.append([label, level, pct(m["precision"]), pct(m["recall"]), f"**{pct(m['f1'])}**",
                     f"{s['train_s']:.0f} s + {s['link_s']:.0f} s"])
    return _table(["corpus", "level", "P", "R", "F1", "train + link"], rows, ["accuracy.json"])


def link_throughput() -> str:
    """``xlnel link`` on BC5CDR dev documents repeated, GBDT pipeline, one thread a process."""
    source = "link_throughput_2k.json"
    rows = []
    for run in _load(source)["feature_filter"]["runs"][1:]:
        label = (f"Ray local, {run['workers']} actors" if run["mode"] == "ray"
                 else f"{run['workers']} worker{'s' if run['workers'] > 1 else ''}")
        rows.append([label, num(run["documents"]), f"**{run['documents_per_second']:.2f}**",
                     f"{run['seconds'] / 60:.0f} min", mib(run["peak_tree_rss_mib"])])
    return _table(["mode", "documents", "docs/s", "wall time", "peak memory (process tree)"],
                  rows, [source])


def transformer_throughput() -> str:
    """``xlnel link`` with the cascade (cross-encoder) BC5CDR pipeline on one GPU."""
    d = _load("link_throughput_transformer_gpu.json")
    rows = [[str(r["run"]["workers"]), num(r["run"]["documents"]),
             f"**{r['run']['documents_per_second']:.2f}**", mib(r["run"]["peak_tree_rss_mib"])]
            for r in d["runs"]]
    return _table(["worker processes", "documents", "docs/s", "peak memory (process tree)"],
                  rows, ["link_throughput_transformer_gpu.json"])


def matcher_scale() -> str:
    """The TF-IDF matcher on synthetic dictionaries, against scikit-learn."""
    d = _load("hrm_speed.json")
    rows = []
    for size, r in sorted(d["xlnel"].items(), key=lambda kv: -int(kv[0])):
        rows.append([f"xlnel, {num(int(size))} names",
                     f"{num(r['spans_per_second'], 1)} / {num(r['spans_per_second_workers2'], 1)}",
                     f"{r['build_seconds']:.1f} s", mib(r["peak_rss_mib"])])
    sk = d["sklearn_subset"]
    rows.append([f"scikit-learn `cosine_similarity`, chunked, {num(sk['names'])} names",
                 num(sk["spans_per_second"], 1), "—", mib(sk["peak_rss_mib"])])
    return _table(["matcher", "spans/s (1 / 2 threads)", "build", "peak memory"], rows,
                  ["hrm_speed.json"])


def _peer_row(label: str, tool: dict[str, Any]) -> Row:
    return [label, num(tool["queries_per_second"]), f"{tool['build_seconds']:,.1f} s",
            mib(tool["peak_rss_mib"]), recalls(tool)]


_PEER_HEADER = ["tool", "queries/s", "build", "peak memory", "recall@1 / @10 / @50"]


def matcher_vs_peers_mesh() -> str:
    """xlnel, scispacy and QuickUMLS on the MeSH names with BC5CDR dev queries."""
    tools = _load("hrm_vs_peers.json")["mesh"]["tools"]
    rows = [_peer_row("xlnel (2 threads, pipeline settings)", tools["xlnel"]),
            _peer_row("scispacy 0.6 `CandidateGenerator` (efSearch 200)", tools["scispacy"]),
            _peer_row("QuickUMLS 1.4 (simstring)", tools["quickumls"])]
    return _table(_PEER_HEADER, rows, ["hrm_vs_peers.json"])


def _variant_label(tool: dict[str, Any]) -> str:
    lo, hi = tool["ngram_min"], tool["ngram_max"]
    grams = f"{lo}-grams" if lo == hi else f"{lo}–{hi}-grams"
    pad = ", `pad_ends`" if tool.get("pad_ends") else ""
    default = (lo, hi, tool["threshold"], bool(tool.get("pad_ends"))) == (1, 3, 0.4, False)
    return f"{grams}{pad}, th {tool['threshold']}" + (" (pipeline default)" if default else "")


def _variants(pattern: str, part: str) -> list[tuple[str, dict[str, Any]]]:
    found = sorted(RESULTS.glob(pattern))
    if not found:
        raise FileNotFoundError(f"no results file matches {RESULTS / pattern}")
    out = [(p.name, _load(p.name)[part]["tools"]["xlnel"]) for p in found]
    return sorted(out, key=lambda nt: (nt[1].get("pad_ends", False), -nt[1]["ngram_max"] +
                                       nt[1]["ngram_min"], -nt[1]["threshold"]))


def matcher_variants_mesh() -> str:
    """xlnel's matcher representations on MeSH (same queries as the peers table)."""
    variants = _variants("hrm_vs_peers_mesh_xlnel_*.json", "mesh")
    rows = [[_variant_label(t), num(t["queries_per_second"]), recalls(t)] for _, t in variants]
    scispacy = _load("hrm_vs_peers.json")["mesh"]["tools"]["scispacy"]
    rows.append(["scispacy 0.6 (as above)", num(scispacy["queries_per_second"]),
                 recalls(scispacy)])
    return _table(["xlnel matcher (2 threads)", "queries/s", "recall@1 / @10 / @50"], rows,
                  [n for n, _ in variants] + ["hrm_vs_peers.json"])


def matcher_vs_peers_3m() -> str:
    """Matchers at 3,000,000 names (MeSH plus synthetic distractors)."""
    variants = _variants("hrm_vs_peers_3m_xlnel_*.json", "synthetic")
    scispacy = _load("hrm_vs_peers_3m_scispacy.json")["synthetic"]["tools"]["scispacy"]
    quick = _load("hrm_vs_peers_3m.json")["synthetic"]["tools"]["quickumls"]
    rows = [_peer_row(f"xlnel, {_variant_label(t)}", t) for _, t in variants]
    rows.append(_peer_row(f"scispacy 0.6, efConstruction {scispacy['ef_construction']}",
                          scispacy))
    rows.append(_peer_row("QuickUMLS 1.4", quick))
    return _table(_PEER_HEADER, rows, [n for n, _ in variants] +
                  ["hrm_vs_peers_3m_scispacy.json", "hrm_vs_peers_3m.json"])


def cascade_host_time() -> str:
    """Host-side time per document of the cascade filter, one thread."""
    d = _load("cascade_host_time.json")
    parts = d["ms_per_document"]
    labels = {"candidates": "candidate generation", "gbdt_prefilter": "GBDT prefilter",
              "windows": "context windows", "pair_encoder": "pair tokenising",
              "batches": "batching"}
    rows = [[label, f"{parts[k]:.1f}"] for k, label in labels.items()]
    rows.append(["**host total**", f"**{d['host_ms_per_document']:.1f}**"])
    return _table(["step", "ms per document"], rows, ["cascade_host_time.json"])


def alternative_linkers() -> str:
    """Tagger and dense pipelines on Camoni diabetes (held-out 20%, span level), CPU."""
    gbdt = _load("accuracy.json")["results"]["diabetes"]
    tag = _load("tagger_accuracy.json")["results"]
    dense = {r["experiment"]: r for r in _load("dense_accuracy.json")["results"]}
    entries = [
        ("TF-IDF + GBDT (`camoni-diabetes.yaml`)", gbdt["span"], gbdt["seconds"]),
        ("tagger (e5-small + CRF) spans alone", tag["diabetes"]["tagger_alone"]["span"], None),
        ("tagger + TF-IDF + GBDT (`pipelines/tagger.yaml`)",
         tag["diabetes"]["pipeline_span"], tag["diabetes"]["seconds"]),
        ("tagger + dense (`pipelines/tagger-dense.yaml`)",
         tag["diabetes_tagger_dense"]["pipeline_span"], tag["diabetes_tagger_dense"]["seconds"]),
    ]
    e2e = dense["e2e camoni-diabetes-dense"]
    entries.append(("dense e5-small + similarity threshold (`pipelines/dense.yaml`)",
                    e2e["span"], {"train_s": e2e["train_seconds"], "link_s": e2e["link_seconds"]}))
    rows = []
    for label, m, sec in entries:
        wall = "—" if sec is None else f"{sec['train_s']:,.0f} s + {sec['link_s']:,.0f} s"
        rows.append([label, pct(m["precision"]), pct(m["recall"]), pct(m["f1"]), wall])
    return _table(["pipeline", "P", "R", "F1", "train + link"], rows,
                  ["accuracy.json", "tagger_accuracy.json", "dense_accuracy.json"])


def top_k_recall() -> str:
    """Gold concepts kept when the cross-encoder reads the top k names of each span."""
    run = _load("top_k_recall.json")["runs"]["bc5cdr"]
    total = run["by_k"][-1]["pairs"]
    rows = [[str(r["k"]), pct(r["concept_recall"]), num(r["pairs"]), pct(r["pairs"] / total)]
            for r in run["by_k"]]
    return _table(["names per span (k)", "gold concept kept (%)", "pairs", "share of pairs (%)"],
                  rows, ["top_k_recall.json"])


def filter_speed() -> str:
    """Cross-encoder scoring on one CPU thread, float32 against int8 quantisation."""
    d = _load("filter_speed.json")
    rows = [[kind, num(d["speed"][kind]["pairs_per_second"], 1),
             f"{d['accuracy'][kind]['seconds']:.0f} s", pct(d["accuracy"][kind]["span_f1"])]
            for kind in ("fp32", "int8")]
    return _table(["weights", "pairs/s", "scoring the held-out posts", "span F1"], rows,
                  ["filter_speed.json"])


GPU_SPEED_RUNS = ("filter_speed_gpu.json", "fsg_512.json", "fsg_128.json")


def filter_speed_gpu() -> str:
    """Cross-encoder scoring on a GPU in float32, bfloat16 and float16, run by run."""
    rows = []
    for run, name in enumerate(GPU_SPEED_RUNS, 1):
        env = _envelope(name.removesuffix(".json"))
        words = shlex.split(env["command"])
        repeats = words[words.index("--repeats") + 1]
        s, acc = env["results"]["speed"], env["results"]["accuracy"]
        for kind in ("fp32", "bf16", "fp16"):
            ratio = "1" if kind == "fp32" else f"{s[f'{kind}_speedup']:.2f}"
            rows.append([str(run), num(s["inference_batch_size"]), repeats, kind,
                         num(s[kind]["pairs_per_second"]), ratio, pct(acc[kind]["span_f1"])])
    return _table(["run", "batch", "best of", "format", "pairs/s", "× float32",
                   "span F1 (held-out posts)"], rows, GPU_SPEED_RUNS)


def dense_index_speed() -> str:
    """FAISS indexes on 1,000,000 synthetic 384-dimensional vectors."""
    f = _load("dense_speed.json")["faiss"]
    rows = [["flat (exact)", "—", num(f["flat"]["qps"], 1), "exact",
             f"{f['flat']['build_seconds']:,.0f} s"]]
    for nprobe, r in f["ivf"]["by_nprobe"].items():
        rows.append([f"IVF-{f['ivf']['nlist']}", f"nprobe {nprobe}", num(r["qps"], 1),
                     f"{r['recall_at_10']:.3f}", f"{f['ivf']['build_seconds']:,.0f} s"])
    for ef, r in f["hnsw"]["by_ef_search"].items():
        rows.append([f"HNSW M={f['hnsw']['M']}", f"ef_search {ef}", num(r["qps"], 1),
                     f"{r['recall_at_10']:.3f}", f"{f['hnsw']['build_seconds']:,.0f} s"])
    return _table(["index", "search setting", "queries/s", "recall@10", "build"], rows,
                  ["dense_speed.json"])


def serve_load() -> str:
    """``xlnel serve default`` under concurrent local clients (benchmarks/serve_load.py)."""
    data = _load("serve_load.json")
    rows = [[str(r["workers"]), f"{r['text']} ({r['chars']:,} chars)",
             f"**{r['requests_per_s']:.1f}**", f"{r['latency_ms']['p50']:,.0f}",
             f"{r['latency_ms']['p95']:,.0f}", f"{r['latency_ms']['p99']:,.0f}",
             str(r["failures"]), f"{r['load_average_before'][0]:.1f}"] for r in data["runs"]]
    return _table(["workers", "text", "requests/s", "p50 ms", "p95 ms", "p99 ms", "failures",
                   "load average (1 min)"], rows, ["serve_load.json"])


#: The tables of this module, by marker name (``benchmarks/tables.py`` gathers them).
TABLES = (hrm_recall, end_to_end, link_throughput, transformer_throughput, matcher_scale,
          matcher_vs_peers_mesh, matcher_variants_mesh, matcher_vs_peers_3m, cascade_host_time,
          alternative_linkers, top_k_recall, filter_speed, filter_speed_gpu, dense_index_speed,
          serve_load)
