"""The pipeline API in one place: load, link, train.

xlnel is layered one way, each layer importing only those below it:

1. the stages, one package each: :mod:`xlnel.dictionary`, :mod:`xlnel.candidates`,
   :mod:`xlnel.ner`, :mod:`xlnel.filtering`, :mod:`xlnel.linkers` (with :mod:`xlnel.io`,
   :mod:`xlnel.evaluation` and :mod:`xlnel.config` beside them);
2. :mod:`xlnel.runtime`: the trained :class:`Pipeline` (load, save, link, pipe), no training
   code;
3. :mod:`xlnel.training`: the recipe that fits the stages into a pipeline (``xlnel train``;
   ``xlnel experiment`` runs the same steps through a stage cache);
4. :mod:`xlnel.corpus`: linking files, streams and shards, on several processes or Ray;
5. this module, :mod:`xlnel.experiments`, the CLI, the service and the spaCy component.

This module only re-exports; ``tests/test_layers.py`` checks that no import cycle appears.
"""

from __future__ import annotations

from xlnel.corpus.linking import candidate_recall, link, link_documents, link_shards
from xlnel.runtime import (
    LINK_TIME_SECTIONS,
    Pipeline,
    PipelineSource,
    SavedPipeline,
    check_link_overrides,
    generate_candidates,
    open_pipeline,
)
from xlnel.training import (
    build_dictionary,
    build_dictionary_and_concepts,
    check_input_files,
    fit_generator,
    fit_tagger,
    load_pretrained_tagger,
    load_training_documents,
    train,
)

__all__ = ["LINK_TIME_SECTIONS", "Pipeline", "PipelineSource", "SavedPipeline",
           "build_dictionary", "build_dictionary_and_concepts", "candidate_recall",
           "check_input_files", "check_link_overrides", "fit_generator", "fit_tagger",
           "generate_candidates", "link", "link_documents", "link_shards",
           "load_pretrained_tagger", "load_training_documents", "open_pipeline", "train"]
