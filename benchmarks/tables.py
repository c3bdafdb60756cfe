"""Render the result tables of README.md and docs/ from ``benchmarks/results/*.json``.

Every table in those files sits between marker comments::

    <!-- table:link_throughput -->
    ...generated...
    <!-- /table -->

``python -m benchmarks tables`` rewrites what lies between the markers; ``--check`` only
compares and exits with status 1 when a committed table differs from what the results files
give (a test runs it). Each table ends with the results files it was read from.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGES = ("README.md", "docs/*.md")
MARKER = re.compile(r"(<!-- table:(?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /table -->)",
                    re.DOTALL)

Row = Sequence[str]


def _envelope(name: str) -> dict[str, Any]:
    """The whole results file ``name`` (provenance, settings and figures)."""
    from benchmarks._common import read_result

    return read_result(name.removesuffix(".json"), RESULTS)


def _load(name: str) -> dict[str, Any]:
    """The figures (``results``) of the results file ``name``."""
    figures: dict[str, Any] = _envelope(name)["results"]
    return figures


def _table(header: Row, rows: Iterable[Row], sources: Iterable[str],
           source: str | None = "") -> str:
    """A Markdown table, then a line naming where its figures come from (``sources``: results
    files; ``source``: anything else; ``None``: no line)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    files = ", ".join([f"`benchmarks/results/{s}`" for s in sources] + ([source] if source else []))
    return "\n".join(lines) + ("\n" if source is None else f"\n\nSource: {files}.\n")


def pct(x: float) -> str:
    """A share as a percentage with one decimal (0.9615 -> ``96.2``)."""
    return f"{100 * x:.1f}"


def num(x: float, digits: int = 0) -> str:
    """A number with thousands separators."""
    return f"{x:,.{digits}f}"


def mib(x: float) -> str:
    """Memory in MiB, or GiB above 1,024 MiB."""
    return f"{x / 1024:.1f} GiB" if x >= 1024 else f"{x:.0f} MiB"


def mean_std(m: dict[str, float]) -> str:
    """``mean ± std`` with three decimals."""
    return f"{m['mean']:.3f} ± {m['std']:.3f}"


def recalls(tool: dict[str, Any]) -> str:
    """recall@1 / @10 / @50 of a matcher."""
    return " / ".join(f"{tool[f'recall@{k}']:.3f}" for k in (1, 10, 50))


_CAMONI = {"diabetes": "Camoni diabetes", "sclerosis": "Camoni sclerosis",
           "depression": "Camoni depression"}


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


def _axes(axes: dict[str, Any]) -> str:
    return ", ".join(f"`{k}` {'all' if v is None else v}" for k, v in axes.items())


_ABLATIONS = {
    "tf-vs-tfidf": "matcher weights", "metric": "matcher similarity",
    "max-words": "longest span k", "window-gbdt": "GBDT context-window features",
    "window": "cross-encoder window (CPU, embeddings frozen)",
    "window-gpu": "cross-encoder window (GPU, embeddings trained)",
    "data-size": "training documents (BC5CDR dev, concept F1)",
}


def ablations() -> str:
    """Ablations on Camoni diabetes (data size on BC5CDR), mean ± std over seeds."""
    d = _load("ablations.json")["ablations"]
    rows = []
    for name, label in _ABLATIONS.items():
        for cell in d[name]["summary"]:
            f1 = cell["concept_f1"] if name == "data-size" else cell["span_f1"]
            score = mean_std(f1) if cell["seeds"] > 1 else f"{f1['mean']:.3f}"
            rows.append([label, _axes(cell["axes"]), str(cell["seeds"]), score,
                         f"{cell['hrm_span']['mean']:.3f}"])
    return _table(["ablation", "setting", "seeds", "F1", "HRM recall (span)"], rows,
                  ["ablations.json"])


def ablations_cv() -> str:
    """The Camoni ablations by 5-fold CV, paired against the shipped configs (ablations_cv.py)."""
    rows = []
    results = _load("ablations_cv.json")["results"]
    for corpus in [c for c in _CAMONI if c in results]:
        for r in results[corpus].values():
            if not isinstance(r, dict) or "span" not in r:
                continue
            overrides = ", ".join(f"`{k}` {str(v).lower()}" for k, v in r["overrides"].items())
            rows.append([_CAMONI[corpus], r["ablation"], overrides or "shipped",
                         *_paired_cells(r["span"]), pct(r["hrm_span"]["recall"])])
    return _table(["corpus", "ablation", "setting", "P", "R", "strict span F1 [95% CI]",
                   "delta F1 [95% CI]", "p", "HRM recall (span)"], rows, ["ablations_cv.json"])


def data_size() -> str:
    """Learning curves: the shipped configs on the first N training documents (data_size.py)."""
    rows = []
    results = _load("data_size.json")["results"]
    for corpus in [c for c in ("bc5cdr", *_CAMONI) if c in results]:
        label = "BC5CDR dev" if corpus == "bc5cdr" else _CAMONI[corpus]
        levels = ("concept", "document") if corpus == "bc5cdr" else ("span",)
        for name, r in results[corpus].items():
            if (not isinstance(r, dict) or "paired_with" not in r
                    or "data.subset_seed" in r["overrides"]):  # draws: data_size_draws
                continue
            for level in levels:
                rows.append([label, name, f"{r['own_documents_mean']:.0f}",
                             f"{r['training_documents_mean']:.0f}", level,
                             *_paired_cells(r[level]),
                             "" if name == r["paired_with"] else r["paired_with"],
                             pct(r["hrm"]["concept" if corpus == "bc5cdr" else "span"])])
    return _table(["corpus", "setting", "own documents", "training documents", "level", "P", "R",
                   "F1 [95% CI]", "delta F1 [95% CI]", "p", "against", "HRM recall"], rows,
                  ["data_size.json"])


def _draw_cells(spread: dict[str, Any], seeds: list[int | None]) -> list[str]:
    """First N, the draws, their seeds, mean and range of one ``draws`` entry of data_size."""
    values = [pct(v) for v in spread["values"]]
    return [values[0], " / ".join(values[1:]), ", ".join(map(str, seeds[1:])),
            pct(spread["mean"]), pct(spread["max"] - spread["min"])]


def data_size_draws() -> str:
    """The learning curves' points and slopes on documents drawn with seeds (data_size.py)."""
    results = _load("data_size.json")["results"]
    rows = []
    for corpus in [c for c in ("bc5cdr", *_CAMONI) if c in results]:
        label = "BC5CDR dev" if corpus == "bc5cdr" else _CAMONI[corpus]
        levels = ("concept", "document") if corpus == "bc5cdr" else ("span",)
        entries = results[corpus]
        drawn = {n: r["draws"] for n, r in entries.items() if isinstance(r, dict) and "draws" in r}
        slopes = {f"F1 per doubling ({series})": d
                  for series, d in entries.get("curves_draws", {}).items()}
        for level in levels:
            for name, d in {**drawn, **slopes}.items():
                rows.append([label, level, name, *_draw_cells(d[level], d["subset_seeds"])])
    return _table(["corpus", "level", "setting", "first N", "drawn", "seeds", "mean", "range"],
                  rows, ["data_size.json"])


