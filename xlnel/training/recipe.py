"""The training recipe: the stages that turn a config into a :class:`~xlnel.runtime.Pipeline`.

The stage graph is defined here once, in :data:`STEPS`: each step is a function of the run
(the outputs of the steps before it) with the parts of the config its output depends on.

============  =======================  ==================================================
step          config parts             output
============  =======================  ==================================================
dictionary    data, kb, dft            the dictionary after DFT, the filter's documents
tagger        data, ner                the fitted mention tagger (only with ``ner.name``)
generator     lang, candidates         the fitted matcher; needs ``dictionary``
candidates    (upstream only)          candidates of the filter's (and test) documents;
                                       with ``dft.crossfit``, the filter's come fold by
                                       fold from out-of-fold dictionaries
filter        filter (not threshold)   the fitted filter, its threshold chosen
============  =======================  ==================================================

Every step reads the training and test documents of
:func:`~xlnel.training.steps.load_training_documents`, which is where ``data.*`` gets its one
meaning. :func:`train` (``xlnel train``) runs the steps in this process and saves the
pipeline; ``xlnel experiment`` runs the same steps through its stage cache
(:mod:`xlnel.experiments.stages`), keyed by :func:`step_keys` (from the config parts and input
files of :mod:`xlnel.training.keys`).

The filter is always fitted as if ``filter.threshold`` were open (it then chooses one); a fixed
``filter.threshold`` is applied to the finished pipeline, so a sweep over the threshold reuses
one fitted filter.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import xlnel.training.steps as steps
from xlnel.candidates.base import CandidateGenerator, generator_class
from xlnel.config import PipelineConfig
from xlnel.dictionary.concepts import ConceptTable
from xlnel.dictionary.dft import DFTResult
from xlnel.dictionary.dictionary import Dictionary
from xlnel.filtering.base import CandidateFilter, filter_class
from xlnel.io.candidates import read_candidates, write_candidates
from xlnel.linkers.entity_types import EntityTyper
from xlnel.linkers.lexicon import AnnotationLexicon
from xlnel.ner.base import SpanTagger, tagger_class
from xlnel.runtime import Pipeline, candidates_of
from xlnel.threads import ensure_threads
from xlnel.training.keys import config_parts, content_hash
from xlnel.training.seeds import stage_seeds, with_stage_seeds
from xlnel.types import Candidate, Document
from xlnel.version import __version__

logger = logging.getLogger(__name__)

__all__ = ["STEPS", "FineTuned", "Step", "StepCandidates", "StepStore", "TrainingData",
           "TrainingRun", "step_keys", "train"]


# --------------------------------------------------------------------------- the stage graph
class FineTuned(NamedTuple):
    """Output of the ``dictionary`` step."""

    dictionary: Dictionary
    filter_documents: list[Document]
    dft: DFTResult


class StepCandidates(NamedTuple):
    """Output of the ``candidates`` step: of the filter's documents, and of the test
    documents when the run evaluates (else ``None``)."""

    filter: list[list[Candidate]]
    test: list[list[Candidate]] | None


@dataclass(frozen=True)
class Step:
    """One step of the recipe.

    Attributes:
        name: The step (its folder in a stage cache).
        needs: Steps whose cache keys enter this one's (their outputs, or outputs upstream of
            them, are what it consumes).
        config: The parts of the config (keys of :func:`config_parts`) its output depends
            on.
        make: Computes the output from the run.
        save: Writes the output into a folder; ``load`` reads it back (for a stage cache).
        load: See ``save``.
        applies: Whether the config has this step at all (else its output is ``None``).
    """

    name: str
    needs: tuple[str, ...]
    config: tuple[str, ...]
    make: Callable[[TrainingRun], Any]
    save: Callable[[Any, Path], None]
    load: Callable[[TrainingRun, Path], Any]
    applies: Callable[[PipelineConfig], bool] = lambda config: True


class StepStore(Protocol):
    """Where a run keeps step outputs (:class:`xlnel.experiments.stages.StageCache`)."""

    def folder(self, stage: str, key: str) -> Path | None:
        """The folder of a stored output, ``None`` when there is none."""

    def store(self, stage: str, key: str, write: Callable[[Path], None]) -> Path | None:
        """Store an output written by ``write(folder)``."""


def _make_dictionary(run: TrainingRun) -> FineTuned:
    dictionary = run.data.base_dictionary(run.config)
    dft = run.config.dft
    rest, result = steps.fine_tune_dictionary(dictionary, run.documents()[0], dft.R,
                                              dft.seed, dft.unlinked, dft.prune, dft.crossfit)
    return FineTuned(dictionary, rest, result)


def _save_dictionary(value: FineTuned, d: Path) -> None:
    value.dictionary.save(d / "dictionary.tsv")
    meta = {"filter_documents": [doc.id for doc in value.filter_documents],
            "dft": asdict(value.dft)}
    (d / "dft.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")


def _load_dictionary(run: TrainingRun, d: Path) -> FineTuned:
    meta = json.loads((d / "dft.json").read_text(encoding="utf-8"))
    ids = set(meta["filter_documents"])
    return FineTuned(Dictionary.load(d / "dictionary.tsv"),
                     [x for x in run.documents()[0] if x.id in ids], DFTResult(**meta["dft"]))


def _make_tagger(run: TrainingRun) -> SpanTagger | None:
    return steps.fit_tagger(run.config, run.documents()[0], run.progress)


def _load_tagger(run: TrainingRun, d: Path) -> SpanTagger:
    cfg = run.config
    assert cfg.ner.name is not None  # the step applies only with a tagger
    return tagger_class(cfg.ner.name).load(d, cfg.ner, cfg.lang)


def _make_generator(run: TrainingRun) -> CandidateGenerator:
    return steps.fit_generator(run.config, run.dictionary().dictionary)


def _load_generator(run: TrainingRun, d: Path) -> CandidateGenerator:
    cfg = run.config
    return generator_class(cfg.candidates.generator).load(d, cfg.candidates, cfg.lang)


def _make_candidates(run: TrainingRun) -> StepCandidates:
    gen, tagger = run.generator(), run.tagger()
    filter_docs = run.dictionary().filter_documents
    show = run.progress and bool(filter_docs)
    if run.config.dft.crossfit:
        train = steps.crossfit_candidates(run.config, run.data.base_dictionary(run.config),
                                          run.documents()[0], filter_docs, tagger, show)
    else:
        train = candidates_of(gen, tagger, filter_docs, show, "candidates (filter training)")
    test = None
    if run.evaluate:
        test = candidates_of(gen, tagger, run.documents()[1], run.progress,
                             "candidates (test)")
    return StepCandidates(train, test)


def _save_candidates(value: StepCandidates, d: Path) -> None:
    write_candidates(d / "filter.jsonl", value.filter)
    if value.test is not None:
        write_candidates(d / "test.jsonl", value.test)


def _load_candidates(run: TrainingRun, d: Path) -> StepCandidates:
    test = read_candidates(d / "test.jsonl") if (d / "test.jsonl").is_file() else None
    return StepCandidates(read_candidates(d / "filter.jsonl"), test)


def _make_filter(run: TrainingRun) -> CandidateFilter:
    return steps.fit_filter(run.config, run.dictionary().filter_documents,
                            run.candidates().filter, run.progress, run.documents()[0])


def _load_filter(run: TrainingRun, d: Path) -> CandidateFilter:
    cfg = run.config
    open_config = cfg.filter.model_copy(update={"threshold": None})
    return filter_class(cfg.filter.name).load(d, open_config, cfg.lang)


def _save_with_method(value: Any, d: Path) -> None:
    value.save(d)


STEPS: tuple[Step, ...] = (
    Step("dictionary", (), ("data", "kb", "dft"), _make_dictionary, _save_dictionary,
         _load_dictionary),
    Step("tagger", (), ("data", "ner"), _make_tagger, _save_with_method, _load_tagger,
         applies=lambda config: config.ner.name is not None),
    Step("generator", ("dictionary",), ("lang", "candidates"), _make_generator,
         _save_with_method, _load_generator),
    Step("candidates", ("generator", "tagger"), (), _make_candidates, _save_candidates,
         _load_candidates),
    Step("filter", ("candidates",), ("filter",), _make_filter, _save_with_method,
         _load_filter),
)
"""The recipe, upstream first (see the module docstring)."""


# --------------------------------------------------------------------------- cache keys
def step_keys(config: PipelineConfig, steps: Iterable[Step] = STEPS) -> dict[str, str]:
    """The key of each step's output for ``config``: a hash of the step's name, the keys of
    the steps it needs and its config parts (``""`` for a step the config does not have)."""
    parts = config_parts(config)
    keys: dict[str, str] = {}
    for step in steps:
        keys[step.name] = "" if not step.applies(config) else content_hash(
            step.name, *(keys[n] for n in step.needs), *(parts[p] for p in step.config))
    return keys


# --------------------------------------------------------------------------- running it
class TrainingData:
    """Documents and the base dictionary, read once and shared by the runs given it (the
    cells of an experiment)."""

    def __init__(self) -> None:
        self._docs: dict[str, tuple[list[Document], list[Document]]] = {}
        self._dicts: dict[str, tuple[Dictionary, ConceptTable]] = {}

    def documents(self, config: PipelineConfig) -> tuple[list[Document], list[Document]]:
        """(training documents, test documents) of :func:`load_training_documents`."""
        parts = config_parts(config)
        # the knowledge bases' retired ids are mapped in the documents (see the function)
        key = content_hash(parts["data"], parts["kb"])
        if key not in self._docs:
            self._docs[key] = steps.load_training_documents(config)
        return self._docs[key]

    def base_dictionary(self, config: PipelineConfig) -> Dictionary:
        """A fresh copy of the dictionary before DFT (its KBs are read once)."""
        return Dictionary(self._base(config)[0])

    def concepts(self, config: PipelineConfig) -> ConceptTable:
        """A fresh copy of the knowledge bases' concept names and types."""
        table = ConceptTable()
        table.update(self._base(config)[1])
        return table

    def _base(self, config: PipelineConfig) -> tuple[Dictionary, ConceptTable]:
        key = content_hash(config_parts(config)["kb"])
        if key not in self._dicts:
            self._dicts[key] = steps.build_dictionary_and_concepts(config)
        return self._dicts[key]


