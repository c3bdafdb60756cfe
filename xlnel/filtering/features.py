"""Match features of (span, name) candidates for the gradient-boosted filter.

Besides string similarity and shape, the strongest signals are *priors* learnt from annotated
documents: how often a span text was a gold mention when it occurred, and how often a name was
the right one when it was proposed. On the training documents they are computed out of fold, so
the classifier never sees a prior that already knows the answer.

With a context ``window`` of Ws > 0 words, two more span features summarise the words around the
span (Ws on each side): the highest and the mean share of gold spans among the spans that had
each of those words in their window.

With ``provenance``, the last columns (:data:`~xlnel.filtering.entry_features.PROVENANCE_FEATURES`)
say where the candidate's dictionary entry came from: a generated name (translated, composed ...)
is a weaker witness than a knowledge-base or annotation name, and a span matched only by generated
names is more often an everyday word.

With ``concepts``, three more columns (:data:`~xlnel.filtering.entry_features.CONCEPT_FEATURES`)
tell what the training documents say about the candidate's *concept* rather than its text: how
often spans whose best matches included the concept were gold (the best over the concepts the
candidate's name has at its span, since a name may stand for several), how many such spans were
seen, and how many concepts the name has at the span. A dictionary of generated names reaches
concepts the annotations use under other surface forms (inflections, spellings), and an everyday
word rendered as a name tends to stand for many concepts.

The name prior counts, by default (``name_prior="all"``), every candidate of the name, however
loosely it matched its span. With ``name_prior="best"`` it counts a name once per span and only
where it is among the span's best matches: how often a span that the name matched best was
gold. A large generated dictionary proposes each name at many spans it barely resembles (a
drug name at an everyday word sharing a few letters), so the share over all candidates says
little about the name's exact matches, which are the rows a per-span filter scores.

With ``lexical``, the last columns are :data:`~xlnel.filtering.lexical_features.LEXICAL_FEATURES`:
the priors of the span's last word and of its ending, and whether the document defines the
span as an abbreviation or as the long form of one.

With ``ngrams``, the last two columns are :data:`~xlnel.filtering.ngram_priors.NGRAM_FEATURES`:
the mention and name priors predicted from the character n-grams of the span's text and of the
name, which reach texts the training documents never showed.

With ``edits``, two columns after the pair features are
:data:`~xlnel.filtering.edit_features.EDIT_FEATURES`: the prior of the edit between the span and
the candidate's name (an attached article, an ending, a spelling letter), learned over the spans
whose best name differed from them by the same edit.

With ``kinds``, the last column is :data:`~xlnel.filtering.concept_kinds.KIND_FEATURES`: the
predicted chance that the candidate's name stands for a concept of a kind the training documents
annotate (a disease or a chemical rather than an organ or an occupation).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from xlnel.filtering.concept_kinds import (
    KIND_FEATURES,
    counts_toward_kind,
    kind_key,
    kind_table,
)
from xlnel.filtering.edit_features import EDIT_FEATURES, edit_columns, edit_key
from xlnel.filtering.entry_features import (
    CONCEPT_FEATURES,
    PROVENANCE_FEATURES,
    concept_columns,
    provenance_columns,
)
from xlnel.filtering.lexical_features import LEXICAL_FEATURES, lexical_columns, lexical_keys
from xlnel.filtering.ngram_priors import NGRAM_FEATURES, NGRAM_TABLES, NgramPrior
from xlnel.filtering.span_geometry import (
    inside_better_span,
    overlaps_better_span,
    scores_above,
    second_best,
)
from xlnel.normalization import normalize_string
from xlnel.types import Candidate, Document

_WORD = re.compile(r"\w+")

#: Features of the span alone (computed once per span), then of the (span, name) pair.
SPAN_FEATURES = (
    "span_chars", "span_words", "prefix_chars", "prev_stop", "next_stop", "prev_boundary",
    "next_boundary", "has_digit", "latin_in_other_script", "inside_better_span",
    "n_candidates", "mention_prior", "mention_seen", "context_prior",
)
PAIR_FEATURES = (
    "score", "rank", "gap_to_best", "name_chars", "length_ratio", "exact", "name_prior",
    "name_seen",
)
FEATURE_NAMES = SPAN_FEATURES + PAIR_FEATURES
#: Added after the span features when the extractor has a context window.
WINDOW_FEATURES = ("window_prior_max", "window_prior_mean")
#: Added after those when the extractor is ``extended``: the next word's prior, the prior of
#: the whole word with its stripped prefix, how often the text recurs among the document's
#: spans, the matcher's margin between the span's two best names, and whether an overlapping
#: span (not only a containing one) matches better.
EXTENDED_FEATURES = ("next_context_prior", "word_prior", "word_seen", "doc_repeats",
                     "best_margin", "overlaps_better_span")
#: Key prefix of next-word counts in the ``context`` table (previous words are plain keys).
NEXT = "\u2192"
#: Values of :class:`FeatureExtractor`'s ``name_prior``: which candidates the name prior counts.
NAME_PRIORS = ("all", "best")


#: Prior tables that every saved filter holds (the others came with options).
REQUIRED_TABLES = ("mention", "name", "context")


@dataclass
class Priors:
    """Counts of (positive, seen) per normalised mention text, name, previous word, word of
    the context window, concept, (``lexical``) last word or ending of a span, (``kinds``)
    concept and name (:func:`~xlnel.filtering.concept_kinds.kind_key`) and (``edits``) edit
    between a span and its best name (:func:`~xlnel.filtering.edit_features.edit_key`)."""

    mention: dict[str, list[int]] = field(default_factory=dict)
    name: dict[str, list[int]] = field(default_factory=dict)
    context: dict[str, list[int]] = field(default_factory=dict)
    window: dict[str, list[int]] = field(default_factory=dict)
    concept: dict[str, list[int]] = field(default_factory=dict)
    lexical: dict[str, list[int]] = field(default_factory=dict)
    kind: dict[str, list[int]] = field(default_factory=dict)
    edit: dict[str, list[int]] = field(default_factory=dict)
    #: Bumped by every :meth:`add`, so caches of looked-up rates know when they are stale.
    version: int = field(default=0, init=False, repr=False, compare=False)

    def add(self, table: str, key: str, positive: bool) -> None:
        """Count one occurrence of ``key`` in ``table``."""
        self.version += 1
        counts = getattr(self, table).setdefault(key, [0, 0])
        counts[0] += int(positive)
        counts[1] += 1

    def rate(self, table: str, key: str, alpha: float = 1.0) -> tuple[float, int]:
        """Smoothed share of positive occurrences and the number seen."""
        pos, seen = getattr(self, table).get(key, (0, 0))
        return (pos + 0.1 * alpha) / (seen + alpha), seen

    def tables(self) -> dict[str, dict[str, list[int]]]:
        """Every table by name, as a saved filter's ``priors.json`` holds them."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    @classmethod
    def from_tables(cls, tables: Mapping[str, dict[str, list[int]]]) -> Priors:
        """Priors from :meth:`tables`; the tables of options newer than the saved filter are
        empty.

        Raises:
            KeyError: ``tables`` lacks one of :data:`REQUIRED_TABLES`.
        """
        return cls(**{f.name: tables[f.name] if f.name in REQUIRED_TABLES
                      else tables.get(f.name, {}) for f in fields(cls) if f.init})


