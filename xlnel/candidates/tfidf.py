"""High-recall matching: exact top-m cosine search over TF-IDF character n-gram vectors.

Every name and span becomes an L2-normalised TF-IDF vector of its character n-grams (1-3 by
default). The matcher returns, for each query, the ``top_m`` names whose cosine is at least
``threshold`` - exactly, with no approximate index.

Scoring every name is what makes naive matching slow: nearly every name shares some character
unigram with every query. The search therefore filters first, as exact all-pairs similarity
search does (AllPairs/L2AP, see :mod:`xlnel.candidates.tfidf_index`): each name keeps its most
frequent n-grams out of the inverted index while their norm stays below the threshold, so only
names sharing an indexed n-gram with the query are scored; a partial score plus a rank-bucketed
Cauchy-Schwarz bound prunes further and the few survivors are scored exactly. The index is built
in bounded memory (chunks of names, int32 indices, float32 weights), saved as ``.npy`` arrays and
loaded memory-mapped, so several processes share one copy. Queries run in chunks (memory is
bounded by ``chunk_size``) on ``workers`` threads (the sparse products release the GIL).
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from xlnel.candidates import tfidf_index as ix
from xlnel.errors import ArtifactError, ConfigError
from xlnel.version import __version__

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
        pad_ends: Take n-grams of the string with one space added at each end, so that a name's
            first and last letters also form n-grams such as `` di`` and ``es `` that match word
            starts and ends inside longer spans (as scikit-learn's ``char_wb`` pads each word).
        chunk_size: Queries scored together; ``None`` picks it: 256 (fewer when workers would
            idle) for the compiled cosine search, from the dictionary size otherwise (there the
            score matrix of a chunk grows with both).
        workers: Threads searching chunks of queries at the same time.
        metric: ``"cosine"`` (the indexed, exact search) or ``"manhattan"``: one minus half
            the L1 distance of the L1-normalised vectors (equal to the sum over n-grams of the
            smaller weight; 1 for identical strings, 0 for disjoint ones). Manhattan is the
            paper's ablation: it scores every name sharing an n-gram with the query (no
            index pruning), which is fine for dictionaries of tens of thousands of names.
    """

    ngram_min: int = 1
    ngram_max: int = 3
    top_m: int = 50
    threshold: float = 0.4
    sublinear_tf: bool = False
    use_idf: bool = True
    pad_ends: bool = False
    chunk_size: int | None = None
    workers: int = 1
    metric: str = "cosine"

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
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, got {self.workers}")
        if self.metric not in METRICS:
            raise ConfigError(f"metric must be one of {', '.join(METRICS)}, got {self.metric!r}")


