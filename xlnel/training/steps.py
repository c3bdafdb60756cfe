"""The functions of the training recipe's steps (:data:`xlnel.training.STEPS`), and the one
reading of ``data.*`` (:func:`load_training_documents`)."""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from pathlib import Path

from xlnel.candidates.base import CandidateGenerator, generator_class
from xlnel.config import DataConfig, PipelineConfig, load_config
from xlnel.dictionary.concepts import ConceptTable
from xlnel.dictionary.dft import crossfit_dictionaries, fine_tune_dictionary, split_documents
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ConfigError
from xlnel.evaluation.folds import fold_split
from xlnel.filtering.base import CandidateFilter, filter_class
from xlnel.io import load_kb
from xlnel.io.documents import read_annotated_documents
from xlnel.io.kb_history import kb_ids_history, resolve_documents
from xlnel.linkers.decide import choose_linker_threshold
from xlnel.ner.base import SpanTagger, tagger_class
from xlnel.runtime import candidates_of
from xlnel.types import Candidate, Document

logger = logging.getLogger(__name__)

__all__ = ["build_dictionary", "build_dictionary_and_concepts", "check_input_files",
           "crossfit_candidates", "fine_tune_dictionary", "fit_filter", "fit_generator",
           "fit_tagger", "held_out_documents", "load_pretrained_tagger",
           "load_training_documents"]


# --------------------------------------------------------------------------- the documents
def load_training_documents(config: PipelineConfig) -> tuple[list[Document], list[Document]]:
    """The training documents and the test documents of a config.

    - With ``data.folds``: fold ``data.fold`` of ``data.train`` is the test set and the other
      folds train (``data.test`` and ``data.test_fraction`` are not used).
    - Else with ``data.test_fraction`` > 0: that share of ``data.train``, by document.
    - Else with ``data.test``: the documents of that file.
    - Else no test documents.

    ``data.max_documents`` then cuts the training documents only (the first N, or N drawn with
    ``data.subset_seed``: :func:`keep_documents`), and the documents of the
    ``data.extra_train`` files join them (never the test documents). Concept ids that a
    knowledge base of ``dictionary.kb`` has retired (:func:`xlnel.io.kb_history.kb_id_history`:
    HPO's ``alt_id`` and ``replaced_by``, UMLS merges in ``MRCUI.RRF``) are replaced by the
    current ones in both, so the pipeline learns and outputs ids its knowledge base has.

    Raises:
        ConfigError: When ``data.train`` holds no documents, the split leaves none to train
            on or none to test on, both ``data.test`` and ``data.test_fraction`` are given
            without folds, a ``data.test`` document id is also a ``data.train`` one, or an
            ``data.extra_train`` file is empty or repeats a document id.
    """
    data = config.data
    if data.folds is None and data.test is not None and data.test_fraction > 0:
        raise ConfigError(f"data.test ({data.test}) and data.test_fraction "
                          f"({data.test_fraction}) both name the test documents; give one")
    docs: list[Document] = []
    if data.train is not None:
        docs = read_annotated_documents(data.train, "data.train")
        if not docs:
            raise ConfigError(f"data.train: no documents in {data.train}; give an annotated "
                              "corpus file (JSONL, PubTator) or BRAT folder")
    test: list[Document] = []
    if data.folds is not None:
        docs, test = fold_split(docs, data.folds, data.fold, data.split_seed)
    elif data.test_fraction > 0:
        test, docs = split_documents(docs, data.test_fraction, data.split_seed)
        if not test:
            raise ConfigError(f"data.test_fraction={data.test_fraction} of the {len(docs)} "
                              f"documents in {data.train} holds out no test document; raise "
                              "it or set it to 0 for no test documents")
        if not docs:
            raise ConfigError(f"data.test_fraction={data.test_fraction} leaves no "
                              f"training documents of the {len(test)} in {data.train}")
    elif data.test is not None:
        test = held_out_documents(data.test, docs, data.train)
    # before mapping ids: documents cut are never read
    docs = keep_documents(docs, data.max_documents, data.subset_seed)
    docs += extra_training_documents(data.extra_train, {d.id for d in docs + test})
    history = kb_ids_history(config.dictionary.kb)
    if history:
        docs, changed = resolve_documents(docs, history)
        test, changed_test = resolve_documents(test, history)
        if changed or changed_test:
            logger.info("%d retired concept ids of the training and %d of the test documents "
                        "replaced by current ones", changed, changed_test)
    return docs, test


