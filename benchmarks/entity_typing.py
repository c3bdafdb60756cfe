"""Entity types of the shipped pipelines' links (``linker.entity_types``); writes
entity_typing.json.

The cells of ``cv_accuracy.py`` come back from the stage cache (BC5CDR train -> dev; with
``bc5cdr-train`` the 5-fold CV inside ``train.pubtator``; the Camoni communities by 5-fold CV),
their links are made with the config's decisions, and each cell's
:class:`xlnel.linkers.entity_types.EntityTyper`, fitted on the cell's training documents, types
them, as ``xlnel train`` does. Reported, pooled over the cells' test documents:

- ``type_accuracy``: of the links at the exact offsets of a typed gold mention, the share whose
  type is the gold one, in all and per evidence (``concept``: the concept's training
  annotations; ``words``: the n-gram model), beside the share a constant guess of the most
  annotated training type gets;
- ``levels``: strict scores without types (``span``; BC5CDR also ``concept``) and with them
  (the evaluation levels ``span+type``, ``concept+type``: a link counts only with the gold
  mention's type too), with 95% document bootstrap intervals;
- ``by_type``: per gold type, mention-level scores (BC5CDR: concept, Camoni: span; false
  positives under the link's predicted type) and, for BC5CDR, the document-level BioCreative
  measure per type with the predicted types (``document``) and with every link given the gold
  types of its concept in the document (``document_gold_types``, what an untyped linker is
  scored with).

    python -m benchmarks entity_typing [--cache DIR] [--name RESULT] [NAME ...]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import write_result
from benchmarks.decision_variants import add_cell_arguments, cells
from xlnel.evaluation import bootstrap_counts, document_counts, evaluate_by_type
from xlnel.experiments.stages import CellStages, StageCache, TrainingData
from xlnel.linkers.entity_types import EntityTyper
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.types import Document

LEVELS = ("span", "concept")


def type_accuracy(gold: list[Document], pred: list[Document], typer_evidence: list[list[str]],
                  majority: list[str]) -> dict[str, Any]:
    """Type accuracy of the links at the offsets of a typed gold mention (see the module doc).

    ``typer_evidence`` gives, per document, the evidence of each link; ``majority`` the most
    annotated training type of each document's cell.
    """
    counts: Counter[str] = Counter()
    for g, p, evidence, guess in zip(gold, pred, typer_evidence, majority, strict=True):
        types = {(e.start, e.end): e.type for e in g.entities if e.type}
        for link, how in zip(p.entities, evidence, strict=True):
            want = types.get((link.start, link.end))
            if want is None:
                continue
            counts["n"] += 1
            counts[f"n_{how}"] += 1
            counts["majority_correct"] += guess == want
            if link.type == want:
                counts["correct"] += 1
                counts[f"correct_{how}"] += 1
    share = {k: round(counts[f"correct{s}"] / counts[f"n{s}"], 4) if counts[f"n{s}"] else None
             for k, s in (("all", ""), ("concept", "_concept"), ("words", "_words"))}
    return {"links": counts["n"], "correct": counts["correct"], "share": share["all"],
            "concept": {"links": counts["n_concept"], "share": share["concept"]},
            "words": {"links": counts["n_words"], "share": share["words"]},
            "majority_guess_share": round(counts["majority_correct"] / counts["n"], 4)
            if counts["n"] else None}


def _scores(counts: np.ndarray) -> dict[str, Any]:
    ci = bootstrap_counts(counts, seed=0)
    return {**ci.scores.to_dict(), "f1_ci": list(ci.f1_ci)}


def _by_type(gold: list[Document], pred: list[Document], level: str) -> dict[str, Any]:
    return {t: s.to_dict() for t, s in sorted(evaluate_by_type(gold, pred, level).items())}


def run(corpus: str, cache: Path) -> dict[str, Any]:
    """The typed links of the cached cells of ``corpus`` (see the module doc)."""
    gold: list[Document] = []
    pred: list[Document] = []
    untyped: list[Document] = []
    evidence: list[list[str]] = []
    majority: list[str] = []
    data = TrainingData()
    for cfg in cells(corpus):
        stages = CellStages(cfg, StageCache(cache), data)
        docs, t = stages.test_documents(), stages.threshold()
        train = stages.train_documents()
        lexicon = AnnotationLexicon.fit(train, cfg.lang)
        typer = EntityTyper.fit(train, cfg.lang)
        if typer is None:
            raise ValueError(f"{corpus}: the training documents have no entity types")
        concepts = data.concepts(cfg)
        # long documents window by window, as xlnel link links them
        for d, links in zip(docs, stages.test_links(cfg.linker, t, lexicon), strict=True):
            linked = concepts.describe(links)
            found = [typer.type_of(x.text, x.concept_id, x.concept_name) for x in linked.entities]
            gold.append(d)
            untyped.append(linked)
            pred.append(replace(linked, entities=tuple(
                replace(x, type=kind) for x, (kind, _) in zip(linked.entities, found,
                                                             strict=True))))
            evidence.append([how for _, how in found])
            majority.append(typer.types[0])
    # the Camoni configs link to the reference list's names, not to the gold CUIs: span only
    with_ids = corpus.startswith("bc5cdr")
    levels = list(LEVELS) if with_ids else ["span"]
    out: dict[str, Any] = {
        "documents": len(gold),
        "type_accuracy": type_accuracy(gold, pred, evidence, majority),
        "levels": {**{level: _scores(document_counts(gold, pred, level)) for level in levels},
                   **{f"{level}+type": _scores(document_counts(gold, pred, f"{level}+type"))
                      for level in levels}},
        "by_type": {levels[-1]: _by_type(gold, pred, levels[-1])},
    }
    if with_ids:
        out["by_type"]["document"] = _by_type(gold, pred, "document")
        out["by_type"]["document_gold_types"] = _by_type(gold, untyped, "document")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_cell_arguments(parser, "entity_typing")
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = {name: run(name, args.cache) for name in args.names}
    for name, r in results.items():
        print(name, r["type_accuracy"]["share"], r["levels"], flush=True)
    write_result(args.name, {
        "protocol": "the cells of cv_accuracy.py from the stage cache, linked with the config's "
                    "decisions and typed by an EntityTyper fitted on each cell's training "
                    "documents",
        "results": results, "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
