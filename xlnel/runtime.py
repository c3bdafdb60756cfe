"""The runtime pipeline: a trained dictionary, candidate generator, filter and linking decision.

:class:`Pipeline` loads a folder written by ``xlnel train`` (:mod:`xlnel.training`), links
texts and documents, and saves itself; it holds no training code. A pipeline folder holds
``config.yaml`` (the resolved config), ``xlnel.json`` (version), ``dictionary.tsv``,
``concepts.tsv`` (each concept's preferred name and type), ``candidates/`` (the fitted
generator), ``filter/`` and ``train_report.json``; with a mention tagger also ``ner/``; with
test documents also ``test.jsonl``.

Functions that take a pipeline accept a :data:`PipelineSource`: a loaded :class:`Pipeline`, a
folder, or a :class:`SavedPipeline` (a folder with load-time overrides);
:func:`open_pipeline` and :func:`saved_pipeline` turn one into what they need.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias, TypeVar, overload

import numpy as np
from tqdm import tqdm

from xlnel.artifacts import PIPELINE_FORMAT, check_pipeline_format, pipeline_identity
from xlnel.candidates.base import CandidateGenerator, generator_class
from xlnel.config import PipelineConfig, dump_config, load_config
from xlnel.dictionary.concepts import ConceptTable
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ArtifactError, ConfigError
from xlnel.filtering.base import CandidateFilter, filter_class
from xlnel.io import write_documents
from xlnel.io._atomic import atomic_dir
from xlnel.linkers.base import Linker
from xlnel.linkers.describe import describe_links, name_ids
from xlnel.linkers.entity_types import EntityTyper
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.linkers.windows import link_windowed
from xlnel.ner.base import SpanTagger, tagger_class
from xlnel.pool import link_in_pool, worker_pool
from xlnel.threads import ensure_threads
from xlnel.types import Candidate, Document, Link, Span
from xlnel.version import __version__

logger = logging.getLogger(__name__)

__all__ = ["LINK_TIME_SECTIONS", "Pipeline", "PipelineSource", "SavedPipeline", "batched",
           "candidates_of", "check_link_overrides", "generate_candidates", "open_pipeline",
           "pipeline_folder", "pipeline_lang", "saved_pipeline", "source_identity"]

T = TypeVar("T")
LEXICON_FILE = "lexicon.json"
"""The pipeline folder's :class:`~xlnel.linkers.lexicon.AnnotationLexicon` (``linker.lexicon``)."""
TYPER_FILE = "entity_types.json"
"""The pipeline folder's :class:`~xlnel.linkers.entity_types.EntityTyper` (when the training
documents had types)."""


