"""The candidate filter interface and its registry of versioned names."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np

from xlnel.config import FilterConfig
from xlnel.registry import Registry
from xlnel.types import Candidate, Document


class CandidateFilter(ABC):
    """Scores (span, name) candidates: higher means more likely a real mention of the concept.

    Attributes:
        threshold: Candidates scoring at least this are kept; set by :meth:`fit` when the
            config leaves it open.
    """

    registered_name: ClassVar[str]
    #: ``filter.options`` keys a trained filter takes from the config when it is loaded
    #: (``xlnel link --set``); the others keep their trained values.
    inference_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, config: FilterConfig, lang: str) -> None:
        self.config = config
        self.lang = lang
        self.threshold: float = 0.5 if config.threshold is None else config.threshold

    @abstractmethod
    def fit(self, documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
            progress: bool = False) -> CandidateFilter:
        """Learn from annotated documents and their candidates."""

    @abstractmethod
    def score_batch(self, documents: Sequence[Document],
                    candidates: Sequence[Sequence[Candidate]],
                    progress: bool = False) -> list[np.ndarray]:
        """One score per candidate, per document."""

    @abstractmethod
    def save(self, directory: Path) -> None:
        """Write the fitted filter (and its threshold) to ``directory``."""

    @classmethod
    @abstractmethod
    def load(cls, directory: Path, config: FilterConfig, lang: str) -> CandidateFilter:
        """Read a filter written by :meth:`save`."""


FILTERS: Registry[type[CandidateFilter]] = Registry(
    "filter", ["xlnel.filtering.similarity", "xlnel.filtering.gbdt",
               "xlnel.filtering.cross_encoder"])  # the cross-encoder imports torch only on use
#: Class decorator registering a filter under its ``registered_name``.
register_filter = FILTERS.register
#: The filter class registered under a name (ConfigError when unknown).
filter_class = FILTERS.get