class TrainingRun:
    """The steps of :data:`STEPS` for one config, each computed at most once and only when
    something downstream needs it; with a ``store``, loaded from it or computed and stored.

    ``seconds`` and ``cached`` record, per step that ran, its wall time (without the steps it
    called) and whether it came from the store.

    Args:
        config: The pipeline config.
        data: Where documents and the base dictionary are read (shared between runs).
        store: A stage cache, or ``None`` to compute every step.
        progress: Show progress bars.
        evaluate: Also generate the test documents' candidates (``candidates().test``).
    """

    def __init__(self, config: PipelineConfig, data: TrainingData | None = None,
                 store: StepStore | None = None, progress: bool = False,
                 evaluate: bool = False) -> None:
        # a top-level seed seeds the stages that give none of their own
        self.config = with_stage_seeds(config)
        self.data = TrainingData() if data is None else data
        self.store = store
        self.progress = progress
        self.evaluate = evaluate
        self.keys = step_keys(self.config, self.steps())
        self.seconds: dict[str, float] = {}
        self.cached: dict[str, bool] = {}
        self._memo: dict[str, Any] = {}

    def steps(self) -> tuple[Step, ...]:
        """The steps this run can compute (subclasses add evaluation steps)."""
        return STEPS

    def output(self, name: str) -> Any:
        """The output of step ``name``, from memory, the store, or computed (and stored)."""
        if name in self._memo:
            return self._memo[name]
        step = next(s for s in self.steps() if s.name == name)
        if not step.applies(self.config):
            self._memo[name] = None
            return None
        t0, before = time.perf_counter(), sum(self.seconds.values())
        key = self.keys[name]
        folder = None if self.store is None else self.store.folder(name, key)
        if folder is not None:
            value = step.load(self, folder)
        else:
            value = step.make(self)
            if self.store is not None:
                self.store.store(name, key, lambda d: step.save(value, d))
        # Time spent in upstream steps called from make() is theirs, not this step's.
        upstream = sum(self.seconds.values()) - before
        self.seconds[name] = round(time.perf_counter() - t0 - upstream, 3)
        self.cached[name] = folder is not None
        self._memo[name] = value
        return value

    def documents(self) -> tuple[list[Document], list[Document]]:
        """(training documents, test documents); see :func:`load_training_documents`."""
        return self.data.documents(self.config)

    def dictionary(self) -> FineTuned:
        """The dictionary after DFT and the documents left for the filter."""
        value: FineTuned = self.output("dictionary")
        return value

    def tagger(self) -> SpanTagger | None:
        """The fitted mention tagger, ``None`` when the config has none."""
        value: SpanTagger | None = self.output("tagger")
        return value

    def generator(self) -> CandidateGenerator:
        """The fitted candidate generator."""
        value: CandidateGenerator = self.output("generator")
        return value

    def candidates(self) -> StepCandidates:
        """Candidates of the filter's documents (and of the test documents)."""
        value: StepCandidates = self.output("candidates")
        if self.evaluate and value.test is None:
            raise RuntimeError("candidates of the test documents were not generated")
        return value

    def filter(self) -> CandidateFilter:
        """The fitted filter, with the threshold it chose (see :meth:`threshold`)."""
        value: CandidateFilter = self.output("filter")
        return value

    def pipeline(self) -> Pipeline:
        """The trained pipeline (``filter.threshold`` applied when the config fixes it)."""
        dictionary = self.dictionary().dictionary
        filt = self.filter()
        if self.config.filter.threshold is not None:
            filt.threshold = self.config.filter.threshold
        return Pipeline(self.config, dictionary, self.generator(), filt, self.tagger(),
                        self.concepts(), self.lexicon(), self.entity_typer())

    def concepts(self) -> ConceptTable:
        """Preferred names and types of the linkable concepts: the knowledge bases', and those
        only the dictionary after DFT (or an extra dictionary) has."""
        concepts = self.data.concepts(self.config)
        concepts.update(ConceptTable.from_dictionary(self.dictionary().dictionary))
        return concepts

    def lexicon(self) -> AnnotationLexicon | None:
        """The training documents' annotation lexicon; ``None`` without ``linker.lexicon``."""
        if not self.config.linker.lexicon:
            return None
        return AnnotationLexicon.fit(self.documents()[0], self.config.lang)

    def entity_typer(self) -> EntityTyper | None:
        """The training documents' entity typer (saved with the pipeline, so that
        ``linker.entity_types`` can be turned on at link time); ``None`` when they have no
        types."""
        return EntityTyper.fit(self.documents()[0], self.config.lang)


