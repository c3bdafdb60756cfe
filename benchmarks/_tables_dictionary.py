"""Dictionary tables: adapting to a new language, coverage, end to end with built dictionaries,
zero annotation (rendered by ``benchmarks/tables.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks._tables_base import (
    _ci,
    _dash,
    _delta,
    _envelope,
    _f1_ci,
    _load,
    _p,
    _table,
    _with_ci,
    mib,
    num,
    pct,
)


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
            extra = {}  # the same dictionary ranked otherwise: accuracies only
            if "weighted" in r:
                w = r["weighted"]
                extra[f"{label}, weighted ranking (score^{w['weight']:g})"] = w
            if "words" in r:
                w = r["words"]
                extra[f"{label}, words ranking (+{w['words_weight']:g} word overlap)"] = w
            if "hybrid" in r:
                h = r["hybrid"]
                extra[f"{label} + {h['encoder']} (hybrid, weight {h['encoder_weight']:g})"] = h
            if "forms" in r:  # names and labels without stop words and accents
                f = r["forms"]
                form = ", lookup form (stop words dropped, accents folded)"
                extra[f"{label}{form}"] = f
                if "hybrid" in f:
                    extra[f"{label} + {f['hybrid']['encoder']} (hybrid){form}"] = f["hybrid"]
            rows.extend([lang, num(data["gold"][lang]["rows_evaluated"]), text, "", "",
                         _with_ci(e, "accuracy@1"), _with_ci(e, f"accuracy@{k}"), "", ""]
                        for text, e in extra.items())
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


#: The tables of this module, by marker name (``benchmarks/tables.py`` gathers them).
TABLES = (adapt_new_language, adapt_new_language_english_hpo, adapt_new_language_ja_encoder,
          adapt_new_language_generic, adapt_word_order, pairs_coverage, dictionary_coverage,
          dictionary_coverage_generic, dictionary_e2e, derived_stopwords, zero_annotation,
          zero_annotation_everyday, zero_annotation_kb)