class FeatureExtractor:
    """Turns candidates of a document into a feature matrix (one row per candidate)."""

    def __init__(self, lang: str, stopwords: frozenset[str], window: int = 0,
                 extended: bool = False, provenance: bool = False,
                 concepts: bool = False, name_prior: str = "all",
                 lexical: bool = False, ngrams: bool = False, kinds: bool = False,
                 edits: bool = False) -> None:
        if window < 0:
            raise ValueError(f"window must be at least 0 words, got {window}")
        if name_prior not in NAME_PRIORS:
            raise ValueError(f"name_prior must be one of {', '.join(NAME_PRIORS)}, "
                             f"got {name_prior!r}")
        self.name_prior = name_prior
        self.lang = lang
        self.stopwords = stopwords
        self.window = window
        self.extended = extended
        self.provenance = provenance
        self.concepts = concepts
        self.lexical = lexical
        self.ngrams = ngrams
        self.kinds = kinds
        self.edits = edits
        # the n-gram models of the priors they were fitted on (identity and version), and
        # their predictions per text
        self._ngram_of: tuple[Priors, int] | None = None
        self._ngram_models: tuple[NgramPrior, ...] = ()
        self._ngram_cache: tuple[dict[str, float], ...] = ()
        # the same for the kind model: (priors, their version, model)
        self._kind: tuple[Priors, int, NgramPrior] | None = None
        self._kind_cache: dict[str, float] = {}
        # the same span text recurs for each of its candidates and names recur across spans
        self._norms: dict[str, str] = {}
        # per name: (normalised name, its length, name prior, log1p(seen)) under _rows_of
        self._name_rows: dict[str, tuple[str, float, float, float]] = {}
        self._rows_of: tuple[Priors, int] | None = None

    def norm(self, text: str) -> str:
        """The normalised form used as the key of priors."""
        norm = self._norms.get(text)
        if norm is None:
            if len(self._norms) >= 1_000_000:  # bounded, for linking whole corpora
                self._norms.clear()
            norm = self._norms[text] = normalize_string(text, self.lang)
        return norm

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Names of the columns :meth:`transform` returns."""
        return (SPAN_FEATURES + (WINDOW_FEATURES if self.window else ())
                + (EXTENDED_FEATURES if self.extended else ()) + PAIR_FEATURES
                + (EDIT_FEATURES if self.edits else ())
                + (PROVENANCE_FEATURES if self.provenance else ())
                + (CONCEPT_FEATURES if self.concepts else ())
                + (LEXICAL_FEATURES if self.lexical else ())
                + (NGRAM_FEATURES if self.ngrams else ())
                + (KIND_FEATURES if self.kinds else ()))

    def ngram_models(self, priors: Priors) -> tuple[NgramPrior, ...]:
        """The n-gram models of ``priors`` (:data:`NGRAM_TABLES` order), fitted on first use
        and kept while the same priors stay unchanged."""
        if self._ngram_of is None or self._ngram_of[0] is not priors \
                or self._ngram_of[1] != priors.version:
            self.set_ngram_models(priors, tuple(NgramPrior.fit(getattr(priors, table))
                                                for table in NGRAM_TABLES))
        return self._ngram_models

    def set_ngram_models(self, priors: Priors, models: Sequence[NgramPrior]) -> None:
        """Use ``models`` (fitted on ``priors``, e.g. loaded with a saved filter)."""
        self._ngram_of = (priors, priors.version)
        self._ngram_models = tuple(models)
        self._ngram_cache = tuple({} for _ in models)

    def kind_model(self, priors: Priors) -> NgramPrior:
        """The kind model of ``priors`` (fitted on their ``kind`` table through
        :func:`~xlnel.filtering.concept_kinds.kind_table`), fitted on first use and kept while
        the same priors stay unchanged."""
        if self._kind is None or self._kind[0] is not priors or self._kind[1] != priors.version:
            self.set_kind_model(priors, NgramPrior.fit(kind_table(priors.kind)))
            assert self._kind is not None
        return self._kind[2]

    def set_kind_model(self, priors: Priors, model: NgramPrior) -> None:
        """Use ``model`` (fitted on ``priors``, e.g. loaded with a saved filter)."""
        self._kind = (priors, priors.version, model)
        self._kind_cache = {}

    def _kind_values(self, texts: Sequence[str], priors: Priors) -> np.ndarray:
        """The kind model's prediction for each normalised name."""
        return _cached_predictions(self.kind_model(priors), self._kind_cache, texts)

    def _ngram_values(self, table: int, texts: Sequence[str], priors: Priors) -> np.ndarray:
        """The n-gram prior of each normalised text from model ``table``."""
        model = self.ngram_models(priors)[table]
        return _cached_predictions(model, self._ngram_cache[table], texts)

    def count(self, priors: Priors, document: Document, candidates: Sequence[Candidate],
              labels: np.ndarray) -> None:
        """Add one document's candidates to the prior counts."""
        span_pos: dict[tuple[int, int], bool] = {}
        word_start: dict[tuple[int, int], int] = {}
        for cand, y in zip(candidates, labels, strict=True):
            if self.name_prior == "all":
                priors.add("name", self.norm(cand.name), bool(y))
            if self.kinds and counts_toward_kind(cand.score, bool(y)):
                priors.add("kind", kind_key(cand.concept_id, self.norm(cand.name)), bool(y))
            key = (cand.span.start, cand.span.end)
            span_pos[key] = span_pos.get(key, False) or bool(y)
            word_start[key] = cand.span.start - len(cand.span.stripped_prefix)
        if self.name_prior == "best":
            # a name standing for several concepts at a span counts once there
            best_names = dict.fromkeys((key, self.norm(c.name))
                                       for key, c in _at_span_best(candidates))
            for key, name in best_names:
                priors.add("name", name, span_pos[key])
        if self.concepts:
            for key, cid in dict.fromkeys((key, c.concept_id)
                                          for key, c in _at_span_best(candidates)):
                priors.add("concept", cid, span_pos[key])
        if self.edits:
            # an edit counts once per span, from the span's best names
            for key, edit in dict.fromkeys(
                    (key, edit_key(self.norm(c.span.text), self.norm(c.name)))
                    for key, c in _at_span_best(candidates)):
                priors.add("edit", edit, span_pos[key])
        for (s, e), y in span_pos.items():
            norm = self.norm(document.text[s:e])
            priors.add("mention", norm, y)
            if self.lexical:
                for lex_key in lexical_keys(norm):
                    priors.add("lexical", lex_key, y)
            priors.add("context", self._prev_word(document.text, s), y)
            if self.extended:
                priors.add("context", NEXT + self._next_word(document.text, e), y)
            if self.window:
                for word in self._window_words(document.text, word_start[(s, e)], e):
                    priors.add("window", word, y)

    def _window_words(self, text: str, start: int, end: int) -> list[str]:
        """The distinct normalised words among ``window`` words on each side of
        ``text[start:end]``, sorted (so feature values do not depend on hash order)."""
        reach = 40 * self.window
        left = _WORD.findall(text[max(0, start - reach):start])[-self.window:]
        right = _WORD.findall(text[end:end + reach])[:self.window]
        return sorted({self.norm(w) for w in left + right})

    def _prev_word(self, text: str, start: int) -> str:
        words = _WORD.findall(text[max(0, start - 40):start])
        return self.norm(words[-1]) if words else "<s>"

    def _next_word(self, text: str, end: int) -> str:
        m = _WORD.search(text, end, min(len(text), end + 40))
        return self.norm(m.group()) if m else "</s>"

    def transform(self, document: Document, candidates: Sequence[Candidate],
                  priors: Priors) -> np.ndarray:
        """Feature matrix of shape (len(candidates), len(self.feature_names)).

        Span features are computed once per span and the name's features once per distinct
        name; the per-candidate columns are filled by array operations.
        """
        n = len(candidates)
        rows = np.zeros((n, len(self.feature_names)), dtype=np.float32)
        if not n:
            return rows
        groups: dict[tuple[int, int], int] = {}
        group = np.fromiter((groups.setdefault((c.span.start, c.span.end), len(groups))
                             for c in candidates), dtype=np.int64, count=n)
        scores = np.fromiter((c.score for c in candidates), dtype=np.float64, count=n)
        better, best = scores_above(group, scores, len(groups))
        sizes = np.bincount(group, minlength=len(groups))
        first = np.unique(group, return_index=True)[1]  # each span's first candidate
        better_inside = inside_better_span({key: float(best[g]) for key, g in groups.items()})
        span_norms = [self.norm(candidates[i].span.text) for i in first.tolist()]
        n_concept = len(CONCEPT_FEATURES) if self.concepts else 0
        n_lexical = len(LEXICAL_FEATURES) if self.lexical else 0
        n_ngram = len(NGRAM_FEATURES) if self.ngrams else 0
        n_kind = len(KIND_FEATURES) if self.kinds else 0
        n_last = ((len(PROVENANCE_FEATURES) if self.provenance else 0) + n_concept + n_lexical
                  + n_ngram + n_kind)
        n_edit = len(EDIT_FEATURES) if self.edits else 0
        n_span = len(self.feature_names) - len(PAIR_FEATURES) - n_edit - n_last
        n_own = n_span - (len(EXTENDED_FEATURES) if self.extended else 0)
        span_rows = np.array(
            [self._span_features(document.text, candidates[i], int(sizes[g]),
                                 key in better_inside, priors)
             for g, (key, i) in enumerate(zip(groups, first.tolist(), strict=True))],
            dtype=np.float64).reshape(len(groups), n_own)
        if self.extended:
            span_rows = np.hstack([span_rows, self._extended_columns(
                document.text, candidates, first, groups, group, scores, best, span_norms,
                priors)])
        rows[:, :n_span] = span_rows[group]
        rows[:, n_span:n_span + len(PAIR_FEATURES)] = self._pair_columns(
            candidates, group, scores, better, best, span_norms, priors)
        name_norms = ([self.norm(c.name) for c in candidates]
                      if self.edits or self.ngrams or self.kinds else [])
        if self.edits:
            start = n_span + len(PAIR_FEATURES)
            rows[:, start:start + n_edit] = edit_columns(
                [edit_key(span_norms[g], name)
                 for name, g in zip(name_norms, group.tolist(), strict=True)], priors)
        end = rows.shape[1] - n_lexical - n_ngram - n_kind
        if self.provenance:
            rows[:, end - n_concept - len(PROVENANCE_FEATURES):end - n_concept] = \
                provenance_columns(candidates, group, scores, len(groups))
        if self.concepts:
            rows[:, end - n_concept:end] = concept_columns(candidates, group, priors)
        if self.lexical:
            rows[:, end:end + n_lexical] = lexical_columns(document.text, list(groups),
                                                           span_norms, priors)[group]
        if self.ngrams:
            rows[:, -n_kind - 2] = self._ngram_values(0, span_norms, priors)[group]
            rows[:, -n_kind - 1] = self._ngram_values(1, name_norms, priors)
        if self.kinds:
            rows[:, -1] = self._kind_values(name_norms, priors)
        return rows

    def _extended_columns(self, text: str, candidates: Sequence[Candidate], first: np.ndarray,
                          groups: dict[tuple[int, int], int], group: np.ndarray,
                          scores: np.ndarray, best: np.ndarray, span_norms: list[str],
                          priors: Priors) -> np.ndarray:
        """The :data:`EXTENDED_FEATURES` columns of each span, in float64."""
        out = np.zeros((len(groups), len(EXTENDED_FEATURES)))
        repeats = Counter(span_norms)
        second = second_best(group, scores, len(groups))
        overlapping = overlaps_better_span({key: float(best[g]) for key, g in groups.items()})
        for g, i in enumerate(first.tolist()):
            span = candidates[i].span
            word_start = span.start - len(span.stripped_prefix)
            word_prior, word_seen = priors.rate("mention", self.norm(text[word_start:span.end]))
            out[g] = (priors.rate("context", NEXT + self._next_word(text, span.end))[0],
                      word_prior, math.log1p(word_seen), math.log1p(repeats[span_norms[g]] - 1),
                      best[g] - second[g], float((span.start, span.end) in overlapping))
        return out

    def _pair_columns(self, candidates: Sequence[Candidate], group: np.ndarray,
                      scores: np.ndarray, better: np.ndarray, best: np.ndarray,
                      span_norms: list[str], priors: Priors) -> np.ndarray:
        """The :data:`PAIR_FEATURES` columns, in float64."""
        names: dict[str, int] = {}
        name_of = np.fromiter((names.setdefault(c.name, len(names)) for c in candidates),
                              dtype=np.int64, count=len(candidates))
        looked_up = [self._name_row(priors, name) for name in names]
        norms = [row[0] for row in looked_up]
        per_name = np.array([row[1:] for row in looked_up],
                            dtype=np.float64).reshape(len(norms), 3)
        name_chars = per_name[name_of, 0]
        span_chars = np.array([max(1, len(norm)) for norm in span_norms],
                              dtype=np.float64)[group]
        exact = np.fromiter((norms[j] == span_norms[g] for j, g in
                             zip(name_of.tolist(), group.tolist(), strict=True)),
                            dtype=np.float64, count=len(candidates))
        return np.column_stack([scores, better, best[group] - scores, name_chars,
                                name_chars / span_chars, exact, per_name[name_of, 1],
                                per_name[name_of, 2]])

    def _name_row(self, priors: Priors, name: str) -> tuple[str, float, float, float]:
        """A name's normalised form, its length, prior and log1p(seen), cached while the same
        priors stay unchanged (names recur across documents)."""
        if self._rows_of is None or self._rows_of[0] is not priors \
                or self._rows_of[1] != priors.version or len(self._name_rows) >= 1_000_000:
            self._name_rows.clear()
            self._rows_of = (priors, priors.version)
        row = self._name_rows.get(name)
        if row is None:
            norm = self.norm(name)
            prior, seen = priors.rate("name", norm)
            row = self._name_rows[name] = (norm, float(len(norm)), prior, math.log1p(seen))
        return row

    def _span_features(self, text: str, c: Candidate, n_candidates: int, inside_better: bool,
                       priors: Priors) -> list[float]:
        s, e = c.span.start, c.span.end
        word_start = s - len(c.span.stripped_prefix)
        before = text[word_start - 1] if word_start > 0 else "\n"
        after = text[e] if e < len(text) else "\n"
        prev_word, next_word = self._prev_word(text, word_start), self._next_word(text, e)
        latin = self.lang != "en" and bool(re.search(r"[A-Za-z]", c.span.text))
        mention_prior, mention_seen = priors.rate("mention", self.norm(c.span.text))
        context_prior, _ = priors.rate("context", prev_word)
        window: list[float] = []
        if self.window:
            rates = [priors.rate("window", w)[0]
                     for w in self._window_words(text, word_start, e)] or [priors.rate(
                         "window", "")[0]]
            window = [max(rates), float(np.mean(rates))]
        return [float(e - s), float(len(c.span.text.split())), float(len(c.span.stripped_prefix)),
                float(prev_word in self.stopwords), float(next_word in self.stopwords),
                float(not before.isalnum()), float(not after.isalnum()),
                float(any(ch.isdigit() for ch in c.span.text)), float(latin),
                float(inside_better), float(n_candidates), mention_prior,
                float(np.log1p(mention_seen)), context_prior, *window]


