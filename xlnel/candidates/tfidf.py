"""High-recall matching: exact top-m cosine search over TF-IDF character n-gram vectors.

Every name and span becomes an L2-normalised TF-IDF vector of its character n-grams (1-3 by
default). The matcher returns, for each query, the ``top_m`` names whose cosine is at least
``threshold`` - exactly, with no approximate index.

Scoring every name is what makes naive matching slow: nearly every name shares some character
unigram with every query. The search therefore filters first. Split a query's features into a
*prefix* P (its heaviest weights) and a *suffix* S with ``||q_S|| < threshold``. By
Cauchy-Schwarz, a name sharing no feature of P scores at most ``||q_S|| * ||n|| < threshold``, so
only names holding at least one feature of P can qualify. Those names are scored exactly with a
sparse product; the others are never touched. Queries are processed in chunks, so the memory is
bounded by ``chunk_size`` and never a dense spans x names matrix.
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from xlnel import __version__
from xlnel.errors import ArtifactError, ConfigError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatcherConfig:
    """Hyperparameters of the TF-IDF character n-gram matcher.

    Attributes:
        ngram_min: Smallest character n-gram.
        ngram_max: Largest character n-gram.
        top_m: Names kept per query.
        threshold: Minimum cosine similarity (inclusive); 0.0 is valid but scores every name.
        sublinear_tf: Use ``1 + log(tf)`` instead of raw counts.
        use_idf: Weight n-grams by inverse document frequency (False gives plain TF vectors).
        chunk_size: Queries scored together; bounds memory.
    """

    ngram_min: int = 1
    ngram_max: int = 3
    top_m: int = 50
    threshold: float = 0.4
    sublinear_tf: bool = False
    use_idf: bool = True
    chunk_size: int = 256

    def __post_init__(self) -> None:
        if not 1 <= self.ngram_min <= self.ngram_max:
            raise ConfigError(f"need 1 <= ngram_min <= ngram_max, got {self.ngram_min}, "
                              f"{self.ngram_max}")
        if self.top_m < 1:
            raise ConfigError(f"top_m must be at least 1, got {self.top_m}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {self.threshold}")
        if self.chunk_size < 1:
            raise ConfigError(f"chunk_size must be at least 1, got {self.chunk_size}")


def char_ngrams(text: str, lo: int, hi: int) -> list[str]:
    """All character n-grams of ``text`` with ``lo <= n <= hi``."""
    grams: list[str] = []
    length = len(text)
    for n in range(lo, hi + 1):
        grams.extend(text[i:i + n] for i in range(length - n + 1))
    return grams


@dataclass(frozen=True)
class Match:
    """One name found for a query: the index of the name in the matcher and the cosine."""

    name_index: int
    score: float


class TfidfMatcher:
    """Exact top-m cosine search of query strings against a fixed list of (normalised) names."""

    def __init__(self, config: MatcherConfig | None = None) -> None:
        self.config = config if config is not None else MatcherConfig()
        self.names: list[str] = []
        self.vocabulary: dict[str, int] = {}
        self.idf = np.zeros(0, dtype=np.float32)
        self._oov_idf = 1.0
        self._names_by_feature: sp.csr_matrix | None = None  # features x names, the inverted index
        self._name_vectors: sp.csr_matrix | None = None  # names x features

    # ----------------------------------------------------------------------------------- fitting
    def fit(self, names: Sequence[str]) -> TfidfMatcher:
        """Index ``names`` (already normalised; duplicates should be removed by the caller).

        Raises:
            ValueError: If ``names`` is empty.
        """
        if not names:
            raise ValueError("cannot fit the matcher on an empty list of names")
        cfg = self.config
        self.names = list(names)
        vocabulary: dict[str, int] = {}
        indptr, indices, counts = [0], [], []
        for name in self.names:
            grams = Counter(char_ngrams(name, cfg.ngram_min, cfg.ngram_max))
            for gram, count in grams.items():
                indices.append(vocabulary.setdefault(gram, len(vocabulary)))
                counts.append(count)
            indptr.append(len(indices))
        tf = sp.csr_matrix((np.asarray(counts, dtype=np.float32), indices, indptr),
                           shape=(len(self.names), len(vocabulary)))
        self.vocabulary = vocabulary
        n_docs = len(self.names)
        if cfg.use_idf:
            df = np.bincount(tf.indices, minlength=len(vocabulary))
            # smooth idf as scikit-learn's TfidfVectorizer; an unseen n-gram gets df = 0
            self.idf = (np.log((1 + n_docs) / (1 + df)) + 1).astype(np.float32)
            self._oov_idf = float(math.log(1 + n_docs) + 1)
        else:
            self.idf = np.ones(len(vocabulary), dtype=np.float32)
            self._oov_idf = 1.0
        self._set_vectors(self._weigh(tf))
        logger.info("matcher indexed %d names, %d n-grams", n_docs, len(vocabulary))
        return self

    def _weigh(self, tf: sp.csr_matrix) -> sp.csr_matrix:
        tf = tf.astype(np.float32, copy=True)
        if self.config.sublinear_tf:
            tf.data = 1 + np.log(tf.data)
        tf = tf @ sp.diags(self.idf, format="csr")
        norms = np.sqrt(np.asarray(tf.multiply(tf).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1 / norms) @ tf, dtype=np.float32)

    def _set_vectors(self, vectors: sp.csr_matrix) -> None:
        vectors.sort_indices()
        self._name_vectors = vectors
        self._names_by_feature = vectors.T.tocsr()

    # ---------------------------------------------------------------------------------- querying
    def _vectorize(self, queries: Sequence[str]) -> sp.csr_matrix:
        """Query vectors whose norm counts n-grams unknown to the index, so cosines stay honest."""
        cfg = self.config
        indptr, indices, values = [0], [], []
        for query in queries:
            grams = Counter(char_ngrams(query, cfg.ngram_min, cfg.ngram_max))
            row_idx, row_val, oov_sq = [], [], 0.0
            for gram, count in grams.items():
                tf = 1 + math.log(count) if cfg.sublinear_tf else float(count)
                j = self.vocabulary.get(gram)
                if j is None:
                    oov_sq += (tf * self._oov_idf) ** 2
                else:
                    row_idx.append(j)
                    row_val.append(tf * float(self.idf[j]))
            norm = math.sqrt(sum(v * v for v in row_val) + oov_sq)
            if norm > 0:
                values.extend(v / norm for v in row_val)
                indices.extend(row_idx)
            indptr.append(len(indices))
        return sp.csr_matrix((np.asarray(values, dtype=np.float32), indices, indptr),
                             shape=(len(queries), len(self.vocabulary)))

    def search(self, queries: Sequence[str]) -> list[list[Match]]:
        """Top ``top_m`` names with cosine >= ``threshold`` for each query, best first.

        Ties are broken by name index so that results are deterministic. A name sharing no
        n-gram with the query is never returned, even with threshold 0.
        """
        if self._name_vectors is None:
            raise RuntimeError("the matcher is not fitted; call fit() or load() first")
        results: list[list[Match]] = []
        step = self.config.chunk_size
        for lo in range(0, len(queries), step):
            q = self._vectorize(queries[lo:lo + step])
            results.extend(self._search_chunk(q))
        return results

    def _prefix_mask(self, q: sp.csr_matrix) -> sp.csr_matrix:
        """Keep, per row, the heaviest features whose removal would drop the rest below th."""
        th = self.config.threshold
        data = q.data.copy()
        for i in range(q.shape[0]):
            a, b = q.indptr[i], q.indptr[i + 1]
            if a == b:
                continue
            row = data[a:b]
            order = np.argsort(row)  # lightest first
            suffix_sq = np.cumsum(row[order] ** 2)
            # the lightest features whose joint norm stays below th can be left out of the filter
            n_light = int(np.searchsorted(suffix_sq, th * th * (1 - 1e-6), side="left"))
            row = row.copy()
            row[order[:n_light]] = 0.0
            data[a:b] = row
        # copies: eliminate_zeros works in place and must not touch the query's own arrays
        prefix = sp.csr_matrix((data, q.indices.copy(), q.indptr.copy()), shape=q.shape)
        prefix.eliminate_zeros()
        return prefix

    def _search_chunk(self, q: sp.csr_matrix) -> list[list[Match]]:
        assert self._names_by_feature is not None and self._name_vectors is not None
        cfg = self.config
        prefix = self._prefix_mask(q)
        # names holding at least one prefix feature of some query of the chunk
        hit = (prefix != 0).astype(np.float32) @ self._names_by_feature
        candidates = np.unique(hit.indices)
        out: list[list[Match]] = [[] for _ in range(q.shape[0])]
        if candidates.size == 0:
            return out
        scores = (q @ self._name_vectors[candidates].T).tocsr()
        for i in range(q.shape[0]):
            a, b = scores.indptr[i], scores.indptr[i + 1]
            vals, cols = scores.data[a:b], scores.indices[a:b]
            keep = vals >= cfg.threshold - 1e-6
            vals, cols = vals[keep], candidates[cols[keep]]
            # a full sort (not argpartition) so that ties at the cut are broken by name index
            order = np.lexsort((cols, -vals))[:cfg.top_m]
            out[i] = [Match(int(cols[k]), float(min(vals[k], 1.0))) for k in order]
        return out

    # ------------------------------------------------------------------------------ persistence
    def save(self, directory: str | Path) -> None:
        """Write the fitted index to ``directory`` (config JSON, names, vocabulary, matrices)."""
        if self._name_vectors is None:
            raise RuntimeError("cannot save an unfitted matcher")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        meta = {"xlnel_version": __version__, "config": asdict(self.config),
                "oov_idf": self._oov_idf}
        (d / "matcher.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
        (d / "names.json").write_text(json.dumps(self.names, ensure_ascii=False), encoding="utf-8")
        vocab = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        (d / "vocabulary.json").write_text(json.dumps(vocab, ensure_ascii=False),
                                           encoding="utf-8")
        np.save(d / "idf.npy", self.idf)
        sp.save_npz(d / "name_vectors.npz", self._name_vectors)

    @classmethod
    def load(cls, directory: str | Path, config: MatcherConfig | None = None) -> TfidfMatcher:
        """Load a matcher saved by :meth:`save`; ``config`` may override search-time settings.

        Raises:
            ArtifactError: If a file of the saved matcher is missing.
        """
        d = Path(directory)
        for f in ("matcher.json", "names.json", "vocabulary.json", "idf.npy", "name_vectors.npz"):
            if not (d / f).is_file():
                raise ArtifactError(f"saved matcher in {d} lacks {f}")
        meta = json.loads((d / "matcher.json").read_text(encoding="utf-8"))
        saved = MatcherConfig(**meta["config"])
        m = cls(config if config is not None else saved)
        _check_compatible(saved, m.config, d)
        m.names = json.loads((d / "names.json").read_text(encoding="utf-8"))
        vocab = json.loads((d / "vocabulary.json").read_text(encoding="utf-8"))
        m.vocabulary = {g: i for i, g in enumerate(vocab)}
        m.idf = np.load(d / "idf.npy")
        m._oov_idf = float(meta["oov_idf"])
        m._set_vectors(sp.load_npz(d / "name_vectors.npz").tocsr())
        return m


def _check_compatible(saved: MatcherConfig, wanted: MatcherConfig, where: Path) -> None:
    fixed = ("ngram_min", "ngram_max", "sublinear_tf", "use_idf")
    for key in fixed:
        if getattr(saved, key) != getattr(wanted, key):
            raise ConfigError(f"matcher in {where} was built with {key}={getattr(saved, key)}; "
                              f"it cannot be searched with {key}={getattr(wanted, key)}")


def brute_force_search(matcher: TfidfMatcher, queries: Iterable[str]) -> list[list[Match]]:
    """Reference search scoring every name; used by tests and benchmarks."""
    assert matcher._name_vectors is not None
    cfg = matcher.config
    q = matcher._vectorize(list(queries))
    dense = (q @ matcher._name_vectors.T).toarray()
    out = []
    for row in dense:
        idx = np.flatnonzero((row >= cfg.threshold - 1e-6) & (row > 0))
        order = idx[np.lexsort((idx, -row[idx]))][:cfg.top_m]
        out.append([Match(int(j), float(min(row[j], 1.0))) for j in order])
    return out