def held_out_documents(path: str, train: Sequence[Document], train_path: str | None
                       ) -> list[Document]:
    """The documents of ``data.test``, none of them a training document.

    Raises:
        ConfigError: When a document id of ``path`` is also one of ``train``: the pipeline
            would be scored on documents it learnt from.
    """
    test = read_annotated_documents(path, "data.test")
    taken = {d.id for d in train}
    shared = [d.id for d in test if d.id in taken]
    if shared:
        raise ConfigError(f"data.test: {len(shared)} document id(s) of {path} are also "
                          f"documents of data.train ({train_path}), such as {shared[0]!r}; "
                          "test and training ids must be distinct (a document would be "
                          "scored after training on it)")
    return test


def keep_documents(docs: Sequence[Document], n: int | None, seed: int | None
                   ) -> list[Document]:
    """``n`` of ``docs`` in their order: the first ``n``, or with ``seed`` the first ``n`` of
    a seeded shuffle, so that one seed's smaller draws lie inside its larger ones."""
    if n is None or n >= len(docs):
        return list(docs)
    if seed is None:
        return list(docs[:n])
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    return [docs[i] for i in sorted(order[:n])]


def extra_training_documents(paths: Sequence[str], taken: set[str]) -> list[Document]:
    """The documents of ``data.extra_train``, in order.

    Raises:
        ConfigError: When a file holds no documents, or a document id is already taken (by the
            corpus or an earlier file): DFT, folds and reports tell documents apart by id.
    """
    out: list[Document] = []
    for i, path in enumerate(paths):
        docs = read_annotated_documents(path, f"data.extra_train[{i}]")
        if not docs:
            raise ConfigError(f"data.extra_train[{i}]: no documents in {path}")
        for d in docs:
            if d.id in taken:
                raise ConfigError(f"data.extra_train[{i}]: document id {d.id!r} of {path} is "
                                  "already a document of data.train, data.test or an earlier "
                                  "extra file; ids must be distinct")
            taken.add(d.id)
        out += docs
    return out


def check_input_files(config: PipelineConfig) -> None:
    """Check that the files a config names for training exist, before any work.

    Raises:
        ConfigError: Naming the config key, the path and the folder it is relative to.
    """
    named = [("data.train", config.data.train), ("data.test", config.data.test)]
    named += [(f"data.extra_train[{i}]", p) for i, p in enumerate(config.data.extra_train)]
    named += [(f"dictionary.extra[{i}]", p) for i, p in enumerate(config.dictionary.extra)]
    for key, value in named:
        if value is not None and not Path(value).exists():
            raise ConfigError(f"{key}: no such file {value!r} (relative paths are read from "
                              f"the working folder {Path.cwd()})")


# --------------------------------------------------------------------------- step functions
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
    name, pretrained = config.ner.name, config.ner.pretrained
    if name is None or pretrained is None:
        raise ConfigError("ner.pretrained needs ner.name")
    source = Path(pretrained)
    folder = source / "ner" if (source / "ner").is_dir() else source
    saved_config = folder.parent / "config.yaml"
    if saved_config.is_file():
        saved = load_config(saved_config)
        if _resolved_data(saved.data) != _resolved_data(config.data):
            raise ConfigError(f"ner.pretrained: the tagger in {folder} was trained with data "
                              f"{saved.data.model_dump()}, not {config.data.model_dump()}; it "
                              "may have seen this config's test documents")
        if saved.ner.name != name:
            raise ConfigError(f"ner.pretrained: {folder} holds a {saved.ner.name} tagger, "
                              f"not {name}")
    else:
        logger.warning("ner.pretrained: %s has no config.yaml beside it; the data the tagger "
                       "was trained on cannot be checked", folder)
    logger.info("reusing the tagger in %s", folder)
    return tagger_class(name).load(folder, config.ner, config.lang)