def _cached_predictions(model: NgramPrior, cache: dict[str, float],
                        texts: Sequence[str]) -> np.ndarray:
    """``model``'s prediction for each text, through ``cache`` (texts recur across documents;
    the cache is emptied when it reaches a million texts, for linking whole corpora)."""
    todo = [t for t in dict.fromkeys(texts) if t not in cache]
    if todo:
        if len(cache) >= 1_000_000:
            cache.clear()
        cache.update(zip(todo, model.predict(todo).tolist(), strict=True))
    return np.fromiter((cache[t] for t in texts), dtype=np.float64, count=len(texts))


def _at_span_best(candidates: Sequence[Candidate]
                  ) -> Iterator[tuple[tuple[int, int], Candidate]]:
    """Each candidate with its span's best matcher score, with the span's (start, end)."""
    best: dict[tuple[int, int], float] = {}
    for c in candidates:
        key = (c.span.start, c.span.end)
        best[key] = max(best.get(key, c.score), c.score)
    for c in candidates:
        key = (c.span.start, c.span.end)
        if c.score >= best[key]:
            yield key, c


def count_priors(extractor: FeatureExtractor, documents: Sequence[Document],
                 candidates: Sequence[Sequence[Candidate]],
                 labels: Sequence[np.ndarray]) -> Priors:
    """Prior counts over many documents."""
    priors = Priors()
    for d, c, y in zip(documents, candidates, labels, strict=True):
        extractor.count(priors, d, c, y)
    return priors