class Pipeline(Linker):
    """Dictionary + (optional tagger) + candidate generator + filter, end to end.

    ``concepts`` names and types the linked concepts (by default from the dictionary's
    knowledge-base names, without types).
    """

    def __init__(self, config: PipelineConfig, dictionary: Dictionary,
                 generator: CandidateGenerator, candidate_filter: CandidateFilter,
                 tagger: SpanTagger | None = None,
                 concepts: ConceptTable | None = None,
                 lexicon: AnnotationLexicon | None = None,
                 typer: EntityTyper | None = None) -> None:
        self.config = config
        self.dictionary = dictionary
        self.generator = generator
        self.filter = candidate_filter
        self.tagger = tagger
        #: The training annotations' concepts per mention text (``linker.lexicon``).
        self.lexicon = lexicon
        #: The training annotations' entity types (``linker.entity_types``); ``None`` when the
        #: training documents had none.
        self.typer = typer
        #: Which saved pipeline this is, with the load overrides (set by :meth:`load`);
        #: recorded beside shard outputs so that a resumed run never mixes two pipelines.
        self.identity: dict[str, Any] | None = None
        #: The folder and overrides this pipeline was loaded from (set by :meth:`load`), which
        #: worker processes load again for ``pipe(..., workers=N)``.
        self.source: SavedPipeline | None = None
        self._name_ids: set[str] | None = None
        self.concepts = ConceptTable.from_dictionary(dictionary) if concepts is None else concepts

    def candidates(self, documents: Sequence[Document]) -> list[list[Candidate]]:
        """High-recall candidates of each document (of the tagger's spans when there is one)."""
        return generate_candidates(self.generator, self.tagger, documents)

    def link_batch(self, documents: Sequence[Document]) -> list[Document]:
        """Link documents: candidates, filter scores, best candidate per span, overlaps.

        Each link says what was found: the concept's preferred name and type, the entity type
        the training annotations give it (``linker.entity_types``), and the dictionary name
        that matched with its source. Documents longer than
        ``linker.window_chars`` are linked window by window (:mod:`xlnel.linkers.windows`), one
        at a time, so memory stays bounded (``linker.propagate``, ``linker.abbreviations``,
        ``linker.consistency`` and ``linker.lexicon`` apply to documents linked whole).
        """
        cfg = self.config.linker
        linked = link_windowed(documents, self._scored, self.filter.threshold, cfg,
                               self.lexicon)
        if self._name_ids is None:
            self._name_ids = name_ids(self.dictionary)
        typer = self.typer if cfg.entity_types else None
        return [describe_links(d, self.dictionary, self.concepts, self._name_ids, typer)
                for d in linked]

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

    def pipe(self, texts: Iterable[str], batch_size: int = 64,
             workers: int = 1) -> Iterator[list[Link]]:
        """Link texts lazily, ``batch_size`` at a time, yielding each text's links in order.

        Args:
            texts: The texts (any iterable; read as the batches are sent).
            batch_size: Texts per batch.
            workers: Processes; with ``workers > 1`` each spawned worker loads this pipeline's
                folder once (so the pipeline must have been loaded from a folder, see
                :meth:`load`) and the links come back in input order, as with one process.

        For documents with ids, or files, see :func:`xlnel.pipeline.link_documents`.

        Raises:
            ValueError: When ``batch_size`` or ``workers`` is below 1, or ``workers > 1`` for a
                pipeline that was not loaded from a folder.
        """
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if workers == 1:
            for batch in batched(texts, batch_size):
                yield from self.link(batch)
            return
        if self.source is None:
            raise ValueError("pipe(workers > 1) needs a pipeline loaded from its folder "
                             "(xlnel.load or Pipeline.load): each worker process loads it once; "
                             "save this one first")
        docs = ([Document(f"text-{i}", t) for i, t in enumerate(batch)]
                for batch in batched(texts, batch_size))
        with worker_pool(self.source, workers) as executor:
            for linked in link_in_pool(executor, docs, 2 * workers):
                for doc in linked:
                    yield list(doc.entities)

    def save(self, directory: str | Path, report: dict[str, Any] | None = None,
             test_documents: Sequence[Document] = ()) -> None:
        """Write the pipeline folder atomically (a partly written folder never appears).

        Args:
            directory: The folder; an existing one is replaced.
            report: Written as ``train_report.json`` when given.
            test_documents: Held-out documents, written as ``test.jsonl`` when any.
        """
        with atomic_dir(directory) as tmp:
            self._write(tmp)
            if test_documents:
                write_documents(tmp / "test.jsonl", test_documents)
            if report is not None:
                (tmp / "train_report.json").write_text(json.dumps(report, indent=2),
                                                       encoding="utf-8")

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
        if self.lexicon is not None:
            self.lexicon.save(d / LEXICON_FILE)
        if self.typer is not None:
            self.typer.save(d / TYPER_FILE)

    @classmethod
    def load(cls, directory: str | Path,
             overrides: Mapping[str, Any] | None = None) -> Pipeline:
        """Read a pipeline folder written by :meth:`save` or ``xlnel train``.

        Args:
            directory: The pipeline folder.
            overrides: Dotted config keys to change for this load (``xlnel link --set``):
                search settings of the candidates (``candidates.workers``,
                ``candidates.top_m``, the dense index's ``candidates.options.device``), the
                filter's threshold and inference options (``filter.options.inference_dtype``),
                the tagger's (``ner.options.device``), the linker. Keys that training fixes
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
        lexicon = None
        if (d / LEXICON_FILE).is_file():
            lexicon = AnnotationLexicon.load(d / LEXICON_FILE)
        elif config.linker.lexicon:
            raise ArtifactError(f"{d} was trained without linker.lexicon (no {LEXICON_FILE}); "
                                "retrain it with linker.lexicon: true or link without it")
        # a pipeline trained on documents without types (or before typing) has no typer
        typer = EntityTyper.load(d / TYPER_FILE) if (d / TYPER_FILE).is_file() else None
        pipe = cls(config, dictionary, generator, filt, tagger, concepts, lexicon, typer)
        pipe.identity = pipeline_identity(d, overrides)
        pipe.source = SavedPipeline(str(d), tuple((overrides or {}).items()))
        return pipe


LINK_TIME_SECTIONS = ("candidates", "filter", "linker", "ner")
"""Config sections whose keys may change when a trained pipeline is loaded."""
_FIXED_BY_TRAINING = {"candidates": ("generator",), "filter": ("name", "select_level", "select_by")}


def check_link_overrides(overrides: Mapping[str, Any],
                         config: PipelineConfig | None = None) -> None:
    """Refuse overrides that cannot apply to a trained pipeline.

    Allowed are the ``candidates`` keys outside its generator class's ``trained_keys`` (its
    search settings) and the options it lists in ``inference_options``, the filter's
    ``threshold`` and the options its class lists in ``inference_options``, those of the
    tagger (``ner.options.device``), and anything under ``linker``. The classes' declarations
    are checked when the saved ``config`` is given.

    Raises:
        ConfigError: Naming the key and what may change instead.
    """
    allowed = ", ".join(f"{s}.*" for s in LINK_TIME_SECTIONS)
    for key in overrides:
        section, _, rest = key.partition(".")
        field, _, option = rest.partition(".")
        if section not in PipelineConfig.model_fields:
            raise ConfigError(f"{key}: unknown key; keys that can change when linking: "
                              f"{allowed}")
        if section in LINK_TIME_SECTIONS and not rest:
            # the keys it leaves out would fall back to their defaults, not the trained values
            raise ConfigError(f"{key}: give the keys of the section one by one "
                              f"({section}.KEY=value), so that the others keep the values "
                              "the pipeline was trained with")
        if section not in LINK_TIME_SECTIONS:
            raise ConfigError(f"{key} cannot change when a trained pipeline is loaded "
                              f"(the dictionary, DFT and data are fixed by training); "
                              f"allowed: {allowed}")
        fixed = field in _FIXED_BY_TRAINING.get(section, ())
        if section == "candidates" and config is not None:
            gen = generator_class(config.candidates.generator)
            fixed = fixed or (field in gen.trained_keys and not (
                field == "options" and option.split(".")[0] in gen.inference_options))
        if section == "ner":
            _check_tagger_override(key, field, option, config)
        if fixed:
            raise ConfigError(f"{key} is fixed by training and cannot change when the pipeline "
                              "is loaded; train a new pipeline for another value")
        if section == "filter" and field == "options" and config is not None:
            allowed_options = filter_class(config.filter.name).inference_options
            if option.split(".")[0] not in allowed_options:
                can = ", ".join(sorted(allowed_options)) or "none"
                raise ConfigError(f"{key}: {config.filter.name} keeps the options it was "
                                  f"trained with; those that can change when linking: {can}")


def _check_tagger_override(key: str, field: str, option: str,
                           config: PipelineConfig | None) -> None:
    """Only the tagger's ``inference_options`` change when a pipeline is loaded."""
    tagger = (None if config is None or config.ner.name is None
              else tagger_class(config.ner.name))
    if field == "options" and option and (config is None or tagger is not None
                                          and option.split(".")[0] in tagger.inference_options):
        return
    can = ", ".join(f"ner.options.{o}" for o in sorted(
        tagger.inference_options if tagger is not None else ())) or "none"
    raise ConfigError(f"{key}: the pipeline's tagger keeps what it was trained with; what can "
                      f"change when linking: {can}")


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