def r_sweep() -> str:
    """F1 against the share R of training documents given to the dictionary."""
    corpora = _load("r_sweep.json")["corpora"]
    order = ["diabetes", "sclerosis", "depression", "bc5cdr"]
    values = [cell["axes"]["dft.R"] for cell in corpora["diabetes"]["by_R"]]
    rows = []
    for key in order:
        metric = "concept_f1" if key == "bc5cdr" else "span_f1"
        best = corpora[key][f"best_R_{metric}"]["R"]
        cells = []
        for cell in corpora[key]["by_R"]:
            text = mean_std(cell[metric])
            cells.append(f"**{text}**" if cell["axes"]["dft.R"] == best else text)
        label = "BC5CDR dev (concept F1)" if key == "bc5cdr" else f"{_CAMONI[key]} (span F1)"
        rows.append([label, *cells])
    return _table(["corpus", *(f"R = {v}" for v in values)], rows, ["r_sweep.json"])


def _r_sweep_rows(name: str) -> list[list[str]]:
    """Per community and R of an ``r_sweep_cv`` results file: pooled span F1 with its interval,
    the winner and the winner's paired-bootstrap difference from this R."""
    rows = []
    for key, r in _load(name)["results"].items():
        best = r["best_R_span_f1"]
        for value, summary in r["by_R"].items():
            pooled = summary["pooled"]["span"]
            test = best["against"].get(value)
            delta = "" if test is None else (
                f"{test['paired_bootstrap']['delta_f1']:+.3f} "
                f"(p {test['paired_bootstrap']['p_value']:.3f})")
            low, high = pooled["ci"]["f1"]
            rows.append([_CAMONI[key], value, f"{pct(pooled['f1'])} [{pct(low)}, {pct(high)}]",
                         str(best["R"]) if float(value) == best["R"] else "", delta])
    return rows


def r_sweep_cv() -> str:
    """Span F1 against R by 5-fold CV: the full grid, then R = 0.1 against 0.2 everywhere,
    then the grid again with the other communities' posts training too."""
    names = ("r_sweep_cv.json", "r_sweep_cv_confirm.json", "r_sweep_cv_extra.json")
    rows = [[row[0], name.removesuffix(".json"), *row[1:]]
            for name in names for row in _r_sweep_rows(name)]
    return _table(["corpus", "run", "R", "span F1 [95% CI]", "best R", "best minus this R "
                   "(paired bootstrap)"], rows, names)


def r_sweep_cv_few() -> str:
    """Span F1 against R with N own posts and nothing else (r_sweep_cv --set ...), on two
    draws of the posts."""
    names = ("r_sweep_cv_own25.json", "r_sweep_cv_own25_draw2.json", "r_sweep_cv_own50.json",
             "r_sweep_cv_own50_draw2.json")
    rows = []
    for name in names:
        overrides = _load(name)["overrides"]
        rows += [[row[0], str(overrides["data.max_documents"]), str(overrides["data.subset_seed"]),
                  *row[1:]] for row in _r_sweep_rows(name)]
    rows.sort(key=lambda r: (list(_CAMONI.values()).index(r[0]), int(r[1]), int(r[2])))
    return _table(["corpus", "own posts", "draw (subset_seed)", "R", "span F1 [95% CI]",
                   "best R", "best minus this R (paired bootstrap)"], rows, names)


def crossfit_cv() -> str:
    """Cross-fitted DFT against DFT with a share R only (paired bootstrap, same documents)."""
    rows = []
    for corpus, by_variant in _load("crossfit_cv.json")["corpora"].items():
        first = "concept" if corpus == "bc5cdr" else "span"
        label = "BC5CDR dev" if corpus == "bc5cdr" else _CAMONI[corpus]
        for name, r in by_variant.items():
            for level in (first, "document") if corpus == "bc5cdr" else (first,):
                s = r["levels"][level]
                low, high = s["f1_ci"]
                delta = "" if name == "r-share" else (
                    f"{s['delta_f1']:+.3f} [{s['delta_f1_ci'][0]:+.3f}, "
                    f"{s['delta_f1_ci'][1]:+.3f}] (p {s['p']:.3f})")
                rows.append([label, name, str(r["dft"]["R"]), str(r["dft"]["crossfit"]), level,
                             f"{pct(s['f1'])} [{pct(low)}, {pct(high)}]", delta])
    return _table(["corpus", "variant", "R", "crossfit", "level", "F1 [95% CI]",
                   "minus r-share (paired bootstrap)"], rows, ["crossfit_cv.json"])


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


def _dash(x: float | None) -> str:
    return "–" if x is None else pct(x)


def _with_ci(r: dict[str, Any], key: str) -> str:
    """A share as a percentage, with its 95% interval when the result holds one."""
    ci = r.get(f"{key}_ci95")
    return pct(r[key]) if ci is None else f"{pct(r[key])} ({pct(ci[0])}–{pct(ci[1])})"


def adapt_table(name: str) -> str:
    """Per language and dictionary: concept coverage and accuracy@1/@k of the official labels
    (with 95% bootstrap intervals when the results file holds them)."""
    envelope = _envelope(name)
    data = {**envelope["results"], "settings": envelope["settings"]}
    k = data["settings"]["k"]
    labels = {"english": "English names (untranslated)", "adapted": "xlnel adapt",
              "e5": "multilingual-e5-small (English names)"}
    rows = []
    for lang, parts in data["results"].items():
        for key, label in labels.items():
            if key not in parts:
                continue
            r = parts[key]
            build = r.get("build", {})
            rows.append([lang, num(data["gold"][lang]["rows_evaluated"]), label,
                         _dash(r.get("concept_exact_share")), _dash(r.get("concept_fuzzy_share")),
                         _with_ci(r, "accuracy@1"), _with_ci(r, f"accuracy@{k}"),
                         num(build["wall_seconds"]) if "wall_seconds" in build else "",
                         mib(build["peak_rss_mib"]) if "peak_rss_mib" in build else ""])
            if "weighted" in r:  # the same dictionary, concepts ranked by the weighted score
                w = r["weighted"]
                rows.append([lang, num(data["gold"][lang]["rows_evaluated"]),
                             f"{label}, weighted ranking (score^{w['weight']:g})", "", "",
                             _with_ci(w, "accuracy@1"), _with_ci(w, f"accuracy@{k}"), "", ""])
            if "hybrid" in r:  # the same dictionary, plus the encoder's cosine
                h = r["hybrid"]
                rows.append([lang, num(data["gold"][lang]["rows_evaluated"]),
                             f"{label} + {h['encoder']} (hybrid, weight "
                             f"{h['encoder_weight']:g})", "", "",
                             _with_ci(h, "accuracy@1"), _with_ci(h, f"accuracy@{k}"), "", ""])
    header = ["language", "gold rows", "dictionary", "concept exact", "concept fuzzy", "acc@1",
              f"acc@{k}", "build s", "build peak memory"]
    if not any(row[-1] for row in rows):  # no build in this file
        header, rows = header[:-2], [row[:-2] for row in rows]
    return _table(header, rows, [name])