def train(config: PipelineConfig, out: str | Path, progress: bool = False, *,
          overwrite: bool = False, inputs: Iterable[str | Path] = ()) -> dict[str, Any]:
    """Run the recipe (:data:`STEPS`) and save the pipeline, with its test documents.

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
    steps.check_input_files(config)
    ensure_threads()
    t0 = time.perf_counter()
    run = TrainingRun(config, progress=progress)
    seeds = stage_seeds(run.config)
    logger.info("stage seeds: %s (%s)", ", ".join(f"{k}={v}" for k, v in seeds.items()),
                f"the top-level seed {config.seed} where the config gives none"
                if "seed" in config.model_fields_set
                else "no top-level seed: each stage's default where the config gives none")
    pipeline = run.pipeline()
    train_docs, test_docs = run.documents()
    dictionary, dft = run.dictionary().dictionary, run.dictionary().dft
    report: dict[str, Any] = {
        "xlnel_version": __version__,
        "train_documents": len(train_docs), "test_documents": len(test_docs),
        "dictionary": {"names": len(dictionary.names), "entries": len(dictionary),
                       "by_source": dictionary.count_by_source()},
        "seeds": seeds, "dft": asdict(dft), "filter": {"name": pipeline.filter.registered_name,
                                       "threshold": pipeline.filter.threshold},
        # the entity types links will carry, with how many training mentions had each
        "entity_types": dict(pipeline.typer.type_counts) if pipeline.typer else None,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    pipeline.save(target, report=report, test_documents=test_docs)
    return report
