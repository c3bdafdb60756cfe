"""Sequence-tagger features of spans for the gradient-boosted filter (option ``tagger``).

The filter's other features judge a span by its text, its matches and a few words around it;
none sees whether the words *around the whole span* make it a mention with these boundaries.
A linear-chain CRF does: :class:`SpanTagger` tags every word of a document ``B``/``I``/``O``
(typed by the gold entity type where the training documents give one, ``B-Disease``) from the
word, its shape and affixes, its neighbours, and what the candidate generator matched there
(the best matcher score of the spans that start, cover or end at the word), and its marginal
probabilities become :data:`TAGGER_FEATURES`:

- ``tagger_begin``: the probability that the span's first word begins a mention;
- ``tagger_inside``: the lowest probability, over the span's other words, that the word
  continues a mention (1 for a one-word span);
- ``tagger_end``: the probability that the word after the span does not continue a mention;
- ``tagger_span``: the product of the three, an estimate of the span being exactly a mention.

Types are summed: a word begins a mention when it begins one of any type. The words are
``\\w+`` runs (with the combining marks inside them) and single other characters, so any
script works; a span that starts or ends
inside a word (a stripped Hebrew prefix) reads the word that holds its first or last letter.

The CRF is CRFsuite's (python-crfsuite), trained by L-BFGS with elastic-net penalties. On the
filter's training documents the features come from taggers fitted on the other folds, as the
priors do, so the trees never learn from a tagger that saw the answer. A fitted tagger is
CRFsuite's own binary model file (``span_tagger.crfsuite``), read by CRFsuite's parser; no code
is run to load it.
"""

from __future__ import annotations

import bisect
import logging
import re
import tempfile
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xlnel.errors import ArtifactError
from xlnel.types import Candidate, Document

logger = logging.getLogger(__name__)

#: The columns, in order.
TAGGER_FEATURES = ("tagger_begin", "tagger_inside", "tagger_end", "tagger_span")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD_CHAR = re.compile(r"\w")
#: First bytes of a CRFsuite model file.
_MAGIC = b"lCRF"
#: L-BFGS settings: L1 and L2 penalties and most iterations (a fit on 400 BC5CDR abstracts,
#: about 100,000 words, takes about 11 seconds on one core).
C1 = 0.05
C2 = 0.01
MAX_ITERATIONS = 100
#: Matcher scores are read in these bins (a feature per bin reached).
_SCORE_BINS = (0.95, 0.8, 0.6)


def _tokens(text: str) -> list[tuple[int, int]]:
    """Offsets of the words of ``text``: ``\\w+`` runs and single other characters.

    Combining marks (Unicode category ``M``: Hebrew niqqud, decomposed accents) are not
    ``\\w``; each joins the token before it, and a word going on after a mark stays the
    same token (``סֻכֶּרֶת`` is one word, not eight).
    """
    out: list[tuple[int, int]] = []
    word_mark = False  # the last token is a word ending in a combining mark
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        is_mark = unicodedata.category(text[start]).startswith("M")
        if out and out[-1][1] == start and (
                is_mark or word_mark and _WORD_CHAR.match(text, start) is not None):
            first = out[-1][0]
            out[-1] = (first, end)
            word_mark = is_mark and _WORD_CHAR.match(text, first) is not None
            continue
        out.append((start, end))
        word_mark = False
    return out


def _shape(word: str) -> str:
    out: list[str] = []
    for ch in word:
        kind = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        if not out or out[-1] != kind:
            out.append(kind)
    return "".join(out)[:6]


def _bin(score: float) -> str | None:
    for edge in _SCORE_BINS:
        if score >= edge:
            return str(edge)
    return None


def _match_features(starts: list[int], tokens: list[tuple[int, int]],
                    candidates: Sequence[Candidate]) -> list[list[str]]:
    """Per token: the bins of the best matcher score of candidate spans starting at it,
    ending at it, or covering it."""
    best_start = [0.0] * len(tokens)
    best_end = [0.0] * len(tokens)
    best_cover = [0.0] * len(tokens)
    for c in candidates:
        a, b = _token_range(tokens, c.span.start, c.span.end, starts)
        if a < 0:
            continue
        best_start[a] = max(best_start[a], c.score)
        best_end[b] = max(best_end[b], c.score)
        for t in range(a, b + 1):
            best_cover[t] = max(best_cover[t], c.score)
    out: list[list[str]] = []
    for s, e, v in zip(best_start, best_end, best_cover, strict=True):
        feats = []
        for name, score in (("ms", s), ("me", e), ("mc", v)):
            edge = _bin(score)
            if edge is not None:
                feats.append(f"{name}={edge}")
        out.append(feats)
    return out