def adapt_word_order() -> str:
    """Languages without a file: the word order of ``word_order.tsv`` (as the build recorded
    it) against both orders, on the same rows (the pairing of
    ``adapt_new_language_generic.json``)."""
    name = "adapt_new_language_generic.json"
    data = _envelope(name.removesuffix(".json"))["results"]
    rows, other = [], None
    for lang, parts in data["results"].items():
        paired = parts.get("paired")
        if paired is None:
            continue
        other = paired["with"]
        adapted = parts["adapted"]
        hybrid = adapted.get("hybrid", {})
        labels = {"adapted": "xlnel adapt",
                  "hybrid": f"hybrid ({hybrid.get('encoder')}, weight "
                            f"{hybrid.get('encoder_weight', 0):g})"}
        for entry, label in labels.items():
            if entry not in paired:
                continue
            m = paired[entry]
            rows.append([lang, num(m["items"]), label, adapted["build"]["segment_order"],
                         pct(m["share_a"]), pct(m["share_b"]), _delta(m["delta"], m["delta_ci"]),
                         f"{m['b_only']} / {m['a_only']}", _p(m["p"])])
    return _table(["language", "gold rows", "ranking", "word order of the table",
                   "acc@1, both orders", "acc@1, the table's order", "Δ acc@1 [95% CI]",
                   "rows gained / lost", "p"], rows,
                  [name, *([f"{other}.json"] if other else [])])


def adapt_new_language() -> str:
    """The adapt-to-a-new-language benchmark (benchmarks/adapt_new_language.py)."""
    return adapt_table("adapt_new_language.json")


def adapt_new_language_english_hpo() -> str:
    """Untranslated English HPO names on every official label."""
    return adapt_table("adapt_new_language_english_hpo.json")


def adapt_new_language_ja_encoder() -> str:
    """Japanese alone, built with the encoder fallback (``xlnel adapt --encoder``)."""
    return adapt_table("adapt_new_language_ja_encoder.json")


def adapt_new_language_generic() -> str:
    """Every language built with the generic grammar (``xlnel adapt --generic-grammar``)."""
    return adapt_table("adapt_new_language_generic.json")


def pairs_coverage() -> str:
    """Per language: the share of the official labels' English content words (and of whole
    labels) that the word pairs translate, without and with copies."""
    data = _load("pairs_coverage.json")["languages"]
    rows = [[lang, num(r["labels"]), num(r["words"]), pct(r["word_share"]),
             pct(r["label_share"]), pct(r["copies"]["word_share"]),
             pct(r["copies"]["label_share"])] for lang, r in data.items()]
    return _table(["language", "English labels", "content words", "words translated",
                   "labels wholly translated", "words, copies counted",
                   "labels, copies counted"], rows, ["pairs_coverage.json"])


def dictionary_coverage(result: str = "dictionary_coverage.json") -> str:
    """Camoni: exact and fuzzy coverage of the distinct gold terms per community."""
    data = _load(result)
    names = list(data["dictionaries"])
    rows = []
    for community, by_dict in data["results"].items():
        first = next(iter(by_dict.values()))
        rows.append([community, num(first["texts"]),
                     *[pct(by_dict[n][f"{m}_share"]) for n in names for m in ("exact", "fuzzy")]])
    return _table(["community", "gold terms", *[f"{n} {m}" for n in names
                                                for m in ("exact", "fuzzy")]],
                  rows, [result])


def dictionary_coverage_generic() -> str:
    """Camoni: the Hebrew dictionary built with its language file against the one built with
    the generic defaults of a language without a file (each build's file, word order, and the
    glued letters and lemma rules learned from the corpus, as its record names them)."""
    names = ("dictionary_coverage.json", "dictionary_coverage_generic.json")
    runs = [_load(n) for n in names]
    labels = []
    for run in runs:
        file = str(run["build"].get("language_file", "?"))
        glued = run["build"].get("attached_letters")
        rules = run["build"].get("lemma_rules")
        labels.append(f"{'no file' if file == 'default' else Path(file).name}, "
                      f"{run['build'].get('segment_order', '?')}"
                      + (f", glued {' '.join(glued)}" if glued else "")
                      + (f", {len(rules)} lemma rules learned" if rules else ""))
    rows = []
    for community in runs[0]["results"]:
        built = [run["results"][community]["built"] for run in runs]
        rows.append([community, num(built[0]["texts"]),
                     *[pct(b[f"{m}_share"]) for b in built for m in ("exact", "fuzzy")],
                     f"{100 * (built[1]['exact_share'] - built[0]['exact_share']):+.1f}"])
    return _table(["community", "gold terms",
                   *[f"built ({label}) {m}" for label in labels for m in ("exact", "fuzzy")],
                   "Δ exact (generic minus file)"], rows, list(names))


def dictionary_e2e() -> str:
    """Camoni end to end by 5-fold CV: span F1 of each dictionary and the paired differences."""
    data = _load("dictionary_e2e.json")["results"]
    rows = []
    for community, r in data.items():
        f1 = [_f1_ci(s) for s in r["scores"].values()]
        deltas = [f"{_delta(t['delta_f1'], t['delta_f1_ci'])}, p {t['p']:.3f}"
                  for t in r["paired"].values()]
        rows.append([community, *f1, *deltas])
    first = next(iter(data.values()))
    return _table(["community", *[f"{n} F1 [95% CI]" for n in first["scores"]],
                   *[f"{pair} ΔF1 [95% CI]" for pair in first["paired"]]],
                  rows, ["dictionary_e2e.json"])


def derived_stopwords() -> str:
    """Camoni by 5-fold CV: span F1 with the curated, the derived and no stop-word list."""
    data = _load("derived_stopwords.json")["results"]
    rows = []
    for community, by_pipeline in data.items():
        for pipeline, r in by_pipeline.items():
            f1 = [_ci(r[n], bold=False) for n in ("shipped", "derived", "none")]
            deltas = [f"{_delta(t['delta_f1'], t['delta_f1_ci'])}, p {t['p']:.3f}"
                      for t in (r["derived_vs_none"], r["derived_vs_shipped"])]
            rows.append([community, pipeline, *f1, *deltas])
    return _table(["community", "filter", "curated list F1 [95% CI]", "derived list",
                   "no list", "derived − none ΔF1", "derived − curated ΔF1"], rows,
                  ["derived_stopwords.json"])


