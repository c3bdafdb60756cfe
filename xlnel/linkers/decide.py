"""From scored candidates to links: best concept per span, overlaps resolved."""

from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from xlnel.config import LinkerConfig
from xlnel.evaluation.metrics import evaluate
from xlnel.linkers.abbreviations import link_abbreviations
from xlnel.linkers.consistency import link_repeats
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.types import Candidate, Document, Link

logger = logging.getLogger(__name__)

_Best = tuple[float, float, Candidate]
BestPerSpan = dict[tuple[int, int], _Best]
"""Per span ``(start, end)``: the filter score, string score and candidate chosen for it."""


def decide(document: Document, candidates: Sequence[Candidate], scores: np.ndarray,
           threshold: float, overlap: str = "longest", propagate: bool = False,
           abbreviations: bool = False, lexicon: AnnotationLexicon | None = None,
           lexicon_rate: float | None = None, consistency: bool = False,
           composites: bool = False, alternatives: int = 0,
           annotated_release: bool = False) -> Document:
    """Keep, per span, the best candidate scoring at least ``threshold``; resolve overlaps.

    Args:
        document: The document the candidates belong to.
        candidates: Its candidates.
        scores: One score per candidate (the filter's, or the matcher's cosine).
        threshold: Minimum score, inclusive.
        overlap: ``longest``: among overlapping spans keep the longer, then the higher scored;
            ``score``: the higher scored, then the longer; ``none``: keep them all.
        propagate: Also link the other occurrences of a linked text in the document whose
            candidates score at least half the threshold (they are raised to the threshold,
            then overlaps are resolved again): a post names its terms more than once.
        abbreviations: Then link the short forms the document defines with the concept of
            their long form (:func:`xlnel.linkers.abbreviations.link_abbreviations`).
        lexicon: First let the training annotations choose each known span's concept
            (:meth:`xlnel.linkers.lexicon.AnnotationLexicon.adjust`).
        lexicon_rate: With ``lexicon``, the annotated share of a text's training occurrences
            from which its spans are linked whatever their score.
        consistency: Then link the unlinked occurrences of every linked text with its concept
            (:func:`xlnel.linkers.consistency.link_repeats`), before the abbreviations.
        composites: With ``lexicon``, a link whose text the training annotations mostly mark
            as a composite holding its concept gets all the composite's concept ids
            (:meth:`xlnel.linkers.lexicon.AnnotationLexicon.composite`), its own first.
        alternatives: Give each link up to this many other concepts of the candidates at its
            span, best first, with their scores (after the lexicon's adjustment) and string
            similarities (:func:`with_alternatives`).
        annotated_release: With ``lexicon`` (required), first drop the candidates of concepts
            created after the knowledge-base release the training annotations were made with,
            and those their spans match less well (:func:`older_only`).

    Returns:
        The document with the links as its entities.
    """
    if annotated_release:
        if lexicon is None:
            raise ValueError("annotated_release dates the release from the lexicon: give one")
        keep = older_only(candidates, lexicon)
        candidates = [c for c, k in zip(candidates, keep.tolist(), strict=True) if k]
        scores = np.asarray(scores)[keep]
    if lexicon is not None:
        scores = lexicon.adjust(candidates, scores, threshold, lexicon_rate)
    links = _resolve(_ordered(best_per_span(candidates, scores), overlap), threshold, overlap)
    if propagate and links:
        linked = {link.text for link in links}
        raised = np.array([max(s, threshold) if c.span.text in linked and s >= threshold / 2
                           else s for c, s in zip(candidates, np.asarray(scores).tolist(),
                                                  strict=True)])
        links = _resolve(_ordered(best_per_span(candidates, raised), overlap), threshold,
                         overlap)
    if consistency:
        links = list(link_repeats(document.text, links))
    if composites and lexicon is not None:
        links = [_with_composite(link, lexicon) for link in links]
    if abbreviations:
        links = list(link_abbreviations(document.text, links))
    if alternatives > 0:
        links = with_alternatives(links, candidates, scores, alternatives)
    return replace(document, entities=tuple(links))


def older_only(candidates: Sequence[Candidate], lexicon: AnnotationLexicon) -> np.ndarray:
    """Which candidates to keep when linking against the release the training annotations were
    made with: not those of concepts numbered above the newest id the annotations use
    (:meth:`xlnel.linkers.lexicon.AnnotationLexicon.newer`), nor, at a span one of those
    matches, the candidates whose names match the span less closely, unless the annotations
    linked the span's text to their concept. A span whose text names a concept created since
    (*ropivacaine*, a descriptor since 2018) is a mention of that concept, not of the older
    concept nearest in spelling (*mepivacaine*)."""
    newer = lexicon.newer(candidates).tolist()
    closest: dict[tuple[int, int], float] = {}
    for cand, new in zip(candidates, newer, strict=True):
        key = (cand.span.start, cand.span.end)
        if new and cand.score > closest.get(key, -np.inf):
            closest[key] = cand.score
    keep = []
    for cand, new in zip(candidates, newer, strict=True):
        bar = closest.get((cand.span.start, cand.span.end))
        keep.append(not new and (bar is None or cand.score >= bar
                                 or cand.concept_id in lexicon.known(cand.span.text)))
    return np.array(keep, dtype=bool)


