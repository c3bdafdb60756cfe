"""Accuracy tables: cross-validated scores, ablations, data size, R sweeps, entity typing, the
reference figures (rendered by ``benchmarks/tables.py``)."""

from __future__ import annotations

import json
import shlex
from typing import Any

from benchmarks._tables_base import (
    _CAMONI,
    ROOT,
    Row,
    _axes,
    _ci,
    _delta,
    _envelope,
    _f1_ci,
    _load,
    _p,
    _paired_cells,
    _protocol,
    _table,
    mean_std,
    num,
    pct,
)

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


#: The results files of ``entity_typing.py`` and the label of their rows.
_TYPING = (("entity_typing.json", "bc5cdr", "BC5CDR dev (train -> dev)"),
           ("entity_typing_bc5cdr_train.json", "bc5cdr-train", "BC5CDR train (5-fold CV)"),
           ("entity_typing_camoni.json", "diabetes", "Camoni diabetes (5-fold CV)"),
           ("entity_typing_camoni.json", "sclerosis", "Camoni sclerosis (5-fold CV)"),
           ("entity_typing_camoni.json", "depression", "Camoni depression (5-fold CV)"))


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


#: The tables of this module, by marker name (``benchmarks/tables.py`` gathers them).
TABLES = (ablations, ablations_cv, data_size, data_size_draws, r_sweep, r_sweep_cv, r_sweep_cv_few,
          crossfit_cv, cross_community, accuracy_cv, accuracy_bc5cdr_mesh,
          accuracy_bc5cdr_mesh_train, annotation_ceiling, accuracy_cv_gpu, cv_paired_gpu_extra,
          entity_typing, entity_typing_by_type, reference_figures, protocol_bc5cdr)