def zero_annotation() -> str:
    """Camoni by 5-fold CV: span F1 of the pipeline ``xlnel adapt`` writes, of a threshold
    chosen on annotated posts, and of the reference names in its place."""
    loaded = _load("zero_annotation.json")
    data = loaded["results"]
    names = loaded.get("adapt_names", "dictionary.tsv")  # what pipeline.yaml linked with
    variants = ("adapt", "adapt_chosen", "reference", "reference_chosen")

    def cell(r: dict[str, Any]) -> str:
        chosen = ", ".join(f"{t:.3f}" for t in sorted(set(r["thresholds"])))
        text = (f"{_f1_ci(r)} "
                f"(P {pct(r['precision'])}, R {pct(r['recall'])}; cosine ≥ {chosen})")
        if "delta_f1" in r:
            text += f"; − {r['against']} {100 * r['delta_f1']:+.1f}, p {r['p']:.3f}"
        return text

    rows = [[community, *(cell(r[v]) for v in variants)] for community, r in data.items()]
    return _table(["community", f"pipeline.yaml (built names, {names})", "built, threshold chosen",
                   "reference names", "reference, threshold chosen"], rows,
                  ["zero_annotation.json"])


def zero_annotation_everyday() -> str:
    """Camoni, every visible post: span F1 of the zero-shot pipeline linking with the built
    dictionary less its everyday one-word names, at each cut and at the cut chosen by CV."""
    data = _load("zero_annotation_everyday.json")
    tops = [str(t) for t in data["tops"]]

    def cell(r: dict[str, Any], delta: bool = True) -> str:
        text = (f"{_f1_ci(r)} "
                f"(P {pct(r['precision'])}, R {pct(r['recall'])})")
        if delta and "delta_f1" in r:
            text += f"; {100 * r['delta_f1']:+.1f}, p {r['p']:.3f}"
        return text

    rows = []
    for community, r in data["results"].items():
        picks = ", ".join(str(t) for t in sorted(set(r["chosen"]["tops"])))
        rows.append([community, *(cell(r[t], t != "0") for t in tops),
                     f"{cell(r['chosen'])} (N = {picks})"])
    rows.append(["all three", *(cell(data["pooled"][t], t != "0") for t in tops), ""])
    header = ["community", "N = 0 (dictionary.tsv)",
              *(f"N = {t}" + (" (default)" if int(t) == data["default_top"] else "")
                for t in tops[1:]),
              "N chosen by 5-fold CV"]
    return _table(header, rows, ["zero_annotation_everyday.json"])


def zero_annotation_kb() -> str:
    """Camoni before any annotation: span F1 with each knowledge-base choice."""
    data = _load("zero_annotation_kb.json")
    names = list(data["choices"])

    def cell(r: dict[str, Any], name: str) -> str:
        text = (f"{_f1_ci(r)} "
                f"(P {pct(r['precision'])}, R {pct(r['recall'])})")
        if name != names[0]:  # the others are paired against the first
            text += f"; {100 * r['delta_f1']:+.1f}, p {r['p']:.3f}"
        return text

    rows = [[c, *(cell(r[n], n) for n in names)] for c, r in data["results"].items()]
    rows.append(["all three", *(cell(data["pooled"][n], n) for n in names)])
    labels = {"hpo+mesh_names": "HPO + mesh_names.tsv",
              "hpo+mesh_typed": "HPO + MeSH C, D, F03",
              "hpo_phenotypes+mesh_typed": "HPO phenotypes + MeSH C, D, F03"}
    return _table(["community", *(labels.get(n, n) for n in names)], rows,
                  ["zero_annotation_kb.json"])


def cross_community() -> str:
    """Camoni by 5-fold CV: span F1 trained on the community's posts, and with the others'."""
    data = _load("cross_community.json")["results"]
    rows = []
    for community, r in data.items():
        own, other = r["own"], r["with_others"]
        rows.append([community, *(f"{_f1_ci(x)} "
                                  f"(P {pct(x['precision'])}, R {pct(x['recall'])})"
                                  for x in (own, other)),
                     f"{_delta(other['delta_f1'], other['delta_f1_ci'])}, p {other['p']:.3f}"])
    return _table(["community", "own posts F1 [95% CI]", "with the other communities' posts",
                   "ΔF1 [95% CI]"], rows, ["cross_community.json"])


def _ci(level: dict[str, Any], bold: bool = True) -> str:
    """A level's F1 (bold unless told otherwise) with its 95% interval."""
    low, high = level["ci"]["f1"]
    f1 = f"**{pct(level['f1'])}**" if bold else pct(level["f1"])
    return f"{f1} [{pct(low)}, {pct(high)}]"


def _protocol(block: dict[str, Any] | None) -> str:
    return "–" if not block else pct(block["mean"]["f1"])


def accuracy_cv() -> str:
    """Strict end-to-end accuracy: Camoni by 5-fold CV, BC5CDR dev; and the sampled protocol."""
    data = _load("cv_accuracy.json")["results"]
    rows = []
    for name in ("diabetes", "sclerosis", "depression"):
        if name not in data:
            continue
        r = data[name]
        mean = r["over_folds"]["span_f1"]
        rows.append([f"Camoni {name}", f"{r['folds']}-fold CV, {r['documents']} posts", "span",
                     pct(r["pooled"]["span"]["precision"]), pct(r["pooled"]["span"]["recall"]),
                     _ci(r["pooled"]["span"]),
                     f"{pct(mean['mean'])} ± {pct(mean['half_width'])}",
                     _protocol(r.get("galperin2022"))])
    if "bc5cdr" in data:
        r = data["bc5cdr"]
        for level in ("span", "concept", "document"):
            if level in r["levels"]:
                lv = r["levels"][level]
                rows.append(["BC5CDR dev", f"train → dev, {r['documents']} abstracts", level,
                             pct(lv["precision"]), pct(lv["recall"]), _ci(lv), "",
                             _protocol(r.get("galperin2022")) if level == "concept" else ""])
    if "bc5cdr-train" in data:
        r = data["bc5cdr-train"]
        for level in ("span", "concept", "document"):
            if level in r["pooled"]:
                mean = r["over_folds"][f"{level}_f1"]
                rows.append(["BC5CDR train", f"{r['folds']}-fold CV, {r['documents']} abstracts",
                             level, pct(r["pooled"][level]["precision"]),
                             pct(r["pooled"][level]["recall"]), _ci(r["pooled"][level]),
                             f"{pct(mean['mean'])} ± {pct(mean['half_width'])}",
                             _protocol(r.get("galperin2022")) if level == "concept" else ""])
    return _table(["corpus", "protocol", "level", "P", "R", "F1 [95% CI]",
                   "F1 mean over folds ± 95% t", "galperin2022 F1"], rows, ["cv_accuracy.json"])


