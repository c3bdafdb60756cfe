"""High-recall matching: exact top-m cosine search over TF-IDF character n-gram vectors.

Every name and span becomes an L2-normalised TF-IDF vector of its character n-grams (1-3 by
default). The matcher returns, for each query, the ``top_m`` names whose cosine is at least
``threshold`` - exactly, with no approximate index.

Scoring every name is what makes naive matching slow: nearly every name shares some character
unigram with every query. The search therefore filters first (the AllPairs/L2AP idea of exact
similarity search). Each name vector y is split into an *unindexed* part y' - its most frequent
n-grams, as many as keep ``||y'|| < threshold`` - and an *indexed* part y''. Since
``x . y' <= ||y'|| < threshold`` for any unit query x, a name can only reach the threshold if it
shares an indexed n-gram with the query. The inverted index holds only the y'' parts, whose
postings are short (common unigrams mostly stay out); the partial score ``x . y''`` plus the
bound ``||y'||`` prunes further, and the few survivors are scored exactly. Queries run in chunks,
so memory is bounded by ``chunk_size`` and never a dense spans x names matrix.
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
        chunk_size: Queries scored together; ``None`` picks it from the dictionary size
            (the partial-score arrays of a chunk grow with both, and past a few million entries
            they fall out of cache: 256 queries at 60k names, 16 at 1M).
    """

    ngram_min: int = 1
    ngram_max: int = 3
    top_m: int = 50
    threshold: float = 0.4
    sublinear_tf: bool = False
    use_idf: bool = True
    chunk_size: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.ngram_min <= self.ngram_max:
            raise ConfigError(f"need 1 <= ngram_min <= ngram_max, got {self.ngram_min}, "
                              f"{self.ngram_max}")
        if self.top_m < 1:
            raise ConfigError(f"top_m must be at least 1, got {self.top_m}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {self.threshold}")
        if self.chunk_size is not None and self.chunk_size < 1:
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
        self._rest_norm = np.zeros(0, dtype=np.float32)  # per name: norm of its unindexed part
        self._bucket_edges = np.zeros(1, dtype=np.int64)  # rank edges of the cut buckets
        self._name_bucket = np.zeros(0, dtype=np.int64)  # per name: first edge >= its cut
        self._rank = np.zeros(0, dtype=np.int64)  # per n-gram: global rank, most frequent first
        self._index_threshold = self.config.threshold
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
        self._index_threshold = self.config.threshold  # the split below is exact for it only
        df = np.bincount(vectors.indices, minlength=vectors.shape[1])
        order = np.lexsort((np.arange(df.size), -df))  # global order: most frequent first
        self._rank = np.empty(df.size, dtype=np.int64)
        self._rank[order] = np.arange(df.size)
        indexed, self._rest_norm, cut_rank = _split_for_index(vectors, self._rank,
                                                              self.config.threshold)
        has_cut = cut_rank >= 0
        qs = np.linspace(0, 1, 129)
        self._bucket_edges = (np.unique(np.quantile(cut_rank[has_cut], qs).round())
                              .astype(np.int64) if has_cut.any() else np.zeros(1, np.int64))
        if has_cut.any():
            self._bucket_edges = np.union1d(self._bucket_edges, [cut_rank.max()])
        # names without a cut have a zero rest norm; any bucket will do
        self._name_bucket = np.searchsorted(self._bucket_edges, np.maximum(cut_rank, 0))
        self._names_by_feature = indexed.T.tocsr()

    # ---------------------------------------------------------------------------------- querying
    def _vectorize(self, queries: Sequence[str]) -> sp.csr_matrix:
        """Query vectors whose norm counts n-grams unknown to the index, so cosines stay honest."""
        cfg = self.config
        indptr: list[int] = [0]
        indices: list[int] = []
        values: list[float] = []
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
        if self.config.threshold != self._index_threshold:  # config replaced since fitting
            self._set_vectors(self._name_vectors)
        results: list[list[Match]] = []
        step = self.config.chunk_size
        if step is None:
            step = int(min(256, max(8, 16_000_000 // max(1, len(self.names)))))
        for lo in range(0, len(queries), step):
            q = self._vectorize(queries[lo:lo + step])
            results.extend(self._search_chunk(q))
        return results

    def _query_norms_by_bucket(self, q: sp.csr_matrix) -> np.ndarray:
        """Per query and rank bucket b, the norm of the query over n-grams ranked at most
        ``_bucket_edges[b]`` (a non-decreasing row)."""
        edges = self._bucket_edges
        q_rows = np.repeat(np.arange(q.shape[0]), np.diff(q.indptr))
        bucket = np.searchsorted(edges, self._rank[q.indices], side="left")
        inside = bucket < edges.size  # n-grams ranked past every edge are past every cut
        sq = np.zeros((q.shape[0], edges.size + 1))
        np.add.at(sq, (q_rows[inside], bucket[inside]), q.data[inside].astype(np.float64) ** 2)
        return np.sqrt(np.cumsum(sq, axis=1))

    def _search_chunk(self, q: sp.csr_matrix) -> list[list[Match]]:
        assert self._names_by_feature is not None and self._name_vectors is not None
        cfg = self.config
        th = cfg.threshold - 1e-6
        # partial scores over indexed n-grams; the unindexed rest adds at most its norm
        partial = (q @ self._names_by_feature).tocoo()
        # A name's unindexed part holds only n-grams ranked up to its cut, so it adds at most
        # its own norm times the query's norm over those n-grams (Cauchy-Schwarz); cuts are
        # rounded up to bucket edges, which only loosens the bound.
        rows, cols = partial.row, partial.col
        norms = self._query_norms_by_bucket(q)
        bound = partial.data + self._rest_norm[cols] * norms[rows, self._name_bucket[cols]]
        keep = (bound >= th) & (partial.data > 0)
        rows, cols = rows[keep], cols[keep]
        out: list[list[Match]] = [[] for _ in range(q.shape[0])]
        if rows.size == 0:
            return out
        # exact cosines of the surviving pairs only: row-wise dot products
        # (float64 and rounded so that equal cosines tie exactly and ties go by name index)
        pairs = q[rows].astype(np.float64).multiply(self._name_vectors[cols])
        vals = np.round(np.asarray(pairs.sum(axis=1)).ravel(), 6)
        ok = vals >= th
        rows, cols, vals = rows[ok], cols[ok], vals[ok]
        order = np.lexsort((cols, -vals, rows))  # by query, best first, ties by name index
        rows, cols, vals = rows[order], cols[order], vals[order]
        bounds = np.searchsorted(rows, np.arange(q.shape[0] + 1))
        for i in range(q.shape[0]):
            a, b = bounds[i], min(bounds[i + 1], bounds[i] + cfg.top_m)
            out[i] = [Match(int(c), float(min(v, 1.0)))
                      for c, v in zip(cols[a:b], vals[a:b], strict=True)]
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
    dense = np.round((q.astype(np.float64) @ matcher._name_vectors.T).toarray(), 6)
    out = []
    for row in dense:
        idx = np.flatnonzero((row >= cfg.threshold - 1e-6) & (row > 0))
        order = idx[np.lexsort((idx, -row[idx]))][:cfg.top_m]
        out.append([Match(int(j), float(min(row[j], 1.0))) for j in order])
    return out


def _split_for_index(vectors: sp.csr_matrix, rank: np.ndarray, threshold: float
                     ) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Per name, leave out of the index its most frequent n-grams while their norm < threshold.

    Args:
        vectors: Name vectors (names x features), rows of unit norm.
        rank: Global rank of each feature, most frequent first.
        threshold: The search threshold.

    Returns:
        The indexed parts (names x features); per name, the norm of the part left out and the
        highest rank left out (-1 when none).
    """
    n_rows = vectors.shape[0]
    row_of = np.repeat(np.arange(n_rows), np.diff(vectors.indptr))
    order = np.lexsort((rank[vectors.indices], row_of))
    sq = vectors.data[order].astype(np.float64) ** 2
    cum = np.cumsum(sq)
    row_start = np.concatenate(([0.0], cum))[vectors.indptr[:-1]]
    within = cum - row_start[row_of]  # squared norm of the row's first k n-grams, inclusive
    limit = (threshold * threshold) * (1 - 1e-6)
    left_out = np.zeros(vectors.nnz, dtype=bool)
    left_out[order] = within < limit
    rest_sq = np.bincount(row_of[left_out], weights=vectors.data[left_out].astype(np.float64) ** 2,
                          minlength=n_rows)
    cut = np.full(n_rows, -1, dtype=np.int64)
    np.maximum.at(cut, row_of[left_out], rank[vectors.indices[left_out]])
    indexed = vectors.copy()
    indexed.data = np.where(left_out, 0.0, indexed.data).astype(np.float32)
    indexed.eliminate_zeros()
    return indexed, np.sqrt(rest_sq).astype(np.float32), cut