def with_alternatives(links: Sequence[Link], candidates: Sequence[Candidate],
                      scores: np.ndarray, k: int) -> list[Link]:
    """``links``, each with up to ``k`` other concepts of the candidates at its span, as
    ``(concept_id, score, similarity)``: best score first, ties to the closer string match (a
    filter that scores whole spans gives every concept of a span its score); a concept counted
    once, at its best."""
    by_span: dict[tuple[int, int], dict[str, tuple[float, float]]] = {}
    for cand, score in zip(candidates, np.asarray(scores, dtype=np.float64).tolist(),
                           strict=True):
        if not (math.isfinite(score) and math.isfinite(cand.score)):
            continue  # never linked (best_per_span), so never an alternative either
        concepts = by_span.setdefault((cand.span.start, cand.span.end), {})
        held = concepts.get(cand.concept_id)
        if held is None or (score, cand.score) > held:
            concepts[cand.concept_id] = (score, cand.score)
    out = []
    for link in links:
        concepts = by_span.get((link.start, link.end), {})
        ranked = sorted(((c, v) for c, v in concepts.items() if c not in link.concept_ids),
                        key=lambda item: (-item[1][0], -item[1][1], item[0]))[:k]
        out.append(replace(link, alternatives=tuple((c, round(v[0], 6), round(v[1], 6))
                                                    for c, v in ranked)))
    return out


def decide_as(document: Document, candidates: Sequence[Candidate], scores: np.ndarray,
              threshold: float, linker: LinkerConfig,
              lexicon: AnnotationLexicon | None = None) -> Document:
    """:func:`decide` with the decisions of a ``linker`` config section (``lexicon`` is used
    only when ``linker.lexicon`` is on)."""
    return decide(document, candidates, scores, threshold, linker.overlap, linker.propagate,
                  linker.abbreviations, lexicon if linker.lexicon else None,
                  linker.lexicon_rate, linker.consistency, linker.composites,
                  linker.alternatives, linker.annotated_release)


def _with_composite(link: Link, lexicon: AnnotationLexicon) -> Link:
    ids = lexicon.composite(link.text, link.concept_id)
    return link if ids is None else replace(link, concept_ids=ids)


def best_per_span(candidates: Sequence[Candidate], scores: np.ndarray,
                  threshold: float | None = None) -> BestPerSpan:
    """The best candidate of each span (among those scoring at least ``threshold``, if given).

    Candidates are ranked by score, ties going to the closer string match; a span's best
    candidate passes a threshold exactly when any of its candidates does. A candidate whose
    score is not a finite number (NaN or infinite: a broken filter) is never chosen, with a
    warning, so that every link's score is finite, as every corpus format requires.
    """
    best: BestPerSpan = {}
    skipped = 0
    for cand, score in zip(candidates, np.asarray(scores, dtype=np.float64).tolist(),
                           strict=True):
        if not (math.isfinite(score) and math.isfinite(cand.score)):
            skipped += 1
            continue
        if threshold is not None and score < threshold:
            continue
        key = (cand.span.start, cand.span.end)
        held = best.get(key)
        if held is None or (score, cand.score) > held[:2]:
            best[key] = (score, cand.score, cand)
    if skipped:
        logger.warning("%d candidates with a score that is not a finite number were not linked",
                       skipped)
    return best


def resolve_overlaps(document: Document, best: BestPerSpan, overlap: str = "longest") -> Document:
    """Links from each span's best candidate, overlapping spans resolved (see :func:`decide`)."""
    links = _resolve(_ordered(best, overlap), float("-inf"), overlap)
    return replace(document, entities=tuple(links))


def _ordered(best: BestPerSpan, overlap: str) -> list[_Best]:
    """The spans' best candidates in the order overlaps are resolved."""
    if overlap == "score":
        return sorted(best.values(), key=lambda t: (-t[0], -(t[2].span.end - t[2].span.start),
                                                     -t[1], t[2].span.start))
    return sorted(best.values(), key=lambda t: (-(t[2].span.end - t[2].span.start),
                                                 -t[0], -t[1], t[2].span.start))


def _resolve(ordered: Sequence[_Best], threshold: float, overlap: str) -> list[Link]:
    """Links of the spans scoring at least ``threshold``, taken greedily in ``ordered``."""
    links: list[Link] = []
    # the kept spans never overlap, so sorted by start their ends are sorted too: a new span
    # overlaps a kept one only if it overlaps its neighbour on either side (bisect, not a scan)
    starts: list[int] = []
    ends: list[int] = []
    for score, _, cand in ordered:
        if score < threshold:
            continue
        s, e = cand.span.start, cand.span.end
        if overlap != "none":
            i = bisect.bisect_left(starts, s)
            if (i > 0 and ends[i - 1] > s) or (i < len(starts) and starts[i] < e):
                continue
            starts.insert(i, s)
            ends.insert(i, e)
        links.append(Link(s, e, cand.span.text, (cand.concept_id,), score=round(score, 6),
                          matched_name=cand.name))
    links.sort(key=lambda link: (link.start, link.end))
    return links