def accuracy_bc5cdr_mesh() -> str:
    """BC5CDR dev with MeSH's entry terms cut to the annotated kinds, against the shipped KB."""
    r = _load("cv_accuracy_bc5cdr_mesh.json")["results"]["bc5cdr-mesh"]
    paired = r["paired"]
    rows = []
    for level in ("span", "concept", "document"):
        lv, pv = r["levels"][level], paired[level]
        base_f1 = pv["f1"] - pv["delta_f1"]
        rows.append([level, pct(base_f1), pct(lv["precision"]), pct(lv["recall"]), _ci(lv),
                     _delta(pv["delta_f1"], pv["delta_f1_ci"]), f"{pv['p']:.3f}"])
    return _table(["level", "bc5cdr.yaml F1", "bc5cdr-mesh.yaml P", "R", "F1 [95% CI]",
                   "ΔF1 [95% CI]", "p"], rows, ["cv_accuracy_bc5cdr_mesh.json"])


def accuracy_bc5cdr_mesh_train() -> str:
    """Both BC5CDR configs cross-validated inside train.pubtator (no dev) on the same folds, with
    the paired test of the MeSH config against bc5cdr.yaml."""
    mesh = _load("cv_accuracy_bc5cdr_mesh_train.json")["results"]["bc5cdr-mesh-train"]
    paired = _load("cv_paired_bc5cdr_mesh_train.json")["results"]["bc5cdr-train"]["levels"]
    rows = []
    for level in ("span", "concept", "document"):
        lv, mean, m = mesh["pooled"][level], mesh["over_folds"][f"{level}_f1"], paired[level]
        if abs(m["f1"] - lv["f1"]) > 1e-9:
            raise ValueError(f"cv_paired_bc5cdr_mesh_train.json: {level} F1 {m['f1']} is not "
                             f"that of cv_accuracy_bc5cdr_mesh_train.json ({lv['f1']})")
        rows.append([level, pct(m["f1"] - m["delta_f1"]), pct(lv["precision"]),
                     pct(lv["recall"]), _ci(lv), f"{pct(mean['mean'])} ± {pct(mean['half_width'])}",
                     _delta(m["delta_f1"], m["delta_f1_ci"]), _p(m["p"]),
                     _delta(m["fold_delta"]["mean"], m["fold_delta"]["ci"])])
    return _table(["level", "bc5cdr.yaml F1", "bc5cdr-mesh.yaml P", "R", "F1 [95% CI]",
                   "F1 mean over folds ± 95% t", "ΔF1 [95% CI]", "p",
                   "ΔF1 per fold, mean [95% t]"], rows,
                  ["cv_accuracy_bc5cdr_mesh_train.json", "cv_paired_bc5cdr_mesh_train.json"])


def _gpu_rows(data: dict[str, Any], cpu: dict[str, Any], label: str) -> list[Row]:
    """Rows of :func:`accuracy_cv_gpu` for the names of one results file."""
    rows: list[Row] = []
    for name, r in data.items():
        if name == "bc5cdr":
            levels, base = r["levels"], cpu.get("bc5cdr", {}).get("levels", {})
            where = f"train → dev, {r['documents']} abstracts"
            corpus = "BC5CDR dev"
        else:
            levels = {"span": r["pooled"]["span"]}
            base = {"span": cpu[name]["pooled"]["span"]} if name in cpu else {}
            where = f"{r['folds']}-fold CV, {r['documents']} posts"
            corpus = f"Camoni {name}"
        for level, lv in levels.items():
            rows.append([corpus, where, label, level, pct(lv["precision"]), pct(lv["recall"]),
                         _ci(lv), pct(base[level]["f1"]) if level in base else "–"])
    return rows


def annotation_ceiling() -> str:
    """What linking by the span's text alone reaches on Camoni, beside the shipped pipeline."""
    data = _load("annotation_ceiling.json")["results"]
    shipped = _load("cv_accuracy.json")["results"]

    def prf(r: dict[str, Any]) -> str:
        return f"{pct(r['f1'])} (P {pct(r['precision'])}, R {pct(r['recall'])})"

    rows = []
    for name, r in data.items():
        known = r["oracle_known_texts"]
        rows.append([name, num(r["gold_mentions"]), num(r["not_candidate_spans"]),
                     f"{pct(known['novel_gold_share'])} ({num(known['novel_gold'])})",
                     prf(r["oracle"]), prf(known), prf(r["cross_validated"]),
                     prf(shipped[name]["pooled"]["span"]) if name in shipped else ""])
    return _table(["community", "gold mentions", "no candidate span",
                   "held-out gold with a text training never annotated", "text oracle, all posts",
                   "text oracle, texts training annotated", "memorised training annotations (CV)",
                   "shipped pipeline (CV)"], rows,
                  ["annotation_ceiling.json", "cv_accuracy.json"])


def accuracy_cv_gpu() -> str:
    """The shipped configs with the GPU cross-encoder filter, beside the shipped GBDT."""
    cpu = _load("cv_accuracy.json")["results"]
    # the Camoni cells trained each community on its own posts (no data.extra_train): beside
    # them, the GBDT trained alike (cross_community.json's "own" column)
    own = {name: {"pooled": {"span": r["own"]}}
           for name, r in _load("cross_community.json")["results"].items()}
    rows = _gpu_rows(_load("cv_accuracy_gpu_extra.json")["results"], cpu,
                     "shipped config (other communities' posts too)")
    rows += _gpu_rows(_load("cv_accuracy_gpu.json")["results"], own,
                      "shipped config, own posts only")
    bc5 = _envelope("cv_accuracy_gpu_bc5cdr.json")
    words = shlex.split(bc5["command"])
    sets = [v for k, v in zip(words, words[1:], strict=False) if k == "--set"
            and not v.startswith("candidates.workers")]
    rows += _gpu_rows(bc5["results"]["results"], cpu, "shipped config, " + ", ".join(sets))
    return _table(["corpus", "protocol", "config", "level", "P", "R", "F1 [95% CI]",
                   "GBDT F1 (Camoni: trained alike; BC5CDR: shipped)"], rows,
                  ["cv_accuracy_gpu_extra.json", "cv_accuracy_gpu.json",
                   "cv_accuracy_gpu_bc5cdr.json", "cv_accuracy.json", "cross_community.json"])


