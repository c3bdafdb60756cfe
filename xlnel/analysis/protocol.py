"""The reference system's sampled-classifier protocol (``galperin2022``), for comparison only.

The figures published for the reference system (Galperin et al., 2022) are not end-to-end
linking scores: they score the contextual filter as a binary classifier on a test sample built
from the gold annotations. This module rebuilds that sample on xlnel's own candidates and filter
scores so that the published figures can be set beside a number measured the same way. It is
*not* a measure of linking quality; strict span (or concept) F1 from
:func:`xlnel.evaluation.evaluate` is. See ``docs/evaluation-protocols.md``.

The sample, per document set:

* **Tying.** Every candidate is tied to the gold mention of its document whose start offset is
  nearest to the candidate's start (ties: the nearer end, then the earlier mention). There is
  no boundary check: a candidate overlapping a mention only in part, or not at all, still ties.
* **Reached.** A gold mention is *reached* when at least one candidate is tied to it.
* **Positives.** One per reached gold mention. Its context is the tied candidate with the
  nearest start, then the nearest end (so the gold span itself when the matcher proposed it),
  then the highest matcher score, then the first in list order; the filter is
  shown that candidate with its ``name`` replaced by the gold mention's text (the *gold term*)
  and its ``concept_id`` by the gold concept. Span and offsets stay the candidate's own; its
  matcher ``score`` becomes the matcher's score of (span text, gold term) when a scorer is
  given (:func:`matcher_scorer`; the pipeline wrapper does), as if the gold term had been a
  dictionary name, so that name-dependent features agree with each other (an exact name with
  the score of another name is a case the filter never saw in training). Without a scorer it
  keeps the context candidate's score.
* **Negatives.** ``negatives_per_positive`` (2) per positive, drawn uniformly at random with
  replacement (``numpy.random.default_rng(seed)``) from the pool of every candidate of the
  document set that is neither a positive's context nor a correct link at the level (offsets of
  a gold mention and, at ``concept`` level, one of its concepts): a right answer is never
  sampled as a wrong one. Negatives are scored as linking scores them, in their unmodified
  candidate lists.
* **Scores.** A sampled pair is accepted when its filter score reaches the filter's threshold.
  ``tp`` = accepted positives, ``fp`` = accepted negatives, ``fn`` = rejected positives plus the
  unreached gold mentions; precision = tp / (tp + fp), recall = tp / (tp + fn).

Each document's candidate list is scored whole (twice: as generated, and with the positives'
contexts replaced), because filters such as ``xlnel.gbdt.v1`` compute a candidate's features from
the other candidates of its span.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from xlnel.candidates.base import CandidateGenerator
from xlnel.filtering.base import CandidateFilter
from xlnel.filtering.labels import label_candidates
from xlnel.types import Candidate, Document, Link

if TYPE_CHECKING:
    from xlnel.runtime import Pipeline

logger = logging.getLogger(__name__)

PROTOCOLS: tuple[str, ...] = ("galperin2022",)
"""Names accepted by ``xlnel evaluate --protocol``."""
PROTOCOL_LEVELS: tuple[str, ...] = ("span", "concept")
"""Levels of :func:`galperin2022`."""

NameScorer = Callable[[Sequence[str], Sequence[str]], np.ndarray]
"""The matcher's score of each (span text, name) pair, such as
:meth:`~xlnel.candidates.tfidf_generator.TfidfCandidateGenerator.pair_scores`."""


@dataclass(frozen=True)
class ProtocolScores:
    """Scores of the ``galperin2022`` sampled-classifier protocol.

    Attributes:
        precision: ``tp / (tp + fp)`` on the sampled positives and negatives.
        recall: ``tp / (tp + fn)``.
        f1: Harmonic mean of precision and recall.
        tp: Positives scored at or above the threshold.
        fp: Sampled negatives scored at or above the threshold.
        fn: Positives scored below the threshold plus unreached gold mentions.
        positives: Sampled positives (one per reached gold mention).
        negatives: Sampled negatives (``negatives_per_positive`` per positive unless the pool
            is empty).
        reached: Gold mentions with at least one tied candidate.
        unreached: Gold mentions with none (counted as misses).
        pool: Candidates the negatives were drawn from.
        seed: Seed of the negative sampling.
        threshold: The filter's threshold.
        level: ``span`` or ``concept``: which gold mentions count and which candidates are
            correct links (kept out of the pool).
        protocol: ``galperin2022``.
    """

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    positives: int
    negatives: int
    reached: int
    unreached: int
    pool: int
    seed: int
    threshold: float
    level: str
    protocol: str = "galperin2022"

    def to_dict(self) -> dict[str, Any]:
        """All fields as a plain dict (for JSON reports)."""
        return asdict(self)


@dataclass(frozen=True)
class ProtocolSample:
    """Filter scores of every positive and of the whole negative pool, before sampling.

    Sampling is cheap once these are known, so several seeds can be drawn from one sample
    with :meth:`draw`. Samples of disjoint document batches combine with :meth:`concat`.

    Attributes:
        positive_scores: Filter score of each positive, in document and gold-mention order.
        pool_scores: Filter score of each pool candidate, in document and candidate order.
        unreached: Gold mentions no candidate was tied to.
        threshold: The filter's threshold.
        level: ``span`` or ``concept``.
    """

    positive_scores: np.ndarray
    pool_scores: np.ndarray
    unreached: int
    threshold: float
    level: str

    @classmethod
    def concat(cls, parts: Sequence[ProtocolSample]) -> ProtocolSample:
        """The sample of the union of the parts' documents (in the parts' order).

        Raises:
            ValueError: If no part is given or the parts differ in threshold or level.
        """
        if not parts:
            raise ValueError("concat needs at least one ProtocolSample")
        first = parts[0]
        for part in parts[1:]:
            if (part.threshold, part.level) != (first.threshold, first.level):
                raise ValueError(f"cannot combine samples with threshold/level "
                                 f"{first.threshold}/{first.level} and "
                                 f"{part.threshold}/{part.level}")
        return cls(np.concatenate([p.positive_scores for p in parts]),
                   np.concatenate([p.pool_scores for p in parts]),
                   sum(p.unreached for p in parts), first.threshold, first.level)

    def draw(self, seed: int = 0, negatives_per_positive: int = 2) -> ProtocolScores:
        """Draw the negatives with ``seed`` and score the sample.

        Raises:
            ValueError: If ``negatives_per_positive`` is negative.
        """
        if negatives_per_positive < 0:
            raise ValueError(f"negatives_per_positive must be at least 0, got "
                             f"{negatives_per_positive}")
        n_pos, n_pool = len(self.positive_scores), len(self.pool_scores)
        n_neg = negatives_per_positive * n_pos if n_pool else 0
        if n_pos and not n_pool and negatives_per_positive:
            logger.warning("galperin2022: the negative pool is empty; no negatives sampled")
        picked = np.random.default_rng(seed).integers(0, max(n_pool, 1), size=n_neg)
        tp = int(np.count_nonzero(self.positive_scores >= self.threshold))
        fp = int(np.count_nonzero(self.pool_scores[picked] >= self.threshold))
        fn = n_pos - tp + self.unreached
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return ProtocolScores(precision, recall, f1, tp, fp, fn, n_pos, n_neg, n_pos,
                              self.unreached, n_pool, seed, self.threshold, self.level)


def tie_candidates(document: Document, candidates: Sequence[Candidate],
                   mentions: Sequence[Link] | None = None) -> np.ndarray:
    """Index (into ``mentions``) of the gold mention each candidate is tied to.

    A candidate ties to the mention with the nearest start offset (ties: the nearer end, then
    the earlier mention), without any boundary check.

    Args:
        document: The gold document.
        candidates: Its candidates.
        mentions: The gold mentions to tie to; ``None`` = all of ``document.entities``.

    Returns:
        One index per candidate; -1 for every candidate when there is no mention.
    """
    gold = list(document.entities if mentions is None else mentions)
    if not gold:
        return np.full(len(candidates), -1, dtype=np.int64)
    starts = np.array([m.start for m in gold], dtype=np.int64)
    ends = np.array([m.end for m in gold], dtype=np.int64)
    c_start = np.fromiter((c.span.start for c in candidates), dtype=np.int64,
                          count=len(candidates))
    c_end = np.fromiter((c.span.end for c in candidates), dtype=np.int64, count=len(candidates))
    # end distances stay below this, so start distance * scale + end distance orders
    # lexicographically; argmin keeps the earliest mention of equal keys
    scale = int(max(ends.max(), c_end.max(initial=0))) + 1
    out = np.empty(len(candidates), dtype=np.int64)
    step = max(1, (1 << 22) // len(gold))  # bound the (candidates x mentions) block
    for lo in range(0, len(candidates), step):
        d_start = np.abs(c_start[lo:lo + step, None] - starts[None, :])
        d_end = np.abs(c_end[lo:lo + step, None] - ends[None, :])
        out[lo:lo + step] = np.argmin(d_start * scale + d_end, axis=1)
    return out


def _scored_mentions(document: Document, level: str) -> list[Link]:
    """The gold mentions the protocol counts: all at span level, those with ids at concept."""
    if level == "concept":
        return [m for m in document.entities if m.concept_ids]
    return list(document.entities)


def _positive_contexts(candidates: Sequence[Candidate], tied: np.ndarray,
                       mentions: Sequence[Link]) -> list[int]:
    """Per mention, the index of its context candidate, or -1 (see :func:`_context_key`)."""
    best: list[int] = [-1] * len(mentions)
    for i, m in enumerate(tied.tolist()):
        if m < 0:
            continue
        j = best[m]
        if j < 0 or _context_key(candidates[i], mentions[m]) < _context_key(candidates[j],
                                                                             mentions[m]):
            best[m] = i
    return best


def _context_key(candidate: Candidate, mention: Link) -> tuple[int, int, float]:
    """Nearest start, then nearest end (the gold span itself when it is a candidate), then the
    best matcher score (its span's top name); equal keys keep the first in list order."""
    return (abs(candidate.span.start - mention.start), abs(candidate.span.end - mention.end),
            -candidate.score)


def gold_term_candidate(context: Candidate, mention: Link,
                        score: float | None = None) -> Candidate:
    """The candidate a positive shows the filter: ``context``'s span with the gold mention's
    text as the name and its first concept id (``context``'s when it has none).

    Args:
        context: The tied candidate whose span and context the positive keeps.
        mention: The gold mention.
        score: Matcher score of (span, gold term); ``None`` keeps ``context``'s score.
    """
    concept = mention.concept_id if mention.concept_id is not None else context.concept_id
    return replace(context, name=mention.text, concept_id=concept,
                   score=context.score if score is None else score)


def _tie_document(document: Document, candidates: Sequence[Candidate], level: str
                  ) -> tuple[list[tuple[int, Link]], np.ndarray, int]:
    """(context index, gold mention) of each reached mention, the pool mask, and the number of
    unreached mentions of one document."""
    mentions = _scored_mentions(document, level)
    contexts = _positive_contexts(candidates, tie_candidates(document, candidates, mentions),
                                  mentions)
    reached = [(i, mentions[m]) for m, i in enumerate(contexts) if i >= 0]
    pool = ~label_candidates(document, candidates, level)
    pool[[i for i, _ in reached]] = False
    return reached, pool, contexts.count(-1)


def protocol_sample(documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
                    candidate_filter: CandidateFilter, level: str | None = None,
                    name_scores: NameScorer | None = None,
                    plain_scores: Sequence[np.ndarray] | None = None) -> ProtocolSample:
    """Filter scores of the ``galperin2022`` positives and negative pool (see the module doc).

    Args:
        documents: Gold documents.
        candidates: Candidates of each document, in the same order (a pipeline's
            ``candidates(documents)``).
        candidate_filter: A fitted filter; its ``threshold`` decides acceptance.
        level: ``span`` or ``concept``; ``None`` = the filter's ``select_level``.
        name_scores: The matcher's score of (span text, name) pairs, given to each positive
            for its (span, gold term) (``TfidfCandidateGenerator.pair_scores``); ``None``
            keeps the context candidate's score.
        plain_scores: The filter's scores of ``candidates`` when they are at hand (a stage
            cache's test scores), which saves one of the two scoring passes.

    Raises:
        ValueError: If the lengths differ or the level is not span or concept.
    """
    level = candidate_filter.config.select_level if level is None else level
    if level not in PROTOCOL_LEVELS:
        raise ValueError(f"unknown protocol level {level!r}; allowed: "
                         f"{', '.join(PROTOCOL_LEVELS)}")
    if len(documents) != len(candidates):
        raise ValueError(f"{len(documents)} documents but {len(candidates)} candidate lists")
    if plain_scores is not None and [len(s) for s in plain_scores] != [len(c) for c in
                                                                        candidates]:
        raise ValueError("plain_scores must hold one score per candidate of each document")
    threshold = float(candidate_filter.threshold)
    if not documents:
        return ProtocolSample(np.zeros(0), np.zeros(0), 0, threshold, level)
    tied = [_tie_document(d, c, level) for d, c in zip(documents, candidates, strict=True)]
    reached = [(k, i, m) for k, (r, _, _) in enumerate(tied) for i, m in r]
    new_scores: list[float | None] = [None] * len(reached)
    if name_scores is not None and reached:
        new_scores = list(name_scores([candidates[k][i].span.text for k, i, _ in reached],
                                      [m.text for _, _, m in reached]).tolist())
    swapped = [list(c) for c in candidates]
    for (k, i, m), score in zip(reached, new_scores, strict=True):
        swapped[k][i] = gold_term_candidate(candidates[k][i], m, score)
    plain = (candidate_filter.score_batch(documents, candidates) if plain_scores is None
             else [np.asarray(s, dtype=np.float64) for s in plain_scores])
    gold_term = candidate_filter.score_batch(documents, swapped)
    pos = np.array([gold_term[k][i] for k, i, _ in reached], dtype=np.float64)
    neg = [s[pool] for s, (_, pool, _) in zip(plain, tied, strict=True)]
    return ProtocolSample(pos, np.concatenate([np.zeros(0), *neg]).astype(np.float64),
                          sum(u for _, _, u in tied), threshold, level)


def galperin2022(documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
                 candidate_filter: CandidateFilter, seed: int = 0, level: str | None = None,
                 negatives_per_positive: int = 2,
                 name_scores: NameScorer | None = None) -> ProtocolScores:
    """The reference system's sampled-classifier scores on in-memory components.

    Args:
        documents: Gold documents (for cross-validation: the held-out fold).
        candidates: Candidates of each document, in the same order.
        candidate_filter: A fitted filter (scores with ``score_batch``, accepts at
            ``threshold``).
        seed: Seed of the negative sampling.
        level: ``span`` or ``concept``; ``None`` = the filter's ``select_level``.
        negatives_per_positive: Negatives drawn per positive (the reference draws 2).
        name_scores: The matcher's (span text, name) scorer, so that a positive carries the
            score of its gold term (:func:`matcher_scorer` of the generator); ``None`` keeps
            the context candidate's score.

    Returns:
        Precision, recall, F1 and the counts of the sample.
    """
    sample = protocol_sample(documents, candidates, candidate_filter, level, name_scores)
    return sample.draw(seed, negatives_per_positive)


def matcher_scorer(generator: CandidateGenerator) -> NameScorer | None:
    """The generator's (span text, name) scorer, or ``None`` when it has none (dense
    generators: a positive then keeps its context candidate's score)."""
    from xlnel.candidates.tfidf_generator import TfidfCandidateGenerator

    if isinstance(generator, TfidfCandidateGenerator):
        return generator.pair_scores
    logger.warning("galperin2022: %s cannot score a gold term; positives keep the matcher "
                   "score of their context candidate", generator.registered_name)
    return None


def galperin2022_pipeline(pipeline: str | Path | Pipeline,
                          gold: str | Path | Sequence[Document], seed: int = 0,
                          level: str | None = None, negatives_per_positive: int = 2,
                          rescore: bool = True, batch_size: int = 64,
                          progress: bool = False) -> ProtocolScores:
    """:func:`galperin2022` for a trained pipeline (folder or loaded) and gold documents.

    Candidates are generated and scored batch by batch, so memory holds one batch's candidates.

    Args:
        pipeline: A pipeline folder or a loaded :class:`~xlnel.pipeline.Pipeline`.
        gold: Gold documents, or a JSONL, PubTator or BioC file of them.
        seed: Seed of the negative sampling.
        level: ``span`` or ``concept``; ``None`` = the filter's ``select_level``.
        negatives_per_positive: Negatives drawn per positive.
        rescore: Give each positive the matcher's score of (span, gold term)
            (:func:`matcher_scorer`); ``False`` keeps its context candidate's score.
        batch_size: Documents per batch.
        progress: Show a progress bar.
    """
    from tqdm import tqdm

    from xlnel.io import read_documents
    from xlnel.runtime import open_pipeline

    pipe = open_pipeline(pipeline)
    docs = read_documents(gold) if isinstance(gold, str | Path) else list(gold)
    scorer = matcher_scorer(pipe.generator) if rescore else None
    parts = [protocol_sample([], [], pipe.filter, level)]
    with tqdm(total=len(docs), desc="galperin2022", unit="doc", disable=not progress) as bar:
        for lo in range(0, len(docs), batch_size):
            batch = docs[lo:lo + batch_size]
            parts.append(protocol_sample(batch, pipe.candidates(batch), pipe.filter, level,
                                         scorer))
            bar.update(len(batch))
    return ProtocolSample.concat(parts).draw(seed, negatives_per_positive)
