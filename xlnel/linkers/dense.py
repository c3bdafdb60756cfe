"""``xlnel.dense.v1``: spans embedded by an entity encoder, matched to names in a FAISS index.

The SapBERT-style dense linker as a candidate generator. Every distinct normalised dictionary
name is embedded once (without context) and indexed; each span is embedded the same way and its
``top_m`` nearest names with cosine >= ``candidates.threshold`` become candidates, scored by the
cosine (rounded to 6 decimals, as the TF-IDF matcher's, so that a threshold of 1 keeps exact
names). Followed by ``xlnel.similarity.v1`` it is the dense linker end to end; followed by the
GBDT or cross-encoder filter, a dense candidate generator.

Two refinements of the related work:

* Index switching: names that DFT added from training annotations (``source ==
  "annotation"``) also go to a small index searched first; when its best cosine is under
  ``switch_threshold`` the dictionary index is searched and the better of the two wins.
* N-gram back-off, for spans from a tagger: a multi-word mention whose best name is under the
  threshold is broken into its (n-1)-grams, then smaller ones, skipping words already linked,
  until every word is linked or single words have been tried.

With ``merge_tfidf`` the TF-IDF generator runs too and the candidates are merged, keeping the
higher score of each (span, concept) pair.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from xlnel.candidates.base import CandidateGenerator, register_generator
from xlnel.candidates.names import (
    Provenance,
    Target,
    index_names,
    read_provenance,
    target_rows,
    write_provenance,
)
from xlnel.candidates.spans import generate_spans, tokenize
from xlnel.candidates.tfidf_generator import TfidfCandidateGenerator
from xlnel.config import CandidatesConfig, validate_options
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ArtifactError, ConfigError
from xlnel.linkers import faiss_index
from xlnel.linkers.encoder import ENCODER_FILE, EntityEncoder, Pooling, cached_encode
from xlnel.models.registry import registered_models
from xlnel.normalization import normalize_string
from xlnel.numbers import Float, Int
from xlnel.stopwords import load_stopwords
from xlnel.types import Candidate, Document, Span
from xlnel.version import __version__

logger = logging.getLogger(__name__)

Hits = list[tuple[int, float]]
"""Indexed strings (their ids) and cosines, best first."""


class DenseOptions(BaseModel):
    """Settings of ``xlnel.dense.v1`` (``candidates.options`` in the pipeline config).

    Attributes:
        model: Registered name, Hugging Face id or local folder of the entity encoder
            (``cambridgeltl/SapBERT-UMLS-2020AB-all-lang-from-XLMR`` with the hub, pooling
            ``cls`` and prefix ``""``), or a folder written by ``xlnel encoder align``. A
            local folder is copied into the saved generator (``encoder/``, safetensors), so a
            pipeline links from any working folder and keeps matching its index; a
            registered name or hub id is referenced.
        pooling: ``cls`` or ``mean``; ``None`` = the folder's recorded setting, else ``mean``.
        prefix: Put before every text (e5 expects ``"query: "``); ``None`` = recorded, else
            ``"query: "``.
        max_length: Most tokens per name or span; ``None`` = recorded, else 32. At most what
            the model reads (refused otherwise).
        batch_size: Texts per forward pass.
        device: ``cpu``, ``cuda`` or ``auto``.
        index: ``flat`` (exact), ``ivf`` or ``hnsw``.
        nlist: IVF cells. nprobe: IVF cells searched.
        M: HNSW links per node. ef_construction / ef_search: HNSW candidate lists.
        switch_threshold: Cosine at which a match in the annotation index is accepted without
            searching the dictionary index; ``None`` = no separate annotation index.
        backoff: Break tagger mentions without a match into shorter n-grams.
        merge_tfidf: Also run the TF-IDF generator and merge its candidates.
        cache: Keep the dictionary's name embeddings under ``XLNEL_CACHE/embeddings``.
    """

    model_config = ConfigDict(extra="forbid")

    model: str = "multilingual-e5-small"
    pooling: Pooling | None = None
    prefix: str | None = None
    max_length: Int | None = Field(None, ge=4)
    batch_size: Int = Field(128, ge=1)
    device: Literal["cpu", "cuda", "auto"] = "auto"
    index: faiss_index.IndexKind = "flat"
    nlist: Int = Field(1024, ge=1)
    nprobe: Int = Field(16, ge=1)
    M: Int = Field(32, ge=2)
    ef_construction: Int = Field(80, ge=1)
    ef_search: Int = Field(64, ge=1)
    switch_threshold: Float | None = Field(0.95, ge=-1.0, le=1.0)
    backoff: bool = True
    merge_tfidf: bool = False
    cache: bool = True


def parse_dense_options(options: dict[str, Any]) -> DenseOptions:
    """Validate ``candidates.options`` for the dense generator.

    Raises:
        ConfigError: Naming the bad key, its value and what is allowed.
    """
    return validate_options(DenseOptions, options, "candidates.options", "dense generator")


@dataclass
class _Mention:
    """A tagger mention being backed off: its words and which of them are linked."""

    doc: int
    span: Span
    words: list[tuple[int, int]]  # offsets into span.text
    linked: list[bool] = field(default_factory=list)

    def sub_span(self, first: int, size: int) -> Span:
        start, end = self.words[first][0], self.words[first + size - 1][1]
        prefix = self.span.stripped_prefix if first == 0 else ""
        return Span(self.span.start + start, self.span.start + end, self.span.text[start:end],
                    prefix)


@register_generator
class DenseCandidateGenerator(CandidateGenerator):
    """Nearest dictionary names of each span by entity-encoder cosine (FAISS)."""

    registered_name = "xlnel.dense.v1"
    # The TF-IDF index it keeps beside the dense one (``merge_tfidf``) was built with these too.
    trained_keys = TfidfCandidateGenerator.trained_keys
    # what :meth:`load` reads from the config: a pipeline trained on a GPU links on a CPU
    inference_options = frozenset({"device", "batch_size", "nprobe", "ef_search",
                                   "switch_threshold"})

    def __init__(self, config: CandidatesConfig, lang: str) -> None:
        if any(x is not None for x in (config.generated_fallback, config.generated_min_score,
                                       config.generated_min_chars)):
            raise ConfigError(f"{self.registered_name} does not tier generated names: leave "
                              "candidates.generated_fallback, generated_min_score and "
                              "generated_min_chars unset")
        self.config = config
        self.lang = lang
        self.options = parse_dense_options(config.options)
        self.stopwords = load_stopwords(lang, config.stopwords)
        self.encoder: EntityEncoder | None = None
        self._keys: list[str] = []
        self._targets: list[list[tuple[str, str]]] = []  # per indexed string: (concept, name)
        self._provenance: list[list[Provenance]] = []  # parallel to _targets; may be empty
        self._rows: list[list[Target]] = []  # both joined, what a match yields
        self._index: Any = None
        self._small: Any = None  # annotation index, rows -> ids of self._keys
        self._small_ids = np.zeros(0, dtype=np.int64)
        self._tfidf: TfidfCandidateGenerator | None = None

    # ----------------------------------------------------------------- fitting
    def _encoder(self) -> EntityEncoder:
        if self.encoder is None:
            o = self.options
            self.encoder = EntityEncoder(o.model, o.pooling, o.prefix, o.max_length, o.device,
                                         o.batch_size)
        return self.encoder

    def _build(self, vectors: np.ndarray) -> Any:
        o = self.options
        return faiss_index.build_index(vectors, o.index, o.nlist, o.nprobe, o.M,
                                       o.ef_construction, o.ef_search)

    def fit(self, dictionary: Dictionary) -> DenseCandidateGenerator:
        """Embed and index every distinct normalised name of ``dictionary``.

        Raises:
            ValueError: If the dictionary has no name with any letter or digit.
        """
        names = index_names(dictionary, self.lang)
        annotated = {i for i, sources in enumerate(names.sources) if "annotation" in sources}
        self._keys, self._targets = names.keys, names.targets
        self._provenance = names.provenance
        self._rows = target_rows(self._targets, self._provenance)
        logger.info("dense index: embedding %d names with %s", len(self._keys),
                    self.options.model)
        t0 = time.perf_counter()
        vectors = self._embed(self._keys, cache=self.options.cache)
        self._index = self._build(vectors)
        self._small, self._small_ids = None, np.zeros(0, dtype=np.int64)
        if self.options.switch_threshold is not None and annotated:
            self._small_ids = np.array(sorted(annotated), dtype=np.int64)
            self._small = faiss_index.build_index(vectors[self._small_ids], "flat")
        logger.info("dense index: %d names (%d from annotations) embedded and indexed in "
                    "%.1f s", len(self._keys), len(self._small_ids), time.perf_counter() - t0)
        if self.options.merge_tfidf:
            self._tfidf = TfidfCandidateGenerator(self._tfidf_config(), self.lang)
            self._tfidf.fit(dictionary)
        return self

    def _tfidf_config(self) -> CandidatesConfig:
        return self.config.model_copy(update={"options": {}})

    def _embed(self, texts: Sequence[str], cache: bool = False) -> np.ndarray:
        encoder = self._encoder()
        if cache:
            return cached_encode(encoder, texts)
        return encoder.encode(texts)

    # ----------------------------------------------------------------- search
    def search(self, keys: Sequence[str], k: int | None = None) -> list[Hits]:
        """Nearest indexed strings of normalised texts, with index switching.

        Args:
            keys: Normalised texts.
            k: Hits per text; ``None`` = ``top_m``.

        Raises:
            ValueError: If ``k`` is below 1.
        """
        if self._index is None:
            raise RuntimeError(f"{self.registered_name}: call fit() or load() before searching")
        k = self.config.top_m if k is None else k
        if k < 1:
            raise ValueError(f"k must be at least 1 hit per text, got {k}")
        if not keys:
            return []
        queries = self._embed(keys)
        scores = np.full((len(keys), k), -np.inf, dtype=np.float64)
        ids = np.full((len(keys), k), -1, dtype=np.int64)
        todo = np.arange(len(keys))
        if self._small is not None and self.options.switch_threshold is not None:
            s_small, i_small = faiss_index.search(self._small, queries, k)
            i_small = np.where(i_small >= 0, self._small_ids[np.maximum(i_small, 0)], -1)
            scores[:], ids[:] = s_small, i_small
            todo = np.flatnonzero(s_small[:, 0] < self.options.switch_threshold)
        if todo.size:
            s_big, i_big = faiss_index.search(self._index, queries[todo], k)
            better = s_big[:, 0] > scores[todo, 0]
            scores[todo[better]], ids[todo[better]] = s_big[better], i_big[better]
        return [[(int(i), float(s)) for i, s in zip(row_i, row_s, strict=True) if i >= 0]
                for row_i, row_s in zip(ids, scores, strict=True)]

    def nearest(self, texts: Sequence[str], k: int | None = None
                ) -> list[list[tuple[str, str, float]]]:
        """(concept id, name, cosine) of the nearest names of raw texts, best first.

        A text that normalises to nothing (punctuation only, such as ``...``) has no
        neighbours: it is not embedded, as the generator never searches such a span either.
        """
        keys = [normalize_string(t, self.lang) for t in texts]
        distinct = [key for key in dict.fromkeys(keys) if key]
        found = dict(zip(distinct, self.search(distinct, k), strict=True))
        return [[(cid, name, score) for i, score in found.get(key, [])
                 for cid, name in self._targets[i]] for key in keys]

    def _candidates(self, span: Span, hits: Hits) -> list[Candidate]:
        th = self.config.threshold
        return [Candidate(span, cid, name, score, source, entry_score)
                for i, score in hits if score >= th
                for cid, name, source, entry_score in self._rows[i]]

    def _search_spans(self, spans: Sequence[Span], found: dict[str, Hits]) -> list[Hits]:
        """Hits of each span; distinct normalised texts are searched once (memo ``found``)."""
        keys = [normalize_string(s.text, self.lang) for s in spans]
        new = list(dict.fromkeys(k for k in keys if k and k not in found))
        found.update(zip(new, self.search(new), strict=True))
        return [found.get(k, []) for k in keys]

    # ----------------------------------------------------------------- generation
    def spans(self, document: Document) -> list[Span]:
        """Candidate spans of a document (as the TF-IDF generator enumerates them)."""
        return generate_spans(document.text, self.lang, max_words=self.config.max_words,
                              stopwords=self.stopwords,
                              strip_prefixes=self.config.strip_prefixes,
                              compound_words=self.config.compound_words)

    def _generate_batch(self, documents: Sequence[Document],
                        spans: Sequence[Sequence[Span]] | None) -> list[list[Candidate]]:
        """Candidates of each document: all spans, or the given spans with n-gram back-off.

        Args:
            documents: The documents.
            spans: Spans per document to match (a tagger's mentions); ``None`` = all spans.
        """
        found: dict[str, Hits] = {}
        if spans is None or not self.options.backoff:
            doc_spans = ([self.spans(d) for d in documents] if spans is None
                         else [list(s) for s in spans])
            flat = [s for one in doc_spans for s in one]
            hits = iter(self._search_spans(flat, found))
            out = [[c for s in one for c in self._candidates(s, next(hits))]
                   for one in doc_spans]
        else:
            out = self._backoff(documents, spans, found)
        if self._tfidf is not None:
            out = [_merge(a, b) for a, b in
                   zip(out, self._tfidf.generate_batch(documents, spans), strict=True)]
        return out

    def _backoff(self, documents: Sequence[Document], spans: Sequence[Sequence[Span]],
                 found: dict[str, Hits]) -> list[list[Candidate]]:
        """Match mentions; break unmatched multi-word ones into shorter n-grams, longest first."""
        out: list[list[Candidate]] = [[] for _ in documents]
        flat = [(i, s) for i, one in enumerate(spans) for s in one]
        pending: list[_Mention] = []
        th = self.config.threshold
        for (i, span), hits in zip(flat, self._search_spans([s for _, s in flat], found),
                                   strict=True):
            words = tokenize(span.text)
            if hits and hits[0][1] >= th or len(words) < 2:
                out[i].extend(self._candidates(span, hits))
            else:
                pending.append(_Mention(i, span, words, [False] * len(words)))
        size = max((len(m.words) for m in pending), default=1) - 1
        while pending and size >= 1:
            windows = [(m, j) for m in pending if len(m.words) > size
                       for j in range(len(m.words) - size + 1) if not any(m.linked[j:j + size])]
            subs = [m.sub_span(j, size) for m, j in windows]
            keep = [size > 1 or normalize_string(s.text, self.lang) not in self.stopwords
                    for s in subs]
            hits_all = self._search_spans([s for s, k in zip(subs, keep, strict=True) if k],
                                          found)
            it = iter(hits_all)
            for (m, j), sub, ok in zip(windows, subs, keep, strict=True):
                hits = next(it) if ok else []
                # an earlier window of this size may have linked an overlapping word
                if hits and hits[0][1] >= th and not any(m.linked[j:j + size]):
                    out[m.doc].extend(self._candidates(sub, hits))
                    m.linked[j:j + size] = [True] * size
            pending = [m for m in pending if not all(m.linked)]
            size -= 1
        return out

    # ----------------------------------------------------------------- persistence
    def save(self, directory: Path) -> None:
        """Write ``dense.json``, ``targets.json``, the FAISS indexes and, for an encoder from a
        local folder, a copy of it (``encoder/``, safetensors); a registered or hub model is
        referenced by name.

        The copy keeps the pipeline working wherever it is linked from (a relative folder
        name) and its vectors matching the index (the folder may be retrained later). What an
        earlier generator saved in ``directory`` is replaced, optional parts included.
        """
        if self._index is None:
            raise RuntimeError(f"{self.registered_name}: nothing to save before fit()")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        encoder = self._encoder()
        local = Path(encoder.source).is_dir() and self.options.model not in registered_models()
        # the encoder copy of the folder this generator was loaded from is kept as it is
        in_place = local and Path(encoder.source).resolve() == (directory / "encoder").resolve()
        # Parts an earlier save into this folder may have left: read back beside the new
        # names, a stale annotation index points at rows that no longer exist.
        for name in _OPTIONAL_PARTS:
            path = directory / name
            if name == "encoder" and in_place:
                continue
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        model_ref = "encoder" if local else self.options.model
        if local and not in_place:
            # written from memory, so the copy is safetensors even if the folder held a
            # pickled weights file; an aligned folder's record (its training) is kept
            recorded = Path(encoder.source) / ENCODER_FILE
            extra = json.loads(recorded.read_text(encoding="utf-8")) if recorded.is_file() \
                else {"base_model": self.options.model}
            encoder.save(directory / "encoder", extra={
                k: v for k, v in extra.items() if k not in (*encoder.settings(), "xlnel_version")})
        meta = {"xlnel_version": __version__, "generator": self.registered_name,
                "model": model_ref, "encoder": encoder.settings(), "dim": encoder.dim,
                "names": len(self._keys), "options": self.options.model_dump(mode="json")}
        (directory / "dense.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False),
                                              encoding="utf-8")
        (directory / "targets.json").write_text(
            json.dumps([[k, t] for k, t in zip(self._keys, self._targets, strict=True)],
                       ensure_ascii=False), encoding="utf-8")
        write_provenance(directory, self._provenance)
        faiss_index.write_index(self._index, directory / "index.faiss")
        if self._small is not None:
            faiss_index.write_index(self._small, directory / "annotations.faiss")
            np.save(directory / "annotation_ids.npy", self._small_ids)
        if self._tfidf is not None:
            self._tfidf.save(directory / "tfidf")

    @classmethod
    def load(cls, directory: Path, config: CandidatesConfig,
             lang: str) -> DenseCandidateGenerator:
        """Read a generator written by :meth:`save`.

        Search settings (threshold, top_m and the :attr:`inference_options` nprobe, ef_search,
        switch_threshold, device, batch_size) come from ``config``; the encoder's pooling,
        prefix and length are the saved ones. The encoder is built from the saved reference:
        a copied folder, a registered name (built offline) or a local folder, so no hub access
        is needed for those.

        Raises:
            ArtifactError: If ``dense.json``, ``targets.json`` or ``index.faiss`` is missing,
                or an index does not fit the names of ``targets.json``.
        """
        directory = Path(directory)
        for name in ("dense.json", "targets.json", "index.faiss"):
            if not (directory / name).is_file():
                raise ArtifactError(f"saved dense generator in {directory} lacks {name}")
        meta = json.loads((directory / "dense.json").read_text(encoding="utf-8"))
        gen = cls(config, lang)
        o = gen.options
        copied = meta["model"] == "encoder"
        model = str(directory / "encoder") if copied else meta["model"]
        enc = meta["encoder"]
        # the copy travels with the folder, so it is read as a saved filter or tagger is
        gen.encoder = EntityEncoder(model, enc["pooling"], enc["prefix"], enc["max_length"],
                                    o.device, o.batch_size, safetensors_only=copied)
        raw = json.loads((directory / "targets.json").read_text(encoding="utf-8"))
        gen._keys = [k for k, _ in raw]
        gen._targets = [[(cid, name) for cid, name in t] for _, t in raw]
        gen._provenance = read_provenance(directory, gen._targets)
        gen._rows = target_rows(gen._targets, gen._provenance)
        gen._index = faiss_index.read_index(directory / "index.faiss")
        faiss_index.set_search_params(gen._index, o.nprobe, o.ef_search)
        if (directory / "annotations.faiss").is_file() and o.switch_threshold is not None:
            gen._small = faiss_index.read_index(directory / "annotations.faiss")
            gen._small_ids = np.load(directory / "annotation_ids.npy", allow_pickle=False)
        gen._check_loaded(directory)
        if o.merge_tfidf:
            if not (directory / "tfidf").is_dir():
                raise ArtifactError(f"merge_tfidf is set but {directory} has no tfidf/")
            gen._tfidf = TfidfCandidateGenerator.load(directory / "tfidf", gen._tfidf_config(),
                                                      lang)
        return gen

    def _check_loaded(self, directory: Path) -> None:
        """Refuse indexes that do not fit the names beside them (files of different saves).

        Raises:
            ArtifactError: Naming the file and the two sizes.
        """
        if self._index.ntotal != len(self._keys):
            raise ArtifactError(f"{directory / 'index.faiss'} holds {self._index.ntotal} "
                                f"vectors but targets.json {len(self._keys)} names; save the "
                                "generator again")
        ids = self._small_ids
        if self._small is not None and (
                ids.ndim != 1 or self._small.ntotal != len(ids)
                or (len(ids) and (ids.min() < 0 or ids.max() >= len(self._keys)))):
            raise ArtifactError(f"{directory / 'annotations.faiss'} and annotation_ids.npy "
                                f"do not fit the {len(self._keys)} names of targets.json; "
                                "save the generator again")


#: Files and folders that :meth:`DenseCandidateGenerator.save` writes only for some settings.
_OPTIONAL_PARTS = ("encoder", "annotations.faiss", "annotation_ids.npy", "tfidf")


def _merge(first: list[Candidate], second: list[Candidate]) -> list[Candidate]:
    """Union of two candidate lists keeping the higher score per (span, concept)."""
    best: dict[tuple[Span, str], Candidate] = {}
    for cand in [*first, *second]:
        key = (cand.span, cand.concept_id)
        if key not in best or cand.score > best[key].score:
            best[key] = cand
    return list(best.values())