def cv_paired_gpu_extra() -> str:
    """The GPU cross-encoder against the shipped GBDT on the same Camoni folds."""
    rows = []
    for name, r in _load("cv_paired_gpu_extra.json")["results"].items():
        m = r["levels"]["span"]
        fold = m["fold_delta"]
        rows.append([f"Camoni {name}", f"{r['folds']}-fold CV, {m['n_documents']} posts",
                     "span", *_paired_cells(m), _delta(fold["mean"], fold["ci"])])
    return _table(["corpus", "protocol", "level", "P", "R", "F1 [95% CI]",
                   "ΔF1 vs GBDT [95% CI]", "p", "ΔF1 per fold, mean [95% t]"], rows,
                  ["cv_paired_gpu_extra.json"])


def _delta(value: float, ci: Sequence[float]) -> str:
    """A difference of shares in points with its interval: ``+1.3 [-0.8, +3.3]``."""
    return f"{100 * value:+.1f} [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def _p(p: float) -> str:
    return f"{p:.3f}" if p >= 0.001 else "< 0.001"


def _paired_cells(m: dict[str, Any]) -> list[str]:
    """P, R, F1 [CI], delta F1 [CI] and p of a variant compared with the shipped config."""
    return [pct(m["precision"]), pct(m["recall"]), _f1_ci(m),
            _delta(m["delta_f1"], m["delta_f1_ci"]), _p(m["p"])]


def _delta_p(m: dict[str, Any]) -> str:
    """A variant's delta F1 with its interval and p: ``+0.2 [-0.0, +0.4], p 0.068``."""
    return f"{_delta(m['delta_f1'], m['delta_f1_ci'])}, p {_p(m['p'])}"


def _decision_variants_table(name: str) -> str:
    """Decision variants against the shipped decisions, from the results file ``name``."""
    rows = []
    for corpus, variants in _load(name)["results"].items():
        label = {"bc5cdr": "BC5CDR dev", "bc5cdr-train": "BC5CDR train (5-fold CV)"}.get(
            corpus) or _CAMONI[corpus]
        for variant, levels in variants.items():
            for level, r in levels.items():
                rows.append([label, variant, level, *_paired_cells(r)])
    return _table(["corpus", "variant", "level", "P", "R", "F1 [95% CI]",
                   "delta F1 [95% CI]", "p"], rows, [name])


def decision_variants() -> str:
    """Decision variants on the cached cells of cv_accuracy, against the shipped decisions."""
    return _decision_variants_table("decision_variants.json")


def decision_variants_camoni() -> str:
    """The decision variants on the shipped Camoni configs by 5-fold CV: delta span F1 per
    community against the shipped decisions."""
    data = _load("decision_variants_camoni.json")["results"]
    names = list(data)
    rows = [["shipped (span F1 [95% CI])", *(_f1_ci(data[n]["shipped"]["span"]) for n in names)]]
    for variant in data[names[0]]:
        if variant == "shipped":
            continue
        rows.append([variant, *(_delta_p(data[n][variant]["span"]) for n in names)])
    return _table(["variant", *(f"{_CAMONI[n]}: ΔF1 [95% CI], p" for n in names)], rows,
                  ["decision_variants_camoni.json"])


def decision_variants_bc5cdr_train() -> str:
    """The BC5CDR decisions by 5-fold CV inside the training file, without dev."""
    return _decision_variants_table("decision_variants_bc5cdr_train.json")


def decision_variants_bc5cdr_mesh_train() -> str:
    """The BC5CDR decisions on configs/bc5cdr-mesh.yaml by 5-fold CV inside the training file:
    delta F1 per level against the shipped decisions, one row a variant."""
    data = _load("decision_variants_bc5cdr_mesh_train.json")["results"]["bc5cdr-mesh-train"]
    levels = ("span", "concept", "document")
    rows = [["shipped (F1 [95% CI])", *(_f1_ci(data["shipped"][lv]) for lv in levels)]]
    rows += [[variant, *(_delta_p(by_level[lv]) for lv in levels)]
             for variant, by_level in data.items() if variant != "shipped"]
    return _table(["variant", *(f"{lv}: ΔF1 [95% CI], p" for lv in levels)], rows,
                  ["decision_variants_bc5cdr_mesh_train.json"])


def bc5cdr_errors() -> str:
    """Where the shipped BC5CDR pipeline errs on dev, at mention and document level."""
    return _bc5cdr_errors_table("bc5cdr_errors.json")


def bc5cdr_errors_mesh() -> str:
    """Where ``configs/bc5cdr-mesh.yaml`` (MeSH with entry terms) errs on dev."""
    return _bc5cdr_errors_table("bc5cdr_errors_mesh.json")


def _bc5cdr_errors_table(name: str) -> str:
    """The errors of a results file of ``bc5cdr_errors.py``, by level, class and whether the
    training documents annotated the text (mention level) or concept (document level)."""
    data = _load(name)
    rows: list[Row] = []
    for level, fn_key, fp_key in (
            ("mention (concept)", "false_negatives", "false_positives"),
            ("document", "document_false_negatives", "document_false_positives")):
        counts: dict[tuple[str, str], dict[str, int]] = {}
        for key, n in data.get(fn_key, {}).items():
            typ, cls, where = key.split("/")
            counts.setdefault((f"missed {typ}", cls), {})[where.split("_")[0]] = n
        for key, n in data.get(fp_key, {}).items():
            cls, _, where = key.partition("/")
            counts.setdefault(("wrong", cls), {})[where.split("_")[0] if where else "all"] = n
        for (kind, cls), by in counts.items():
            known, new = by.get("train", 0), by.get("new", 0)
            total = sum(by.values())
            rows.append([level, kind, cls, str(known) if "all" not in by else "",
                         str(new) if "all" not in by else "", str(total)])
    rows.sort(key=lambda r: (r[0] != "mention (concept)", r[1], -int(r[5])))
    return _table(["level", "error", "class", "known in training", "new", "all"], rows,
                  [name])


#: The results files of ``entity_typing.py`` and the label of their rows.
_TYPING = (("entity_typing.json", "bc5cdr", "BC5CDR dev (train -> dev)"),
           ("entity_typing_bc5cdr_train.json", "bc5cdr-train", "BC5CDR train (5-fold CV)"),
           ("entity_typing_camoni.json", "diabetes", "Camoni diabetes (5-fold CV)"),
           ("entity_typing_camoni.json", "sclerosis", "Camoni sclerosis (5-fold CV)"),
           ("entity_typing_camoni.json", "depression", "Camoni depression (5-fold CV)"))


def _f1_ci(scores: dict[str, Any]) -> str:
    """F1 with its interval, from an entry with ``f1`` and ``f1_ci``: ``83.3 [81.8, 84.5]``."""
    low, high = scores["f1_ci"]
    return f"{pct(scores['f1'])} [{pct(low)}, {pct(high)}]"