def candidates_of(generator: CandidateGenerator, tagger: SpanTagger | None,
                  docs: Sequence[Document], progress: bool = False, desc: str = "candidates",
                  batch_size: int = 64) -> list[list[Candidate]]:
    """Candidates of ``docs``, ``batch_size`` documents at a time (a progress bar if asked)."""
    out: list[list[Candidate]] = []
    with tqdm(total=len(docs), desc=desc, unit="doc", disable=not progress) as bar:
        for batch in batched(docs, batch_size):
            out.extend(generate_candidates(generator, tagger, batch))
            bar.update(len(batch))
    return out


PipelineSource: TypeAlias = "str | Path | SavedPipeline | Pipeline"
"""What functions taking a pipeline accept: a folder, a folder with overrides, or a loaded one."""


def open_pipeline(pipeline: PipelineSource) -> Pipeline:
    """The loaded pipeline: ``pipeline`` itself, or its folder loaded with its overrides."""
    if isinstance(pipeline, Pipeline):
        return pipeline
    return SavedPipeline.of(pipeline).load()


def saved_pipeline(pipeline: PipelineSource) -> SavedPipeline | None:
    """The folder and overrides of ``pipeline`` (checked), ``None`` for a loaded object."""
    if isinstance(pipeline, Pipeline):
        return None
    return SavedPipeline.of(pipeline)


def source_identity(pipeline: PipelineSource) -> dict[str, Any] | None:
    """Which saved pipeline ``pipeline`` is, with its load overrides (see
    :func:`~xlnel.artifacts.pipeline_identity`); ``None`` for a pipeline never saved."""
    if isinstance(pipeline, Pipeline):
        return pipeline.identity
    return SavedPipeline.of(pipeline).identity()


def pipeline_folder(pipeline: PipelineSource) -> str | None:
    """The folder of a pipeline given by folder, ``None`` for a loaded pipeline object."""
    if isinstance(pipeline, SavedPipeline):
        return pipeline.folder
    if isinstance(pipeline, str | Path):
        return str(pipeline)
    return None


def pipeline_lang(pipeline: PipelineSource) -> str | None:
    """The language a pipeline links (from its saved config), ``None`` when unknown."""
    if isinstance(pipeline, Pipeline):
        return pipeline.config.lang
    folder = pipeline_folder(pipeline)
    config = Path(folder) / "config.yaml" if folder is not None else None
    return load_config(config).lang if config is not None and config.is_file() else None


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last one shorter), read lazily.

    Raises:
        ValueError: When ``size`` is below 1.
    """
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
