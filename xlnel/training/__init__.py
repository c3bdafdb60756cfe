"""Training: the recipe that turns a config into a pipeline (:mod:`xlnel.training.recipe`)
and the functions of its steps (:mod:`xlnel.training.steps`)."""

from __future__ import annotations

from xlnel.training.recipe import (
    STEPS,
    FineTuned,
    Step,
    StepCandidates,
    StepStore,
    TrainingData,
    TrainingRun,
    config_parts,
    content_hash,
    file_fingerprint,
    step_keys,
    train,
)
from xlnel.training.steps import (
    build_dictionary,
    build_dictionary_and_concepts,
    check_input_files,
    fit_filter,
    fit_generator,
    fit_tagger,
    load_pretrained_tagger,
    load_training_documents,
)

__all__ = ["STEPS", "FineTuned", "Step", "StepCandidates", "StepStore", "TrainingData",
           "TrainingRun", "build_dictionary", "build_dictionary_and_concepts", "check_input_files",
           "config_parts", "content_hash", "file_fingerprint", "fit_filter", "fit_generator",
           "fit_tagger", "load_pretrained_tagger", "load_training_documents", "step_keys", "train"]
