"""Training: the recipe that turns a config into a pipeline (:mod:`xlnel.training.recipe`),
the functions of its steps (:mod:`xlnel.training.steps`) and what their cache keys are made of
(:mod:`xlnel.training.keys`)."""

from __future__ import annotations

from xlnel.training.keys import config_parts, content_hash, file_fingerprint
from xlnel.training.recipe import (
    STEPS,
    FineTuned,
    Step,
    StepCandidates,
    StepStore,
    TrainingData,
    TrainingRun,
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