METRICS = ("cosine", "manhattan")


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
    """Exact top-m search (cosine or Manhattan) of queries against fixed (normalised) names."""

    def __init__(self, config: MatcherConfig | None = None) -> None:
        self.config = config if config is not None else MatcherConfig()
        self.names: Sequence[str] = []
        self.vocabulary: dict[str, int] = {}
        self.idf = np.zeros(0, dtype=np.float32)
        self._oov_idf = 1.0
        self._name_vectors: sp.csr_matrix | None = None  # names x features, unit rows
        self._rank = np.zeros(0, dtype=np.int32)  # per n-gram: global rank, most frequent first
        self._index: ix.SplitIndex | None = None  # inverted index of the names' indexed parts
        self._l1_columns: sp.csc_matrix | None = None  # L1-normalised names, for "manhattan"

    # ----------------------------------------------------------------------------------- fitting
    def fit(self, names: Sequence[str]) -> TfidfMatcher:
        """Index ``names`` (already normalised; duplicates should be removed by the caller).

        Raises:
            ValueError: If ``names`` is empty.
        """
        if not names:
            raise ValueError("cannot fit the matcher on an empty list of names")
        cfg = self.config
        self.names = ix.NameList.from_strings(names)
        self.vocabulary = {}
        counts = ix.count_ngrams(names, cfg.ngram_min, cfg.ngram_max, self.vocabulary,
                                 pad=cfg.pad_ends)
        n_docs = len(names)
        if cfg.use_idf:
            df = np.bincount(counts.indices, minlength=counts.shape[1])
            # smooth idf as scikit-learn's TfidfVectorizer; an unseen n-gram gets df = 0
            self.idf = (np.log((1 + n_docs) / (1 + df)) + 1).astype(np.float32)
            self._oov_idf = float(math.log(1 + n_docs) + 1)
        else:
            self.idf = np.ones(counts.shape[1], dtype=np.float32)
            self._oov_idf = 1.0
        self._set_vectors(ix.weigh_rows(counts, self.idf, cfg.sublinear_tf))
        logger.info("matcher indexed %d names, %d n-grams", n_docs, len(self.vocabulary))
        return self

    def _set_vectors(self, vectors: sp.csr_matrix) -> None:
        """Build the inverted index of unit-norm name vectors with sorted rows."""
        self._name_vectors = vectors
        self._l1_columns = None
        self._rank = ix.global_rank(vectors)
        self._index = ix.split_index(vectors, self._rank, self.config.threshold)

    # ---------------------------------------------------------------------------------- querying
    def _vectorize(self, queries: Sequence[str], norm: str = "l2") -> sp.csr_matrix:
        """Query vectors whose ``norm`` (``"l2"`` or ``"l1"``) counts n-grams unknown to the
        index, so similarities stay honest."""
        cfg = self.config
        indptr: list[int] = [0]
        indices: list[int] = []
        values: list[float] = []
        for query in queries:
            text = f" {query} " if cfg.pad_ends else query
            grams = Counter(char_ngrams(text, cfg.ngram_min, cfg.ngram_max))
            row_idx, row_val, oov_sq, oov_abs = [], [], 0.0, 0.0
            for gram, count in grams.items():
                tf = 1 + math.log(count) if cfg.sublinear_tf else float(count)
                j = self.vocabulary.get(gram)
                if j is None:
                    oov_sq += (tf * self._oov_idf) ** 2
                    oov_abs += tf * self._oov_idf
                else:
                    row_idx.append(j)
                    row_val.append(tf * float(self.idf[j]))
            if norm == "l1":
                size = sum(row_val) + oov_abs
            else:
                size = math.sqrt(sum(v * v for v in row_val) + oov_sq)
            if size > 0:
                values.extend(v / size for v in row_val)
                indices.extend(row_idx)
            indptr.append(len(indices))
        return sp.csr_matrix((np.asarray(values, dtype=np.float32),
                              np.asarray(indices, dtype=np.int32), indptr),
                             shape=(len(queries), len(self.vocabulary)))

    def search(self, queries: Sequence[str]) -> list[list[Match]]:
        """Top ``top_m`` names with cosine >= ``threshold`` for each query, best first.

        Ties are broken by name index so that results are deterministic. A name sharing no
        n-gram with the query is never returned, even with threshold 0. With ``workers`` > 1
        chunks of queries are searched on that many threads; results are the same.
        """
        if self._name_vectors is None or self._index is None:
            raise RuntimeError("the matcher is not fitted; call fit() or load() first")
        if (self.config.metric == "cosine"  # the split index serves cosine search only
                and self.config.threshold < self._index.threshold):  # config replaced
            logger.info("re-splitting the index for threshold %s", self.config.threshold)
            self._index = ix.split_index(self._name_vectors, self._rank, self.config.threshold)
        step = self.config.chunk_size
        if step is None:
            step = self._default_chunk(len(queries))
        chunks = [queries[lo:lo + step] for lo in range(0, len(queries), step)]
        if self.config.workers > 1 and len(chunks) > 1:
            with ThreadPoolExecutor(self.config.workers) as pool:
                parts = list(pool.map(self._search_chunk, chunks))
        else:
            parts = [self._search_chunk(c) for c in chunks]
        return [row for part in parts for row in part]

    def pair_scores(self, queries: Sequence[str], names: Sequence[str]) -> np.ndarray:
        """The similarity :meth:`search` gives ``names[i]`` for ``queries[i]``, for any name:
        n-grams unknown to the index weigh their unseen-n-gram IDF on both sides (so a name
        identical to the query scores 1 whether or not it is indexed).

        Raises:
            ValueError: If the sequences differ in length.
        """
        if len(queries) != len(names):
            raise ValueError(f"{len(queries)} queries but {len(names)} names")
        l1 = self.config.metric == "manhattan"
        out = np.zeros(len(queries))
        for i, (query, name) in enumerate(zip(queries, names, strict=True)):
            q, n = self._weights(query, l1), self._weights(name, l1)
            shared = q.keys() & n.keys()
            out[i] = sum(min(q[g], n[g]) if l1 else q[g] * n[g] for g in shared)
        return np.clip(out, 0.0, 1.0)

    def _weights(self, text: str, l1: bool) -> dict[str, float]:
        """Normalised TF-IDF weight of each n-gram of ``text`` (as :meth:`_vectorize`)."""
        cfg = self.config
        grams = Counter(char_ngrams(f" {text} " if cfg.pad_ends else text, cfg.ngram_min,
                                    cfg.ngram_max))
        weights = {}
        for gram, count in grams.items():
            tf = 1 + math.log(count) if cfg.sublinear_tf else float(count)
            j = self.vocabulary.get(gram)
            weights[gram] = tf * (self._oov_idf if j is None else float(self.idf[j]))
        size = sum(weights.values()) if l1 else math.sqrt(sum(w * w for w in weights.values()))
        return {g: w / size for g, w in weights.items()} if size > 0 else {}

    def _default_chunk(self, n_queries: int) -> int:
        """Queries per chunk when ``chunk_size`` is None: 256 for the compiled cosine search
        (its memory grows with the surviving pairs only, and larger chunks reuse each block of
        the index more), fewer when that would leave a worker thread without a chunk; the
        scipy products and the Manhattan scores hold a chunk x names matrix, so there the
        chunk shrinks as the dictionary grows."""
        if self.config.metric == "cosine" and ix.kernels.AVAILABLE:
            if self.config.workers == 1:
                return 256
            return max(16, min(256, -(-n_queries // (2 * self.config.workers))))
        return int(min(256, max(16, 64_000_000 // max(1, len(self.names)))))

    def _search_chunk(self, queries: Sequence[str]) -> list[list[Match]]:
        assert self._name_vectors is not None and self._index is not None
        if self.config.metric == "manhattan":
            return self._manhattan_chunk(queries)
        found = ix.search_chunk(self._vectorize(queries), self._rank, self._name_vectors,
                                self._index, self.config.threshold, self.config.top_m)
        return [[Match(j, s) for j, s in row] for row in found]

    def _manhattan_chunk(self, queries: Sequence[str]) -> list[list[Match]]:
        """Top names by ``sum_j min(q_j, n_j)`` over L1-normalised vectors (see ``metric``)."""
        assert self._name_vectors is not None
        if self._l1_columns is None:  # built once; a race only builds it twice
            v = self._name_vectors
            sums = np.asarray(abs(v).sum(axis=1)).ravel()
            scale = sp.diags(1.0 / np.maximum(sums, 1e-12))
            self._l1_columns = sp.csc_matrix((scale @ v).astype(np.float64))
        cols = self._l1_columns
        cfg = self.config
        out: list[list[Match]] = []
        for q in self._vectorize(queries, norm="l1"):
            rows_parts, vals_parts = [], []
            for j, w in zip(q.indices, q.data, strict=True):
                a, b = cols.indptr[j], cols.indptr[j + 1]
                rows_parts.append(cols.indices[a:b])
                vals_parts.append(np.minimum(cols.data[a:b], float(w)))
            if not rows_parts:
                out.append([])
                continue
            names, inverse = np.unique(np.concatenate(rows_parts), return_inverse=True)
            scores = np.round(np.bincount(inverse, np.concatenate(vals_parts)), 6)
            ok = (scores >= cfg.threshold - ix._TIE) & (scores > 0)
            names, scores = names[ok], scores[ok]
            order = np.lexsort((names, -scores))[:cfg.top_m]
            out.append([Match(int(names[i]), float(min(scores[i], 1.0))) for i in order])
        return out

    # ------------------------------------------------------------------------------ persistence
    def save(self, directory: str | Path) -> None:
        """Write the fitted index to ``directory``: a JSON config, the vocabulary and one
        ``.npy`` file per array (names, vectors, inverted index), loadable memory-mapped."""
        if self._name_vectors is None or self._index is None:
            raise RuntimeError("cannot save an unfitted matcher")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        names = (self.names if isinstance(self.names, ix.NameList)
                 else ix.NameList.from_strings(self.names))
        blob, offsets = names.arrays()
        v = self._name_vectors
        ix.save_arrays(d, {"idf": self.idf, "rank": self._rank, "vec_indptr": v.indptr,
                           "vec_indices": v.indices, "vec_data": v.data, "names_blob": blob,
                           "names_offsets": offsets, **self._index.arrays()})
        vocab = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        ix.write_json(d / "vocabulary.json", vocab)
        meta = {"xlnel_version": __version__, "format": _FORMAT, "config": asdict(self.config),
                "oov_idf": self._oov_idf, "shape": list(v.shape),
                "index_threshold": self._index.threshold,
                "index_block_size": self._index.block_size}
        (d / "matcher.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, config: MatcherConfig | None = None,
             mmap: bool = True) -> TfidfMatcher:
        """Load a matcher saved by :meth:`save`; ``config`` may override search-time settings.

        Args:
            directory: The saved matcher folder.
            config: Search settings (``top_m``, ``threshold``, ``chunk_size``, ``workers``);
                ``None`` keeps the saved ones.
            mmap: Memory-map the arrays read-only (shared between processes) instead of
                reading them into memory.

        Raises:
            ArtifactError: If a file of the saved matcher is missing.
            ConfigError: If ``config`` changes how n-grams are weighted.
        """
        d = Path(directory)
        for f in ("matcher.json", "vocabulary.json"):
            if not (d / f).is_file():
                raise ArtifactError(f"saved matcher in {d} lacks {f}")
        meta = json.loads((d / "matcher.json").read_text(encoding="utf-8"))
        saved = MatcherConfig(**meta["config"])
        m = cls(config if config is not None else saved)
        _check_compatible(saved, m.config, d)
        vocab = json.loads((d / "vocabulary.json").read_text(encoding="utf-8"))
        m.vocabulary = {g: i for i, g in enumerate(vocab)}
        m._oov_idf = float(meta["oov_idf"])
        if meta.get("format") != _FORMAT:
            m._load_v1(d)
            return m
        split = [f"split_{k}" for k in ix.SPLIT_ARRAYS]
        a = ix.load_arrays(d, ix.INDEX_ARRAYS + tuple(split), mmap)
        m.idf, m._rank = a["idf"], a["rank"]
        m.names = ix.NameList(a["names_blob"], a["names_offsets"])
        m._name_vectors = ix._csr(a["vec_data"], a["vec_indices"], a["vec_indptr"],
                                  (meta["shape"][0], meta["shape"][1]))
        m._index = ix.SplitIndex.from_arrays(a, float(meta["index_threshold"]),
                                             int(meta["index_block_size"]))
        return m

    def _load_v1(self, d: Path) -> None:
        """Read the first save format (names.json, name_vectors.npz) and rebuild the index."""
        for f in ("names.json", "idf.npy", "name_vectors.npz"):
            if not (d / f).is_file():
                raise ArtifactError(f"saved matcher in {d} lacks {f}")
        self.names = json.loads((d / "names.json").read_text(encoding="utf-8"))
        self.idf = np.load(d / "idf.npy", allow_pickle=False)
        vectors = sp.load_npz(d / "name_vectors.npz").tocsr()
        vectors.sort_indices()
        self._set_vectors(sp.csr_matrix(vectors, dtype=np.float32))


_FORMAT = 2  # 1: names.json + name_vectors.npz; 2: .npy arrays, memory-mappable


def _check_compatible(saved: MatcherConfig, wanted: MatcherConfig, where: Path) -> None:
    # metric is search-time only
    fixed = ("ngram_min", "ngram_max", "sublinear_tf", "use_idf", "pad_ends")
    for key in fixed:
        if getattr(saved, key) != getattr(wanted, key):
            raise ConfigError(f"matcher in {where} was built with {key}={getattr(saved, key)}; "
                              f"it cannot be searched with {key}={getattr(wanted, key)}")


def brute_force_search(matcher: TfidfMatcher, queries: Iterable[str]) -> list[list[Match]]:
    """Reference search scoring every name (either metric); used by tests and benchmarks."""
    assert matcher._name_vectors is not None
    cfg = matcher.config
    names = matcher._name_vectors.astype(np.float64)
    if cfg.metric == "manhattan":
        q = matcher._vectorize(list(queries), norm="l1").toarray().astype(np.float64)
        dense_names = names.toarray()
        dense_names /= np.maximum(dense_names.sum(axis=1, keepdims=True), 1e-12)
        sims = np.stack([np.minimum(row, dense_names).sum(axis=1) for row in q]) if len(q) \
            else np.zeros((0, names.shape[0]))
        dense = np.round(sims, 6)
    else:
        q = matcher._vectorize(list(queries))
        dense = np.round((q.astype(np.float64) @ names.T).toarray(), 6)
    out = []
    for row in dense:
        idx = np.flatnonzero((row >= cfg.threshold - 1e-6) & (row > 0))
        order = idx[np.lexsort((idx, -row[idx]))][:cfg.top_m]
        out.append([Match(int(j), float(min(row[j], 1.0))) for j in order])
    return out