def _resolved_data(data: DataConfig) -> DataConfig:
    """``data`` with its file paths resolved, so that two spellings of one file (``./a.jsonl``
    and ``a.jsonl``, a trailing slash, a relative and an absolute path) compare equal."""
    def resolved(path: str | None) -> str | None:
        return None if path is None else str(Path(path).resolve())

    return data.model_copy(update={"train": resolved(data.train), "test": resolved(data.test),
                                   "extra_train": [resolved(p) for p in data.extra_train]})


def fit_generator(config: PipelineConfig, dictionary: Dictionary) -> CandidateGenerator:
    """The config's candidate generator with ``dictionary`` indexed."""
    generator = generator_class(config.candidates.generator)(config.candidates, config.lang)
    generator.fit(dictionary)
    return generator


def crossfit_candidates(config: PipelineConfig, base: Dictionary,
                        documents: Sequence[Document], filter_documents: Sequence[Document],
                        tagger: SpanTagger | None, progress: bool = False
                        ) -> list[list[Candidate]]:
    """Candidates of ``filter_documents`` under cross-fitted DFT (``dft.crossfit`` folds).

    Each fold's documents get their candidates from a generator fitted on ``base`` (the
    dictionary before DFT) plus the gold names of the training ``documents`` outside the fold
    (:func:`xlnel.dictionary.dft.crossfit_dictionaries`).

    Returns:
        The candidates of every filter document, in the order of ``filter_documents``.
    """
    dft = config.dft
    out: list[list[Candidate]] = [[] for _ in filter_documents]
    folds = crossfit_dictionaries(base, documents, filter_documents, dft.crossfit, dft.seed,
                                  dft.unlinked, dft.prune)
    for k, (fold, dictionary) in enumerate(folds):
        generator = fit_generator(config, dictionary)
        fold_docs = [filter_documents[i] for i in fold]
        desc = f"candidates (filter training, fold {k + 1}/{dft.crossfit})"
        for i, cands in zip(fold, candidates_of(generator, tagger, fold_docs, progress, desc),
                            strict=True):
            out[i] = cands
    return out


def fit_filter(config: PipelineConfig, documents: Sequence[Document],
               candidates: Sequence[Sequence[Candidate]], progress: bool = False,
               lexicon_documents: Sequence[Document] | None = None) -> CandidateFilter:
    """The config's filter fitted on ``documents``, its threshold chosen (left open).

    With ``filter.select_by: linker`` the threshold is then chosen again on the filter's
    out-of-fold scores with the linker's decisions
    (:func:`~xlnel.linkers.decide.choose_linker_threshold`), its annotation lexicon learning
    from ``lexicon_documents`` (all training documents; default ``documents``).

    Raises:
        ConfigError: If ``select_by`` is ``linker`` and the filter keeps no out-of-fold scores,
            or the filter cannot train on no documents (``dft.R`` 1 gives them all to the
            dictionary).
    """
    open_config = config.filter.model_copy(update={"threshold": None})
    filt = filter_class(config.filter.name)(open_config, config.lang)
    by_linker = config.filter.select_by == "linker"
    if by_linker and not hasattr(filt, "oof_folds"):  # refused before the fit, not after
        raise ConfigError(f"filter.select_by: linker needs a filter that keeps out-of-fold "
                          f"scores of its training documents (xlnel.gbdt.v1); "
                          f"{config.filter.name} does not")
    try:
        filt.fit(documents, candidates, progress=progress)
    except ValueError as e:
        if documents:
            raise
        raise ConfigError(f"dft.R={config.dft.R} leaves the filter {config.filter.name} no "
                          "training documents (the dictionary takes them all); lower dft.R "
                          f"(with dft.crossfit, R 0 gives every document to both) ({e})"
                          ) from e
    if by_linker:
        scores, folds = filt.oof_scores, filt.oof_folds  # type: ignore[attr-defined]
        filt.threshold, f1 = choose_linker_threshold(
            documents, candidates, scores, folds, config.linker, config.lang,
            config.filter.select_level, lexicon_documents)
        logger.info("filter threshold %.3f chosen on the linker's decisions (out-of-fold %s "
                    "F1 %.4f)", filt.threshold, config.filter.select_level, f1)
    return filt