def entity_typing() -> str:
    """How often the links' entity types are right, and the strict scores with types."""
    rows = []
    for name, corpus, label in _TYPING:
        r = _load(name)["results"][corpus]
        acc, levels = r["type_accuracy"], r["levels"]
        level = "concept" if "concept" in levels else "span"
        rows.append([label, num(acc["links"]), f"**{pct(acc['share'])}**",
                     f"{pct(acc['concept']['share'])} ({num(acc['concept']['links'])})"
                     if acc["concept"]["links"] else "–",
                     f"{pct(acc['words']['share'])} ({num(acc['words']['links'])})",
                     pct(acc["majority_guess_share"]), level,
                     _f1_ci(levels[level]), _f1_ci(levels[f"{level}+type"])])
    return _table(["cell", "links at gold offsets", "type right", "by the concept (links)",
                   "by the words (links)", "constant guess", "level", "F1 without types",
                   "F1 with types"], rows, sorted({n for n, _, _ in _TYPING}))


def _reference_figures() -> list[dict[str, Any]]:
    """The published figures of ``benchmarks/reference_figures.json``."""
    path = ROOT / "benchmarks" / "reference_figures.json"
    figures: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["figures"]
    return figures


def entity_typing_by_type() -> str:
    """The BioCreative document-level measure per type, with the links' own types."""
    # the published BC5CDR document-level figures, one per type (named in the system)
    anchors = {typ: f["f1"] for f in _reference_figures() for typ in ("Chemical", "Disease")
               if f["corpus"] == "BC5CDR" and f["measure"].startswith("document-level")
               and ("chemical" if typ == "Chemical" else "disease") in f["system"].lower()}
    rows = []
    for name, corpus, label in _TYPING[:2]:
        r = _load(name)["results"][corpus]["by_type"]
        for typ in sorted(anchors):
            own, gold = r["document"][typ], r["document_gold_types"][typ]
            mention = r["concept"][typ]
            rows.append([label, typ, pct(mention["f1"]), pct(own["precision"]),
                         pct(own["recall"]), f"**{pct(own['f1'])}**", pct(gold["f1"]),
                         pct(anchors[typ])])
    return _table(["cell", "type", "mention-level concept F1", "document P", "document R",
                   "document F1, own types", "document F1, gold types",
                   "literature (official test set)"], rows,
                  ["entity_typing.json", "entity_typing_bc5cdr_train.json"],
                  "`benchmarks/reference_figures.json` (TaggerOne chemicals; best CDR disease "
                  "team)")


def _filter_variants_table(name: str) -> str:
    """Filter options on BC5CDR dev, paired against the shipped config, from ``name``."""
    rows = []
    for variant, r in _load(name)["results"].items():
        options = ", ".join(f"{k}: {str(v).lower()}" for k, v in r["options"].items())
        for level in ("span", "concept", "document"):
            rows.append([variant, options, level, *_paired_cells(r[level])])
    return _table(["variant", "filter.options", "level", "P", "R", "F1 [95% CI]",
                   "delta F1 [95% CI]", "p"], rows, [name])


def _filter_variants_camoni_table(name: str) -> str:
    """Filter options on Camoni by 5-fold CV, strict span level, paired against the shipped
    configs, from ``name``."""
    rows = []
    for corpus, entry in _load(name)["results"].items():
        for variant, r in entry.items():
            if not isinstance(r, dict) or "span" not in r:
                continue
            rows.append([_CAMONI[corpus], variant, *_paired_cells(r["span"])])
    return _table(["corpus", "variant", "P", "R", "strict span F1 [95% CI]",
                   "delta F1 [95% CI]", "p"], rows, [name])


def filter_variants() -> str:
    """Filter options on BC5CDR dev against the config without the lexical features
    (filter_variants.py)."""
    return _filter_variants_table("filter_variants.json")


def filter_variants_ngrams() -> str:
    """The n-gram priors on BC5CDR dev against the config with the lexical features and
    without the concept kinds."""
    return _filter_variants_table("filter_variants_ngrams.json")


def filter_variants_camoni() -> str:
    """Filter options on Camoni by 5-fold CV (filter_variants.py --camoni)."""
    return _filter_variants_camoni_table("filter_variants_camoni.json")


def filter_variants_camoni_trees() -> str:
    """The gradient-boosted trees' settings on Camoni by 5-fold CV."""
    return _filter_variants_camoni_table("filter_variants_camoni_trees.json")


def filter_variants_camoni_extra() -> str:
    """The extended features on Camoni by 5-fold CV, the other communities' posts training."""
    return _filter_variants_camoni_table("filter_variants_camoni_extra.json")


def filter_variants_camoni_concepts() -> str:
    """The concept features on Camoni by 5-fold CV, the other communities' posts training."""
    return _filter_variants_camoni_table("filter_variants_camoni_concepts.json")


def filter_variants_camoni_extra_more() -> str:
    """Lexical features, n-gram priors and concept kinds on Camoni by 5-fold CV, the other
    communities' posts training."""
    return _filter_variants_camoni_table("filter_variants_camoni_extra_more.json")


def filter_variants_camoni_extra_tagger() -> str:
    """The sequence-tagger features on Camoni by 5-fold CV, the other communities' posts
    training."""
    return _filter_variants_camoni_table("filter_variants_camoni_extra_tagger.json")


def filter_variants_camoni_extra_encoder() -> str:
    """Frozen-encoder features on Camoni by 5-fold CV, the other communities' posts
    training."""
    return _filter_variants_camoni_table("filter_variants_camoni_extra_encoder.json")


def filter_variants_camoni_extra_trees() -> str:
    """The gradient-boosted trees' settings on Camoni by 5-fold CV, the other communities'
    posts training."""
    return _filter_variants_camoni_table("filter_variants_camoni_extra_trees.json")


def filter_variants_camoni_ngrams() -> str:
    """The n-gram priors on Camoni by 5-fold CV."""
    return _filter_variants_camoni_table("filter_variants_camoni_ngrams.json")


def filter_variants_kinds() -> str:
    """The concept-kind feature on BC5CDR dev against the config with it and the n-gram
    priors off."""
    return _filter_variants_table("filter_variants_kinds.json")


def filter_variants_kinds_ngrams() -> str:
    """The concept-kind feature with the n-gram priors on BC5CDR dev against the config with
    both off (the shipped config turns both on)."""
    return _filter_variants_table("filter_variants_kinds_ngrams.json")


def filter_variants_mesh_concepts() -> str:
    """The concept priors on BC5CDR dev with configs/bc5cdr-mesh.yaml, against that config."""
    return _filter_variants_table("filter_variants_mesh_concepts.json")