def choose_threshold(documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
                     scores: Sequence[np.ndarray], level: str = "span",
                     overlap: str = "longest", steps: int = 41) -> tuple[float, float]:
    """The threshold with the best F1 on annotated documents, and that F1.

    Thresholds tried are ``steps`` quantiles of the scores plus ``steps`` evenly spaced values
    in [0, 1]; among equal F1s the highest threshold wins, as it keeps fewer links.
    """
    grid = _threshold_grid(scores, steps)
    if grid.size == 0:
        return 0.5, 0.0
    best_t, best_f1 = float(grid[-1]), -1.0
    # the best candidate per span and the resolution order do not depend on the threshold
    ordered = [_ordered(best_per_span(c, s), overlap)
               for c, s in zip(candidates, scores, strict=True)]
    for t in grid[::-1]:
        pred = [replace(d, entities=tuple(_resolve(o, float(t), overlap)))
                for d, o in zip(documents, ordered, strict=True)]
        f1 = evaluate(list(documents), pred, level).f1
        if f1 > best_f1 + 1e-12:
            best_t, best_f1 = float(t), f1
    return best_t, best_f1


def _threshold_grid(scores: Sequence[np.ndarray], steps: int) -> np.ndarray:
    """Thresholds to try: ``steps`` quantiles of the scores and ``steps`` evenly spaced values
    in [0, 1], within the scores' range, ascending (empty without scores)."""
    pooled = np.concatenate([np.asarray(s, dtype=np.float64) for s in scores] or [np.zeros(0)])
    if pooled.size == 0:
        return pooled
    # quantiles alone leave the sparse high-score range (where positives sit) nearly unsampled
    grid = np.unique(np.concatenate([np.quantile(pooled, np.linspace(0, 1, steps)),
                                     np.linspace(0.0, 1.0, steps)]))
    return grid[(grid >= pooled.min()) & (grid <= pooled.max())]


def choose_linker_threshold(documents: Sequence[Document],
                            candidates: Sequence[Sequence[Candidate]],
                            scores: Sequence[np.ndarray], folds: Sequence[int],
                            linker: LinkerConfig, lang: str, level: str = "span",
                            lexicon_documents: Sequence[Document] | None = None,
                            steps: int = 41) -> tuple[float, float]:
    """The threshold whose links, as the ``linker`` section decides them, score the best F1.

    :func:`choose_threshold` scores each span's best candidate with overlaps resolved; the
    linker also lets the training annotations choose concepts (``lexicon``), links
    abbreviations, repeats and composites, and drops newer concepts, which moves the best
    threshold. Here every document is decided as the linker would, with the annotation
    lexicon of the documents outside its fold, so that its own annotations never decide it.

    Args:
        documents: Annotated documents.
        candidates: Their candidates.
        scores: Out-of-fold filter scores, one array per document.
        folds: The fold of each document under which ``scores`` were computed.
        linker: The decisions (a ``linker`` config section).
        lang: Language of the lexicon's normalisation.
        level: Evaluation level whose F1 is maximised.
        lexicon_documents: The documents the lexicon learns from (default ``documents``);
            those with the id of a document of a fold are left out of that fold's lexicon.
        steps: As in :func:`choose_threshold` (same grid; ties go to the highest threshold).

    Returns:
        The threshold and its F1.
    """
    if len(folds) != len(documents):
        raise ValueError(f"{len(folds)} fold numbers for {len(documents)} documents")
    grid = _threshold_grid(scores, steps)
    if grid.size == 0:
        return 0.5, 0.0
    pool = list(documents if lexicon_documents is None else lexicon_documents)
    lexicons: dict[int, AnnotationLexicon | None] = {}
    for fold in set(folds):
        held = {d.id for d, f in zip(documents, folds, strict=True) if f == fold}
        lexicons[fold] = (AnnotationLexicon.fit([d for d in pool if d.id not in held], lang)
                          if linker.lexicon else None)
    # the release filter does not depend on the threshold: applied once, not at every step
    # (the config holds annotated_release only with the lexicon on)
    kept = []
    for c, s, f in zip(candidates, scores, folds, strict=True):
        lexicon = lexicons[f]
        if linker.annotated_release and lexicon is not None:
            keep = older_only(c, lexicon)
            c, s = [x for x, k in zip(c, keep.tolist(), strict=True) if k], np.asarray(s)[keep]
        kept.append((c, s))
    step = linker.model_copy(update={"annotated_release": False, "alternatives": 0})
    best_t, best_f1 = float(grid[-1]), -1.0
    for t in grid[::-1]:
        pred = [decide_as(d, c, s, float(t), step, lexicons[f])
                for d, (c, s), f in zip(documents, kept, folds, strict=True)]
        f1 = evaluate(list(documents), pred, level).f1
        if f1 > best_f1 + 1e-12:
            best_t, best_f1 = float(t), f1
    return best_t, best_f1
