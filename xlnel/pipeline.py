"""The trained pipeline: dictionary, candidate generator, filter and linking decision.

A pipeline folder holds ``config.yaml`` (the resolved config), ``xlnel.json`` (version),
``dictionary.tsv``, ``concepts.tsv`` (each concept's preferred name and type), ``candidates/``
(the fitted generator), ``filter/`` and ``train_report.json``;
with a mention tagger also ``ner/``; with a held-out split of the training file also
``test.jsonl``.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, overload

import numpy as np
from tqdm import tqdm

from xlnel import __version__
from xlnel.artifacts import PIPELINE_FORMAT, check_pipeline_format, pipeline_identity
from xlnel.candidates.base import CandidateGenerator, generator_class
from xlnel.config import PipelineConfig, dump_config, load_config
from xlnel.dictionary.concepts import ConceptTable
from xlnel.dictionary.dft import fine_tune_dictionary, split_documents
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ArtifactError, ConfigError
from xlnel.evaluation.folds import fold_split
from xlnel.filtering.base import CandidateFilter, filter_class
from xlnel.io import load_kb, read_documents, write_documents
from xlnel.io._atomic import remove_stale_files, sigterm_as_interrupt
from xlnel.linkers.base import Linker
from xlnel.linkers.decide import decide
from xlnel.linkers.windows import link_in_windows, plan_windows
from xlnel.ner.base import SpanTagger, tagger_class
from xlnel.threads import ensure_threads
from xlnel.types import Candidate, Document, Link, Span

logger = logging.getLogger(__name__)

class Pipeline(Linker):
    """Dictionary + (optional tagger) + candidate generator + filter, end to end.

    ``concepts`` names and types the linked concepts (by default from the dictionary's
    knowledge-base names, without types).
    """

    def __init__(self, config: PipelineConfig, dictionary: Dictionary,
                 generator: CandidateGenerator, candidate_filter: CandidateFilter,
                 tagger: SpanTagger | None = None,
                 concepts: ConceptTable | None = None) -> None:
        self.config = config
        self.dictionary = dictionary
        self.generator = generator
        self.filter = candidate_filter
        self.tagger = tagger
        #: Which saved pipeline this is, with the load overrides (set by :meth:`load`);
        #: recorded beside shard outputs so that a resumed run never mixes two pipelines.
        self.identity: dict[str, Any] | None = None
        self._name_ids: set[str] | None = None
        self.concepts = ConceptTable.from_dictionary(dictionary) if concepts is None else concepts

    def candidates(self, documents: Sequence[Document]) -> list[list[Candidate]]:
        """High-recall candidates of each document (of the tagger's spans when there is one)."""
        return generate_candidates(self.generator, self.tagger, documents)

    def link_batch(self, documents: Sequence[Document]) -> list[Document]:
        """Link documents: candidates, filter scores, best candidate per span, overlaps.

        Each link says what was found: the concept's preferred name and type, and the
        dictionary name that matched with its source. Documents longer than
        ``linker.window_chars`` are linked window by window (:mod:`xlnel.linkers.windows`), one
        at a time, so memory stays bounded (``linker.propagate`` and ``linker.abbreviations``
        apply to documents linked whole).
        """
        cfg = self.config.linker
        short = [d for d in documents if len(d.text) <= cfg.window_chars]
        cands, scores = self._scored(short) if short else ([], [])
        linked = {id(d): decide(d, c, s, self.filter.threshold, cfg.overlap, cfg.propagate,
                                cfg.abbreviations)
                  for d, c, s in zip(short, cands, scores, strict=True)}
        for d in documents:
            if id(d) not in linked:
                windows = plan_windows(d.text, cfg.window_chars, cfg.window_overlap)
                linked[id(d)] = link_in_windows(d, windows, self._scored,
                                                self.filter.threshold, cfg.overlap)
        return [self._with_id_kinds(self.concepts.describe(linked[id(d)], self.dictionary))
                for d in documents]

    def _scored(self, documents: Sequence[Document]
                ) -> tuple[list[list[Candidate]], list[np.ndarray]]:
        cands = self.candidates(documents)
        return cands, self.filter.score_batch(documents, cands)

    @overload
    def link(self, document: str) -> list[Link]: ...
    @overload
    def link(self, document: Document) -> Document: ...
    @overload
    def link(self, document: list[str] | tuple[str, ...]) -> list[list[Link]]: ...

    def link(self, document: str | Document | list[str] | tuple[str, ...]
             ) -> list[Link] | Document | list[list[Link]]:
        """Link a text, a list of texts (one batch) or a :class:`~xlnel.types.Document`.

        Args:
            document: A text, a list or tuple of texts, or a document.

        Returns:
            The text's links (offsets into the text, best concept first in ``concept_ids``),
            one list of links per text, or the document with its predicted ``entities``.
        """
        if isinstance(document, Document):
            return self.link_batch([document])[0]
        if isinstance(document, str):
            return list(self.link_batch([Document("text-0", document)])[0].entities)
        docs = [Document(f"text-{i}", t) for i, t in enumerate(document)]
        return [list(d.entities) for d in self.link_batch(docs)]

    def pipe(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[Link]]:
        """Link texts lazily, ``batch_size`` at a time, yielding each text's links in order.

        For documents with ids, or several processes, see :func:`link_documents`.

        Raises:
            ValueError: When ``batch_size`` is below 1.
        """
        from xlnel.stream import batched

        for batch in batched(texts, batch_size):
            yield from self.link(batch)

    def _with_id_kinds(self, doc: Document) -> Document:
        """State of each link whether its id is a concept id or a dictionary name used as id."""
        if self._name_ids is None:
            # A name that is its own concept id: a names-list entry, or a DFT mention without
            # a concept; knowledge-base ids (CUIs, HPO ids) are never among their own names.
            d = self.dictionary
            self._name_ids = {c for c in d.concept_ids() if c in d and c in d.concepts_of(c)}
        names = self._name_ids
        links = tuple(replace(e, id_kind="dictionary_name" if e.concept_id in names
                              else "concept") for e in doc.entities)
        return replace(doc, entities=links)

    def save(self, directory: str | Path, report: dict[str, Any] | None = None,
             test_documents: Sequence[Document] = ()) -> None:
        """Write the pipeline folder atomically (a partly written folder never appears).

        Args:
            directory: The folder; an existing one is replaced.
            report: Written as ``train_report.json`` when given.
            test_documents: Held-out documents, written as ``test.jsonl`` when any.
        """
        target = Path(directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        # Folders of a save that was killed (mkdtemp's 8 characters, or a replaced folder).
        stale = re.compile(re.escape(f".{target.name}.") + r"(?:[a-z0-9_]{8}|old-\d+)")
        remove_stale_files(target.parent, stale)
        with sigterm_as_interrupt():
            tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
            try:
                self._write(tmp)
                if test_documents:
                    write_documents(tmp / "test.jsonl", test_documents)
                if report is not None:
                    (tmp / "train_report.json").write_text(json.dumps(report, indent=2),
                                                           encoding="utf-8")
                _replace_dir(tmp, target)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise

    def _write(self, d: Path) -> None:
        (d / "config.yaml").write_text(dump_config(self.config), encoding="utf-8")
        info = {"xlnel_version": __version__, "format": PIPELINE_FORMAT,
                "pipeline_id": uuid.uuid4().hex}
        (d / "xlnel.json").write_text(json.dumps(info), encoding="utf-8")
        self.dictionary.save(d / "dictionary.tsv")
        self.concepts.save(d / "concepts.tsv")
        self.generator.save(d / "candidates")
        self.filter.save(d / "filter")
        if self.tagger is not None:
            self.tagger.save(d / "ner")

    @classmethod
    def load(cls, directory: str | Path,
             overrides: Mapping[str, Any] | None = None) -> Pipeline:
        """Read a pipeline folder written by :meth:`save` or ``xlnel train``.

        Args:
            directory: The pipeline folder.
            overrides: Dotted config keys to change for this load (``xlnel link --set``):
                search settings of the candidates (``candidates.workers``,
                ``candidates.top_m``), the filter's threshold and inference options
                (``filter.options.inference_dtype``), the linker. Keys that training fixes
                (the index's n-grams, a filter's training options) are refused; see
                :func:`check_link_overrides`.

        Raises:
            ArtifactError: If the folder or one of its parts is missing.
            ConfigError: If an override is outside those sections or fails validation.
        """
        ensure_threads()
        d = Path(directory)
        if not (d / "config.yaml").is_file():
            raise ArtifactError(f"{d} is not a pipeline folder (no config.yaml); train one with "
                                f"`xlnel train CONFIG --out {d}`")
        check_pipeline_format(d)
        check_link_overrides(overrides or {})  # sections first, before values are validated
        config = load_config(d / "config.yaml", dict(overrides or {}))
        check_link_overrides(overrides or {}, config)
        dictionary = Dictionary.load(d / "dictionary.tsv")
        generator = generator_class(config.candidates.generator).load(
            d / "candidates", config.candidates, config.lang)
        filt = filter_class(config.filter.name).load(d / "filter", config.filter, config.lang)
        tagger = None
        if config.ner.name is not None:
            tagger = tagger_class(config.ner.name).load(d / "ner", config.ner, config.lang)
        concepts = None
        if (d / "concepts.tsv").is_file():
            concepts = ConceptTable.load(d / "concepts.tsv")
        pipe = cls(config, dictionary, generator, filt, tagger, concepts)
        pipe.identity = pipeline_identity(d, overrides)
        return pipe


LINK_TIME_SECTIONS = ("candidates", "filter", "linker")
"""Config sections whose keys may change when a trained pipeline is loaded."""
_FIXED_BY_TRAINING = {
    "candidates": ("generator", "ngram_min", "ngram_max", "sublinear_tf", "use_idf",
                   "pad_ends", "options"),
    "filter": ("name", "select_level"),
}


def check_link_overrides(overrides: Mapping[str, Any],
                         config: PipelineConfig | None = None) -> None:
    """Refuse overrides that cannot apply to a trained pipeline.

    Allowed are the search settings of ``candidates`` (not the index's n-grams), the filter's
    ``threshold`` and the options its class lists in ``inference_options`` (checked when the
    saved ``config`` is given), and anything under ``linker``.

    Raises:
        ConfigError: Naming the key and what may change instead.
    """
    for key in overrides:
        section, _, rest = key.partition(".")
        field, _, option = rest.partition(".")
        if section not in LINK_TIME_SECTIONS or not rest:
            allowed = ", ".join(f"{s}.*" for s in LINK_TIME_SECTIONS)
            raise ConfigError(f"{key} cannot change when a trained pipeline is loaded "
                              f"(the dictionary, DFT and data are fixed by training); "
                              f"allowed: {allowed}")
        if field in _FIXED_BY_TRAINING.get(section, ()):
            raise ConfigError(f"{key} is fixed by training and cannot change when the pipeline "
                              "is loaded; train a new pipeline for another value")
        if section == "filter" and field == "options" and config is not None:
            allowed_options = filter_class(config.filter.name).inference_options
            if option.split(".")[0] not in allowed_options:
                can = ", ".join(sorted(allowed_options)) or "none"
                raise ConfigError(f"{key}: {config.filter.name} keeps the options it was "
                                  f"trained with; those that can change when linking: {can}")


@dataclass(frozen=True)
class SavedPipeline:
    """A pipeline folder and the overrides to load it with (see :meth:`Pipeline.load`).

    Picklable, so worker processes and Ray actors load exactly what the caller asked for.
    """

    folder: str
    overrides: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, pipeline: str | Path | SavedPipeline,
           overrides: Mapping[str, Any] | None = None) -> SavedPipeline:
        """``pipeline`` with ``overrides`` added, checked against its saved config (so a bad
        key fails here, not in each worker process).

        Raises:
            ConfigError: If an override cannot apply (see :func:`check_link_overrides`).
        """
        if isinstance(pipeline, SavedPipeline):
            merged = {**dict(pipeline.overrides), **(overrides or {})}
            folder = pipeline.folder
        else:
            merged, folder = dict(overrides or {}), str(pipeline)
        if merged:
            saved = Path(folder) / "config.yaml"
            check_link_overrides(merged, load_config(saved) if saved.is_file() else None)
        return cls(folder, tuple(merged.items()))

    def load(self) -> Pipeline:
        """Load the folder with the overrides."""
        return Pipeline.load(self.folder, dict(self.overrides))

    def identity(self) -> dict[str, Any]:
        """See :func:`pipeline_identity`."""
        return pipeline_identity(self.folder, dict(self.overrides))


def generate_candidates(generator: CandidateGenerator, tagger: SpanTagger | None,
                        documents: Sequence[Document]) -> list[list[Candidate]]:
    """The generator's candidates of each document, restricted to the tagger's spans if any."""
    spans: list[list[Span]] | None = None
    if tagger is not None:
        spans = tagger.predict_batch(documents)
    return generator.generate_batch(documents, spans)


def _replace_dir(new: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{time.time_ns()}")
        target.rename(old)
    new.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_dictionary(config: PipelineConfig) -> Dictionary:
    """The dictionary from the config's knowledge bases and extra dictionaries (before DFT)."""
    return build_dictionary_and_concepts(config)[0]


def build_dictionary_and_concepts(config: PipelineConfig) -> tuple[Dictionary, ConceptTable]:
    """:func:`build_dictionary`, and the preferred names and types of the KB concepts."""
    dictionary, table = Dictionary(), ConceptTable()
    for spec in config.dictionary.kb:
        concepts = load_kb(spec)
        table.update(ConceptTable.from_concepts(concepts))
        added = dictionary.extend(Dictionary.from_concepts(concepts))
        logger.info("dictionary: %d entries from %s", added, spec)
    check_input_files(config)
    for path in config.dictionary.extra:
        added = dictionary.extend(Dictionary.load(path))
        logger.info("dictionary: %d entries from %s", added, path)
    if len(dictionary) == 0:
        raise ConfigError("the dictionary is empty: give dictionary.kb or dictionary.extra")
    return dictionary, table


def check_input_files(config: PipelineConfig) -> None:
    """Check that the files a config names for training exist, before any work.

    Raises:
        ConfigError: Naming the config key, the path and the folder it is relative to.
    """
    named = [("data.train", config.data.train), ("data.test", config.data.test)]
    named += [(f"dictionary.extra[{i}]", p) for i, p in enumerate(config.dictionary.extra)]
    for key, value in named:
        if value is not None and not Path(value).exists():
            raise ConfigError(f"{key}: no such file {value!r} (relative paths are read from "
                              f"the working folder {Path.cwd()})")


def load_training_documents(config: PipelineConfig) -> tuple[list[Document], list[Document]]:
    """Training documents and held-out test documents.

    With ``data.folds`` the test documents are fold ``data.fold`` of ``data.train`` and the
    other folds train; else they are split off when ``data.test_fraction`` > 0.
    ``data.max_documents`` then cuts the training documents only.
    """
    data = config.data
    if data.train is None:
        return [], []
    docs = read_documents(data.train)
    if not docs:
        raise ConfigError(f"data.train: no documents in {data.train}; give an annotated "
                          "corpus file (JSONL, PubTator) or BRAT folder")
    test: list[Document] = []
    if data.folds is not None:
        docs, test = fold_split(docs, data.folds, data.fold, data.split_seed)
    elif data.test_fraction > 0:
        test, docs = split_documents(docs, data.test_fraction, data.split_seed)
        if not docs:
            raise ConfigError(f"data.test_fraction={data.test_fraction} leaves no "
                              f"training documents of the {len(test)} in {data.train}")
    return docs[:data.max_documents], test


def fit_tagger(config: PipelineConfig, train_docs: Sequence[Document],
               progress: bool = False) -> SpanTagger | None:
    """The config's mention tagger fitted on ``train_docs``, or ``None`` when it has none."""
    if config.ner.name is None:
        return None
    if config.ner.pretrained is not None:
        return load_pretrained_tagger(config)
    # The tagger learns mention boundaries from every training document: the DFT share's
    # mentions are not in the filter's data, but they are still valid tagging examples.
    tagger = tagger_class(config.ner.name)(config.ner, config.lang)
    tagger.fit(train_docs, progress=progress)
    return tagger


def load_pretrained_tagger(config: PipelineConfig) -> SpanTagger:
    """The trained tagger named by ``config.ner.pretrained`` (see :class:`NerConfig`).

    Raises:
        ConfigError: If its pipeline was trained on other data or with another tagger.
        ArtifactError: If the folder holds no saved tagger.
    """
    assert config.ner.name is not None and config.ner.pretrained is not None
    source = Path(config.ner.pretrained)
    folder = source / "ner" if (source / "ner").is_dir() else source
    saved_config = folder.parent / "config.yaml"
    if saved_config.is_file():
        saved = load_config(saved_config)
        if saved.data != config.data:
            raise ConfigError(f"ner.pretrained: the tagger in {folder} was trained with data "
                              f"{saved.data.model_dump()}, not {config.data.model_dump()}; it "
                              "may have seen this config's test documents")
        if saved.ner.name != config.ner.name:
            raise ConfigError(f"ner.pretrained: {folder} holds a {saved.ner.name} tagger, "
                              f"not {config.ner.name}")
    else:
        logger.warning("ner.pretrained: %s has no config.yaml beside it; the data the tagger "
                       "was trained on cannot be checked", folder)
    logger.info("reusing the tagger in %s", folder)
    return tagger_class(config.ner.name).load(folder, config.ner, config.lang)


def fit_generator(config: PipelineConfig, dictionary: Dictionary) -> CandidateGenerator:
    """The config's candidate generator with ``dictionary`` indexed."""
    generator = generator_class(config.candidates.generator)(config.candidates, config.lang)
    generator.fit(dictionary)
    return generator


def train(config: PipelineConfig, out: str | Path, progress: bool = False, *,
          overwrite: bool = False, inputs: Iterable[str | Path] = ()) -> dict[str, Any]:
    """Build the dictionary, apply DFT, fit candidates and filter, and save the pipeline.

    ``out`` is checked before any work (see :func:`xlnel.outputs.check_pipeline_output`): it
    may not be a file, the working folder, an input of the config (or of ``inputs``), a folder
    holding one, or a non-empty folder that is not a pipeline unless ``overwrite``.

    Args:
        config: The pipeline config.
        out: Pipeline folder to write; an earlier pipeline there is replaced.
        progress: Show progress bars.
        overwrite: Replace a non-empty folder that is not an xlnel pipeline.
        inputs: Other files the caller read (the config file), also protected.

    Returns:
        The training report (also written to ``train_report.json`` in ``out``).

    Raises:
        OutputError: When ``out`` is refused.
    """
    from xlnel.outputs import check_pipeline_output, config_inputs

    target = check_pipeline_output(out, [*config_inputs(config), *inputs], overwrite)
    check_input_files(config)
    ensure_threads()
    t0 = time.perf_counter()
    train_docs, test_docs = load_training_documents(config)
    dictionary, concepts = build_dictionary_and_concepts(config)
    filter_docs, dft = fine_tune_dictionary(dictionary, train_docs, config.dft.R,
                                            config.dft.seed, config.dft.unlinked)
    tagger = fit_tagger(config, train_docs, progress)
    generator = fit_generator(config, dictionary)
    filt = filter_class(config.filter.name)(config.filter, config.lang)
    cands = _generate(generator, tagger, filter_docs, progress and bool(filter_docs),
                      "candidates (filter training)")
    filt.fit(filter_docs, cands, progress=progress)
    concepts.update(ConceptTable.from_dictionary(dictionary))  # concepts only DFT or extra name
    pipeline = Pipeline(config, dictionary, generator, filt, tagger, concepts)
    report: dict[str, Any] = {
        "xlnel_version": __version__,
        "train_documents": len(train_docs), "test_documents": len(test_docs),
        "dictionary": {"names": len(dictionary.names), "entries": len(dictionary),
                       "by_source": dictionary.count_by_source()},
        "dft": asdict(dft), "filter": {"name": filt.registered_name,
                                       "threshold": filt.threshold},
        "seconds": round(time.perf_counter() - t0, 2),
    }
    pipeline.save(target, report=report, test_documents=test_docs)
    return report


def _generate(generator: CandidateGenerator, tagger: SpanTagger | None,
              docs: Sequence[Document], progress: bool, desc: str,
              batch_size: int = 64) -> list[list[Candidate]]:
    out: list[list[Candidate]] = []
    for batch in _batches(docs, batch_size, progress, desc):
        out.extend(generate_candidates(generator, tagger, batch))
    return out


def _batches(docs: Sequence[Document], size: int, progress: bool,
             desc: str) -> Iterator[Sequence[Document]]:
    with tqdm(total=len(docs), desc=desc, unit="doc", disable=not progress) as bar:
        for lo in range(0, len(docs), size):
            batch = docs[lo:lo + size]
            yield batch
            bar.update(len(batch))


def link(pipeline: str | Path | SavedPipeline | Pipeline, source: str | Path, out: str | Path,
         batch_size: int = 64, progress: bool = False, workers: int = 1) -> int:
    """Link the documents of ``source`` and write them (JSONL or PubTator, by extension).

    Streams: the input is read lazily and the output written batch by batch to a temporary
    file that replaces ``out`` only at the end (see :func:`xlnel.stream.link_file`), so memory
    does not grow with the corpus and an error leaves no partial output. ``.gz`` names are
    read and written compressed.

    Args:
        pipeline: A loaded pipeline, or its folder (a folder when ``workers > 1``), optionally
            with load-time overrides (:class:`SavedPipeline`).
        source: JSONL or PubTator file, optionally ``.gz``.
        out: Output file; the format follows its extension.
        batch_size: Documents per batch.
        progress: Show a progress bar.
        workers: Processes, each loading the pipeline once; the output is the same for any
            number.

    Returns:
        The number of documents written.
    """
    from xlnel.stream import link_file

    return link_file(pipeline, source, out, batch_size, workers, progress)


def link_documents(pipeline: str | Path | SavedPipeline | Pipeline, documents: Iterable[Document],
                   batch_size: int = 64, progress: bool = False,
                   workers: int = 1) -> Iterator[Document]:
    """Link documents batch by batch, yielding each in input order once its batch is done.

    ``documents`` is consumed lazily; see :func:`xlnel.stream.link_stream`.
    """
    from xlnel.stream import link_stream

    yield from link_stream(pipeline, documents, batch_size, workers, progress)


def candidate_recall(pipeline: str | Path | Pipeline, gold: str | Path,
                     progress: bool = False) -> dict[str, dict[str, Any]]:
    """HRM recall of the pipeline's candidates on annotated documents, per level.

    Concept level is reported only when some gold mention has a concept id.
    """
    from xlnel.evaluation import hrm_recall

    pipe = pipeline if isinstance(pipeline, Pipeline) else Pipeline.load(pipeline)
    docs = read_documents(gold)
    cands = _generate(pipe.generator, pipe.tagger, docs, progress, "candidates")
    by_doc = {d.id: c for d, c in zip(docs, cands, strict=True)}
    levels = ["span"]
    if any(e.concept_ids for d in docs for e in d.entities):
        levels.append("concept")
    return {level: hrm_recall(docs, by_doc, level).to_dict() for level in levels}