def _token_range(tokens: list[tuple[int, int]], start: int, end: int,
                 starts: list[int] | None = None) -> tuple[int, int]:
    """Indices of the first and the last token holding a character of ``[start, end)``;
    ``(-1, -1)`` when no token does (an empty range, or one of white space only).

    Args:
        tokens: The document's :func:`_tokens`.
        start: First character of the range.
        end: Character after the range.
        starts: The tokens' start offsets, when the caller has them already.
    """
    if end <= start or not tokens:
        return -1, -1
    if starts is None:
        starts = [s for s, _ in tokens]
    a = bisect.bisect_right(starts, start) - 1
    if a < 0 or tokens[a][1] <= start:  # ``start`` lies before or between tokens
        a += 1
    b = bisect.bisect_right(starts, end - 1) - 1
    if a >= len(tokens) or b < a:
        return -1, -1
    return a, b


def word_features(text: str, tokens: list[tuple[int, int]],
                  candidates: Sequence[Candidate]) -> list[list[str]]:
    """CRFsuite attribute lists of a document's tokens."""
    words = [text[s:e] for s, e in tokens]
    lowers = [w.lower() for w in words]
    matched = _match_features([s for s, _ in tokens], tokens, candidates)
    out: list[list[str]] = []
    n = len(words)
    for i, (word, low) in enumerate(zip(words, lowers, strict=True)):
        feats = ["b", "w=" + low, "p3=" + low[:3], "s2=" + low[-2:], "s3=" + low[-3:],
                 "s4=" + low[-4:], "sh=" + _shape(word), "len=" + str(min(len(word), 12))]
        for off in (-2, -1, 1, 2):
            j = i + off
            if 0 <= j < n:
                feats.append(f"{off}w={lowers[j]}")
                if abs(off) == 1:
                    feats.append(f"{off}s3={lowers[j][-3:]}")
                    feats.append(f"{off}sh={_shape(words[j])}")
            elif abs(off) == 1:
                feats.append(f"{off}w=<edge>")
        feats.extend(matched[i])
        if i > 0:
            feats.extend("-1" + f for f in matched[i - 1])
        if i + 1 < n:
            feats.extend("+1" + f for f in matched[i + 1])
        out.append(feats)
    return out


def gold_tags(document: Document, tokens: list[tuple[int, int]],
              dropped: dict[str, int] | None = None) -> list[str]:
    """``B``/``I``/``O`` tags of a document's tokens from its gold entities (typed when the
    entity has a type).

    An entity covering no token (white space only) tags nothing, and one overlapping an
    entity already tagged is skipped; ``dropped`` counts both (keys ``no_word`` and
    ``overlapping``) for the caller to report.
    """
    tags = ["O"] * len(tokens)
    starts = [s for s, _ in tokens]
    counts = dropped if dropped is not None else {}
    for ent in document.entities:
        a, b = _token_range(tokens, ent.start, ent.end, starts)
        why = "no_word" if a < 0 else "overlapping" if any(
            t != "O" for t in tags[a:b + 1]) else None
        if why is not None:
            counts[why] = counts.get(why, 0) + 1
            continue
        suffix = f"-{ent.type}" if ent.type else ""
        tags[a] = "B" + suffix
        for t in range(a + 1, b + 1):
            tags[t] = "I" + suffix
    return tags


