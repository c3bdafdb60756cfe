"""``xlnel.tfidf_char.v1``: all word spans matched against the dictionary by TF-IDF cosine."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import numpy as np

from xlnel.candidates.base import CandidateGenerator, register_generator
from xlnel.candidates.names import (
    Provenance,
    Target,
    index_names,
    read_provenance,
    target_rows,
    write_provenance,
)
from xlnel.candidates.spans import generate_spans
from xlnel.candidates.tfidf import MatcherConfig, TfidfMatcher
from xlnel.candidates.tiers import tier_hits
from xlnel.config import CandidatesConfig
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ArtifactError, ConfigError
from xlnel.normalization import normalize_string
from xlnel.stopwords import load_stopwords
from xlnel.types import Candidate, Document, Span

logger = logging.getLogger(__name__)


def matcher_config(config: CandidatesConfig) -> MatcherConfig:
    """The matcher settings contained in a candidates config (its fields of the same names)."""
    return MatcherConfig(**{f.name: getattr(config, f.name) for f in fields(MatcherConfig)})


@register_generator
class TfidfCandidateGenerator(CandidateGenerator):
    """Spans of 1..k words matched to normalised dictionary names (high-recall matching).

    Names that normalise to the same string are indexed once; each indexed string keeps the
    (concept id, original name) pairs it stands for, so a match yields one candidate per concept,
    with the source and builder score of that concept's entry.
    """

    registered_name = "xlnel.tfidf_char.v1"
    trained_keys = frozenset({"ngram_min", "ngram_max", "sublinear_tf", "use_idf", "pad_ends",
                              "options"})

    def __init__(self, config: CandidatesConfig, lang: str) -> None:
        if config.options:
            raise ConfigError(f"{self.registered_name} takes no candidates.options, got "
                              f"{sorted(config.options)}")
        self.config = config
        self.lang = lang
        self.stopwords = load_stopwords(lang, config.stopwords)
        self.matcher = TfidfMatcher(matcher_config(config))
        self._targets: list[list[tuple[str, str]]] = []  # per indexed string: (concept, name)
        self._provenance: list[list[Provenance]] = []  # parallel to _targets; may be empty
        self._rows: list[list[Target]] = []  # both joined, what a match yields

    def fit(self, dictionary: Dictionary) -> TfidfCandidateGenerator:
        """Index every name of ``dictionary``.

        Raises:
            ValueError: If the dictionary has no name with any letter or digit.
        """
        names = index_names(dictionary, self.lang)
        self.matcher.fit(names.keys)
        self._targets, self._provenance = names.targets, names.provenance
        self._rows = target_rows(self._targets, self._provenance)
        return self

    def spans(self, document: Document) -> list[Span]:
        """Candidate spans of a document (before matching)."""
        return generate_spans(document.text, self.lang, max_words=self.config.max_words,
                              stopwords=self.stopwords,
                              strip_prefixes=self.config.strip_prefixes,
                              compound_words=self.config.compound_words)

    def _generate_batch(self, documents: Sequence[Document],
                        spans: Sequence[Sequence[Span]] | None) -> list[list[Candidate]]:
        """Candidates of each document; each distinct normalised span is searched once.

        Args:
            documents: The documents.
            spans: Spans per document to match (a tagger's mentions); ``None`` = all spans.
        """
        doc_spans = ([self.spans(d) for d in documents] if spans is None
                     else [list(s) for s in spans])
        keys: dict[str, int] = {}
        span_keys = [[keys.setdefault(normalize_string(s.text, self.lang), len(keys))
                      for s in one] for one in doc_spans]
        rows, cfg = self._rows, self.config
        # (concept id, name, score, source, entry score) of each distinct span text, shared
        # by its spans; generated names' hits in their tier
        found = [tier_hits([(cid, name, m.score, source, entry_score) for m in row
                            for cid, name, source, entry_score in rows[m.name_index]],
                           cfg.generated_fallback, cfg.generated_min_score,
                           cfg.generated_min_chars)
                 for row in self.matcher.search(list(keys))]
        out: list[list[Candidate]] = []
        for one, ks in zip(doc_spans, span_keys, strict=True):
            cands: list[Candidate] = []
            for span, k in zip(one, ks, strict=True):
                cands += [Candidate(span, *hit) for hit in found[k]]
            out.append(cands)
        return out

    def pair_scores(self, texts: Sequence[str], names: Sequence[str]) -> np.ndarray:
        """The matcher's score of each (span text, name) pair, as :meth:`generate_batch`
        would give it had the name been in the dictionary."""
        return self.matcher.pair_scores([normalize_string(t, self.lang) for t in texts],
                                        [normalize_string(n, self.lang) for n in names])

    def save(self, directory: Path) -> None:
        """Write the matcher, the indexed strings' targets and their provenance."""
        directory.mkdir(parents=True, exist_ok=True)
        self.matcher.save(directory / "matcher")
        (directory / "targets.json").write_text(
            json.dumps(self._targets, ensure_ascii=False), encoding="utf-8")
        write_provenance(directory, self._provenance)

    @classmethod
    def load(cls, directory: Path, config: CandidatesConfig,
             lang: str) -> TfidfCandidateGenerator:
        """Read a generator written by :meth:`save`; search settings come from ``config``.

        A folder without ``provenance.json`` loads too; its candidates then carry no source.
        """
        if not (directory / "targets.json").is_file():
            raise ArtifactError(f"saved candidate generator in {directory} lacks targets.json")
        gen = cls(config, lang)
        gen.matcher = TfidfMatcher.load(directory / "matcher", matcher_config(config))
        raw = json.loads((directory / "targets.json").read_text(encoding="utf-8"))
        gen._targets = [[(cid, name) for cid, name in t] for t in raw]
        gen._provenance = read_provenance(directory, gen._targets)
        gen._rows = target_rows(gen._targets, gen._provenance)
        return gen