def filter_variants_camoni_kinds() -> str:
    """The concept-kind feature on Camoni by 5-fold CV."""
    return _filter_variants_camoni_table("filter_variants_camoni_kinds.json")


def filter_variants_camoni_kinds_ngrams() -> str:
    """The concept-kind feature with the n-gram priors on Camoni by 5-fold CV."""
    return _filter_variants_camoni_table("filter_variants_camoni_kinds_ngrams.json")


def filter_variants_tagger() -> str:
    """The CRF tagger features on BC5CDR dev against the config without them (the shipped
    config turns them on)."""
    return _filter_variants_table("filter_variants_tagger.json")


def filter_variants_camoni_tagger() -> str:
    """The CRF tagger features on Camoni by 5-fold CV."""
    return _filter_variants_camoni_table("filter_variants_camoni_tagger.json")


def filter_variants_encoder() -> str:
    """The frozen-encoder features on BC5CDR dev against the shipped config (without them)."""
    return _filter_variants_table("filter_variants_encoder.json")


def reference_figures() -> str:
    """Published figures of other systems, each with the measure it uses."""
    rows = [[f["corpus"], f["system"], f["measure"], pct(f["f1"])] for f in _reference_figures()]
    return _table(["corpus", "system", "measure", "F1"], rows, [],
                  "`benchmarks/reference_figures.json` (published figures, cited)")


def protocol_bc5cdr() -> str:
    """One BC5CDR pipeline scored by the sampled protocol and end to end (protocol_scores.py)."""
    data = _load("protocol_bc5cdr-dev.json")
    first = data["galperin2022"]["by_seed"][0]
    f1s = [r["f1"] for r in data["galperin2022"]["by_seed"]]
    rows = []
    for key, label in (("galperin2022", f"`galperin2022` sample ({num(first['positives'])} "
                        f"positives, {num(first['negatives'])} negatives, "
                        f"{num(first['unreached'])} unreached; F1 {pct(min(f1s))}–"
                        f"{pct(max(f1s))} over the seeds)"),
                       ("galperin2022_context_score",
                        "same, positives keeping their context candidate's matcher score")):
        m = data[key]["mean"]
        rows.append([label, pct(m["precision"]), pct(m["recall"]), f"**{pct(m['f1'])}**"])
    for level, label in (("concept", "end to end, concept level (strict offsets and concept)"),
                         ("span", "end to end, span level (strict offsets)")):
        m = data["end_to_end"][level]
        rows.append([label, pct(m["precision"]), pct(m["recall"]), f"**{pct(m['f1'])}**"])
    return _table(["measure", "P", "R", "F1"], rows, ["protocol_bc5cdr-dev.json"])


def config_reference() -> str:
    """Every key of a pipeline config with its type, default and meaning."""
    from benchmarks._config_tables import config_reference as table

    return table()


def options_reference() -> str:
    """The ``options`` of each registered stage that takes some."""
    from benchmarks._config_tables import options_reference as table

    return table()


TABLES: dict[str, Callable[[], str]] = {
    f.__name__: f for f in (hrm_recall, end_to_end, link_throughput, transformer_throughput,
                            matcher_scale,
                            matcher_vs_peers_mesh, matcher_variants_mesh, matcher_vs_peers_3m,
                            ablations, ablations_cv, data_size, data_size_draws, r_sweep,
                            r_sweep_cv, r_sweep_cv_few, crossfit_cv,
                            cascade_host_time,
                            alternative_linkers,
                            top_k_recall, filter_speed, filter_speed_gpu, dense_index_speed,
                            config_reference,
                            options_reference, serve_load, adapt_new_language,
                            adapt_new_language_english_hpo,
                            adapt_new_language_ja_encoder, adapt_new_language_generic,
                            adapt_word_order,
                            pairs_coverage,
                            dictionary_coverage, dictionary_coverage_generic, dictionary_e2e,
                            derived_stopwords, zero_annotation, zero_annotation_everyday,
                            cross_community,
                            accuracy_cv, accuracy_bc5cdr_mesh, accuracy_bc5cdr_mesh_train,
                            annotation_ceiling,
                            accuracy_cv_gpu, zero_annotation_kb,
                            cv_paired_gpu_extra,
                            decision_variants, decision_variants_bc5cdr_train,
                            decision_variants_bc5cdr_mesh_train,
                            decision_variants_camoni, filter_variants, bc5cdr_errors,
                            bc5cdr_errors_mesh,
                            entity_typing, entity_typing_by_type,
                            filter_variants_camoni, filter_variants_camoni_trees,
                            filter_variants_camoni_extra, filter_variants_camoni_concepts,
                            filter_variants_camoni_extra_more,
                            filter_variants_camoni_extra_tagger,
                            filter_variants_camoni_extra_encoder,
                            filter_variants_camoni_extra_trees,
                            filter_variants_ngrams,
                            filter_variants_camoni_ngrams,
                            filter_variants_kinds, filter_variants_camoni_kinds,
                            filter_variants_kinds_ngrams, filter_variants_camoni_kinds_ngrams,
                            filter_variants_mesh_concepts,
                            filter_variants_tagger, filter_variants_camoni_tagger,
                            filter_variants_encoder, reference_figures,
                            protocol_bc5cdr)
}


def render(text: str, where: str) -> str:
    """``text`` with every marked table and figure (``benchmarks/_figures.py``) regenerated.

    Raises:
        KeyError: A marker names no known table, or a figure an unknown path or format.
    """
    def one(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in TABLES:
            raise KeyError(f"{where}: unknown table {name!r}; known: {', '.join(TABLES)}")
        return m.group(1) + TABLES[name]() + m.group(4)

    from benchmarks._figures import render_figures

    return render_figures(MARKER.sub(one, text), where, RESULTS)


def pages(root: Path = ROOT) -> list[Path]:
    """The Markdown files whose tables are generated."""
    out: list[Path] = []
    for pattern in PAGES:
        out += sorted(root.glob(pattern))
    return out


def main(argv: list[str] | None = None) -> int:
    """Regenerate (or with ``--check`` compare) the tables; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="Exit 1 if a committed table differs from the results files.")
    args = ap.parse_args(argv)
    stale = []
    for path in pages():
        text = path.read_text(encoding="utf-8")
        new = render(text, str(path.relative_to(ROOT)))
        if new != text:
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"tables out of date in {', '.join(stale)}; run python -m benchmarks tables",
              file=sys.stderr)
        return 1
    for name in stale:
        print(f"updated {name}")
    return 0


if __name__ == "__main__":
    if not __package__:  # run as a file, python benchmarks/tables.py: run it as the module
        sys.exit(subprocess.call([sys.executable, "-m", "benchmarks.tables", *sys.argv[1:]],
                                 cwd=ROOT))
    sys.exit(main())