class SpanTagger:
    """A CRF over words whose marginals score spans (see the module docstring).

    Args:
        model: The bytes of a CRFsuite model file; ``None`` until :meth:`fit`.
    """

    def __init__(self, model: bytes | None = None) -> None:
        self.model = model
        #: Set by :meth:`blank`: no model, every column zero.
        self.is_blank = False
        self._local = threading.local()

    def fit(self, documents: Sequence[Document],
            candidates: Sequence[Sequence[Candidate]],
            attributes: Sequence[Any] | None = None) -> SpanTagger:
        """Train on the gold entities of ``documents`` (with their candidates' matches).

        Args:
            documents: Training documents.
            candidates: Their candidates.
            attributes: Their :meth:`attributes`, when already computed (cross-validation
                computes them once for every fold's tagger).

        Raises:
            ValueError: If the documents hold no entity.
        """
        import pycrfsuite

        trainer = pycrfsuite.Trainer(verbose=False)
        trainer.set_params({"c1": C1, "c2": C2, "max_iterations": MAX_ITERATIONS,
                            "feature.possible_transitions": True})
        if attributes is None:
            attributes = self.attributes(documents, candidates)
        entities = 0
        dropped: dict[str, int] = {}
        for doc, items in zip(documents, attributes, strict=True):
            if items is None:
                dropped["no_word"] = dropped.get("no_word", 0) + len(doc.entities)
                continue
            left_out = sum(dropped.values())
            trainer.append(items, gold_tags(doc, _tokens(doc.text), dropped))
            entities += len(doc.entities) - (sum(dropped.values()) - left_out)
        if dropped:
            logger.warning("span tagger: %d overlapping gold entities left out (the first of "
                           "each overlapping group is kept), %d covering no word",
                           dropped.get("overlapping", 0), dropped.get("no_word", 0))
        if not entities:
            raise ValueError("cannot train the span tagger: the training documents hold no "
                             "entity that covers a word")
        with tempfile.TemporaryDirectory(prefix="xlnel-crf-") as tmp:
            path = Path(tmp) / "model.crfsuite"
            trainer.train(str(path))
            self.model = path.read_bytes()
        self._local = threading.local()
        logger.info("span tagger: %d documents, %d entities, %d iterations",
                    len(documents), entities, MAX_ITERATIONS)
        return self

    @staticmethod
    def attributes(documents: Sequence[Document],
                   candidates: Sequence[Sequence[Candidate]]) -> list[Any]:
        """CRFsuite's item sequence of each document's words (:func:`word_features`);
        ``None`` for a document without a word."""
        import pycrfsuite

        out: list[Any] = []
        for doc, cands in zip(documents, candidates, strict=True):
            tokens = _tokens(doc.text)
            out.append(pycrfsuite.ItemSequence(word_features(doc.text, tokens, cands))
                       if tokens else None)
        return out

    @classmethod
    def blank(cls) -> SpanTagger:
        """A tagger without a model, whose :meth:`columns` are all zero (for training folds
        that hold no entity to learn from)."""
        tagger = cls()
        tagger.is_blank = True
        return tagger

    def _tagger(self) -> Any:
        """This thread's CRFsuite tagger (a tagger is not safe to share between threads)."""
        tagger = getattr(self._local, "tagger", None)
        if tagger is None:
            import pycrfsuite

            if self.model is None:
                raise RuntimeError("the span tagger is not fitted")
            tagger = pycrfsuite.Tagger()
            tagger.open_inmemory(self.model)
            self._local.tagger = tagger
        return tagger

    def columns(self, document: Document, candidates: Sequence[Candidate],
                attributes: Any = None) -> np.ndarray:
        """The :data:`TAGGER_FEATURES` of each candidate's span (float64); ``attributes``:
        the document's :meth:`attributes`, when already computed."""
        out = np.zeros((len(candidates), len(TAGGER_FEATURES)))
        tokens = _tokens(document.text)
        if not len(candidates) or not tokens or self.is_blank:
            return out
        tagger = self._tagger()
        tagger.set(attributes if attributes is not None
                   else word_features(document.text, tokens, candidates))
        labels = tagger.labels()
        begin = np.zeros(len(tokens))
        inside = np.zeros(len(tokens))
        for label in labels:
            into = begin if label.startswith("B") else inside if label.startswith("I") else None
            if into is not None:
                into += [tagger.marginal(label, t) for t in range(len(tokens))]
        starts = [s for s, _ in tokens]
        spans: dict[tuple[int, int], np.ndarray] = {}
        for i, c in enumerate(candidates):
            key = (c.span.start, c.span.end)
            row = spans.get(key)
            if row is None:
                row = spans[key] = _span_row(tokens, key, begin, inside, starts)
            out[i] = row
        return out

    def save(self, path: Path) -> None:
        """Write the CRFsuite model file."""
        if self.model is None:
            raise RuntimeError("cannot save an unfitted span tagger")
        path.write_bytes(self.model)

    @classmethod
    def load(cls, path: Path) -> SpanTagger:
        """Read a model written by :meth:`save`.

        Raises:
            ArtifactError: If the file is missing or is not a CRFsuite model.
        """
        if not path.is_file():
            raise ArtifactError(f"saved filter lacks its span tagger {path}")
        data = path.read_bytes()
        # CRFsuite's header: magic, total size (little-endian), version ...; a truncated or
        # foreign file is refused here rather than handed to the C parser.
        if len(data) < 48 or data[:4] != _MAGIC or int.from_bytes(data[4:8], "little") \
                != len(data):
            raise ArtifactError(f"{path} is not a CRFsuite model (bad header or size); "
                                "retrain the pipeline")
        return cls(data)


def _span_row(tokens: list[tuple[int, int]], key: tuple[int, int], begin: np.ndarray,
              inside: np.ndarray, starts: list[int] | None = None) -> np.ndarray:
    a, b = _token_range(tokens, *key, starts)
    if a < 0:
        return np.zeros(len(TAGGER_FEATURES))
    p_begin = float(begin[a])
    p_inside = float(inside[a + 1:b + 1].min()) if b > a else 1.0
    p_end = 1.0 - float(inside[b + 1]) if b + 1 < len(inside) else 1.0
    return np.array([p_begin, p_inside, p_end, p_begin * p_inside * p_end])
