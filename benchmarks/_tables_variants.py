"""Variant tables: decision-time variants, BC5CDR error classes, filter feature variants (rendered
by ``benchmarks/tables.py``)."""

from __future__ import annotations

from benchmarks._tables_base import (
    _CAMONI,
    Row,
    _delta_p,
    _f1_ci,
    _load,
    _paired_cells,
    _table,
)


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


def filter_variants_camoni_balanced_bag() -> str:
    """The balanced bag of the MeSH config on Camoni by 5-fold CV, against the configs."""
    return _filter_variants_camoni_table("filter_variants_camoni_balanced_bag.json")


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


def filter_variants_camoni_edits() -> str:
    """The edit prior between a span and its name on Camoni by 5-fold CV, the other
    communities' posts training."""
    return _filter_variants_camoni_table("filter_variants_camoni_edits.json")


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


#: The tables of this module, by marker name (``benchmarks/tables.py`` gathers them).
TABLES = (decision_variants, decision_variants_bc5cdr_train, decision_variants_bc5cdr_mesh_train,
          decision_variants_camoni, filter_variants, bc5cdr_errors, bc5cdr_errors_mesh,
          filter_variants_camoni, filter_variants_camoni_trees, filter_variants_camoni_extra,
          filter_variants_camoni_concepts, filter_variants_camoni_extra_more,
          filter_variants_camoni_extra_tagger, filter_variants_camoni_extra_encoder,
          filter_variants_camoni_extra_trees, filter_variants_camoni_balanced_bag,
          filter_variants_camoni_edits,
          filter_variants_ngrams,
          filter_variants_camoni_ngrams, filter_variants_kinds, filter_variants_camoni_kinds,
          filter_variants_kinds_ngrams, filter_variants_camoni_kinds_ngrams,
          filter_variants_mesh_concepts, filter_variants_tagger, filter_variants_camoni_tagger,
          filter_variants_encoder)
