"""Where the shipped BC5CDR pipeline loses mention-level concept F1, per entity type.

The cell of ``cv_accuracy.py`` (train -> dev) comes back from the stage cache; its links are
made with the config's decisions. Every missed gold mention (with a concept id) and every
wrong link is put in one class, and split by whether its normalised text was annotated in the
training documents (``train_text``) or not (``new_text``):

false negatives: ``wrong_concept`` (a link at the exact offsets, another concept),
``overlap_lost`` (the gold concept's candidate passed the threshold, an overlapping span won),
``boundary`` (a link overlaps with other offsets), ``unseen_span`` (no candidate at the
offsets), ``unseen_concept`` (candidates at the offsets, none of the gold concept: a high-recall
matching miss), ``filtered`` (the gold concept's candidate scored below the threshold);
false positives: ``wrong_concept``, ``boundary``, ``no_gold`` (no gold mention overlaps).

At the document level (the BioCreative V CDR measure), every missed (abstract, concept) pair
is put in one class, split by whether the training documents annotated the concept
(``train_concept``) or not (``new_concept``): ``composite`` (its every gold mention is a
composite, linked to several concepts), ``other_concept`` (a link at the exact offsets of one
of its mentions, with another concept), ``boundary`` (a link overlaps one of its mentions),
``unlinked`` (no link touches any of them); every wrong (abstract, concept) pair is
``overlaps_gold`` (one of its links overlaps a gold mention) or ``no_gold``.

``missed_outside_kb`` counts, per level and entity type, the misses whose gold concept the
pipeline cannot output at all: an id that is neither in the config's KBs nor annotated in the
training documents (the corpus's MeSH version names some chemicals by supplementary concepts
that the bundled MeSH has made descriptors of).

``--config bc5cdr-mesh`` classifies the errors of ``configs/bc5cdr-mesh.yaml`` instead (MeSH
with entry terms, see ``cv_accuracy.py``; its tables are fetched first, :mod:`benchmarks._mesh`);
``--name`` names the results file.

    python -m benchmarks bc5cdr_errors [--cache DIR] [--config NAME] [--name RESULT]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks._common import result_name, write_result
from benchmarks._mesh import fetch_for
from benchmarks.cv_accuracy import BC5CDR_DEV, SEED
from xlnel.experiments.runner import plan_cells
from xlnel.experiments.stages import CellStages, StageCache, TrainingData
from xlnel.io import load_kb
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.normalization import normalize_string
from xlnel.types import Candidate, Document, Link


def _fn_class(g: Link, pred: dict[tuple[int, int], Link], links: tuple[Link, ...],
              best: dict[tuple[int, int, str], float], spans: set[tuple[int, int]],
              threshold: float) -> str:
    top = max((best.get((g.start, g.end, cid), -1.0) for cid in g.concept_ids), default=-1.0)
    if (g.start, g.end) in pred:
        return "wrong_concept"
    if top >= threshold:
        return "overlap_lost"
    if any(p.start < g.end and g.start < p.end for p in links):
        return "boundary"
    if top < 0:
        return "unseen_concept" if (g.start, g.end) in spans else "unseen_span"
    return "filtered"


def missed_mentions(gold: Document, pred: Document) -> list[Link]:
    """The gold mentions with a concept id that no link has at their offsets with one of
    their ids (the mention-level false negatives)."""
    by_offsets = {(p.start, p.end): p for p in pred.entities}
    out = []
    for g in gold.entities:
        p = by_offsets.get((g.start, g.end))
        if g.concept_ids and not (p is not None and p.concept_ids[0] in g.concept_ids):
            out.append(g)
    return out


def missed_concepts(gold: Document, pred: Document) -> list[tuple[str, list[Link]]]:
    """The document's gold concept ids that no link carries, each with its mentions (the
    document-level false negatives)."""
    return _unmatched_ids(gold, pred)


def _unmatched_ids(have: Document, other: Document) -> list[tuple[str, list[Link]]]:
    """The concept ids of ``have``'s mentions that none of ``other``'s carries, each with the
    mentions of ``have`` that carry it."""
    # the concept ids as the readers give them and the document level counts them: a composite
    # "A|B" is split, a mention without an id has none
    ids = {c for g in have.entities for c in g.concept_ids}
    ids -= {c for p in other.entities for c in p.concept_ids}
    return [(cid, [g for g in have.entities if cid in g.concept_ids]) for cid in sorted(ids)]


def count_absent(gold: Document, pred: Document, reachable: set[str],
                 counts: dict[str, Counter[str]]) -> None:
    """Count the missed mentions and (abstract, concept) pairs, by entity type, none of whose
    concept ids the pipeline can output: neither a KB concept nor one the training documents
    annotate (ids of another MeSH version)."""
    for g in missed_mentions(gold, pred):
        if not reachable.intersection(g.concept_ids):
            counts["mention"][g.type or "untyped"] += 1
    for cid, mentions in missed_concepts(gold, pred):
        if cid not in reachable:
            counts["document"][mentions[0].type or "untyped"] += 1


def classify(gold: Document, cands: list[Candidate], scores: Any, pred: Document,
             threshold: float, known: set[str], fn: Counter[str], fp: Counter[str]) -> None:
    """Count the errors of one document into ``fn`` and ``fp`` (keys ``type/class/seen``)."""
    best: dict[tuple[int, int, str], float] = {}
    for c, s in zip(cands, scores.tolist(), strict=True):
        key = (c.span.start, c.span.end, c.concept_id)
        best[key] = max(best.get(key, -1.0), s)
    spans = {(c.span.start, c.span.end) for c in cands}
    by_offsets = {(p.start, p.end): p for p in pred.entities}
    for g in missed_mentions(gold, pred):
        seen = "train_text" if normalize_string(g.text) in known else "new_text"
        cls = _fn_class(g, by_offsets, pred.entities, best, spans, threshold)
        fn[f"{g.type}/{cls}/{seen}"] += 1
    golds = {(g.start, g.end): g for g in gold.entities}
    for p in pred.entities:
        hit = golds.get((p.start, p.end))
        if hit is not None and (not hit.concept_ids or p.concept_ids[0] in hit.concept_ids):
            continue
        cls = ("wrong_concept" if hit is not None else "boundary"
               if any(x.start < p.end and p.start < x.end for x in gold.entities) else "no_gold")
        seen = "train_text" if normalize_string(p.text) in known else "new_text"
        fp[f"{cls}/{seen}"] += 1


def classify_documents(gold: Document, pred: Document, known: set[str], fn: Counter[str],
                       fp: Counter[str]) -> None:
    """Count one document's document-level errors into ``fn`` and ``fp`` (keys ``type/class/
    seen`` and ``class``)."""
    for cid, mentions in missed_concepts(gold, pred):
        if all(len(g.concept_ids) > 1 for g in mentions):
            cls = "composite"
        elif any((p.start, p.end) == (g.start, g.end) for p in pred.entities for g in mentions):
            cls = "other_concept"
        elif any(p.start < g.end and g.start < p.end for p in pred.entities for g in mentions):
            cls = "boundary"
        else:
            cls = "unlinked"
        seen = "train_concept" if cid in known else "new_concept"
        fn[f"{mentions[0].type}/{cls}/{seen}"] += 1
    for _, links in _unmatched_ids(pred, gold):  # the document-level false positives
        overlaps = any(p.start < g.end and g.start < p.end for p in links for g in gold.entities)
        fp["overlaps_gold" if overlaps else "no_gold"] += 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xlnel-cv-cache"))
    parser.add_argument("--config", choices=sorted(BC5CDR_DEV), default="bc5cdr",
                        help="which BC5CDR config's errors (default: the shipped bc5cdr)")
    parser.add_argument("--name", type=result_name, default="bc5cdr_errors",
                        help="results file name")
    return parser


def main() -> None:
    args = _parser().parse_args()
    t0 = time.perf_counter()
    config = BC5CDR_DEV[args.config]
    fetch_for(config)  # the MeSH tables its KBs read, fetched when missing
    (_, cfg), = plan_cells(config, {}, [SEED])
    stages = CellStages(cfg, StageCache(args.cache), TrainingData())
    docs, cands = stages.test_documents(), stages.test_candidates()
    scores, t = stages.scores()[0], stages.threshold()
    lexicon = AnnotationLexicon.fit(stages.train_documents(), cfg.lang)
    lk = cfg.linker
    fn: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    doc_fn: Counter[str] = Counter()
    doc_fp: Counter[str] = Counter()
    known_concepts = {c for d in stages.train_documents() for g in d.entities
                      for c in g.concept_ids}
    reachable = known_concepts | {c.id for spec in cfg.dictionary.kb for c in load_kb(spec)}
    absent: dict[str, Counter[str]] = {"mention": Counter(), "document": Counter()}
    # links as xlnel link makes them (a long document window by window); the errors are
    # explained by the whole document's candidates and scores
    links = stages.test_links(lk, t, lexicon)
    for d, c, s, pred in zip(docs, cands, scores, links, strict=True):
        adjusted = lexicon.adjust(c, s, t, lk.lexicon_rate) if lk.lexicon else s
        classify(d, c, adjusted, pred, t, set(lexicon.concepts), fn, fp)
        classify_documents(d, pred, known_concepts, doc_fn, doc_fp)
        count_absent(d, pred, reachable, absent)
    write_result(args.name, {
        "config": config, "train": "train.pubtator", "scored_on": "dev.pubtator",
        "level": "concept (mention)", "threshold": t,
        "false_negatives": dict(sorted(fn.items())), "false_positives": dict(sorted(fp.items())),
        "document_false_negatives": dict(sorted(doc_fn.items())),
        "document_false_positives": dict(sorted(doc_fp.items())),
        "missed_outside_kb": {level: dict(sorted(c.items())) for level, c in absent.items()},
        "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
