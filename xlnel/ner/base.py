"""The mention tagger interface and its registry of versioned names.

A tagger proposes mention spans; when the pipeline config names one (``ner.name``), its spans
replace the candidate generator's enumeration of every word span.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from xlnel.config import NerConfig
from xlnel.registry import Registry
from xlnel.types import Document, Span


class SpanTagger(ABC):
    """Finds mention spans in documents (without linking them)."""

    registered_name: ClassVar[str]
    #: ``ner.options`` keys a loaded tagger takes from the config (``xlnel link --set``); the
    #: others stay as trained.
    inference_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, config: NerConfig, lang: str) -> None:
        self.config = config
        self.lang = lang

    @abstractmethod
    def fit(self, documents: Sequence[Document], progress: bool = False) -> SpanTagger:
        """Learn from documents with gold ``entities``."""

    @abstractmethod
    def predict_batch(self, documents: Sequence[Document],
                      progress: bool = False) -> list[list[Span]]:
        """Mention spans of each document, sorted by start, in the documents' order."""

    def predict(self, document: Document) -> list[Span]:
        """Mention spans of one document."""
        return self.predict_batch([document])[0]

    @abstractmethod
    def save(self, directory: Path) -> None:
        """Write the fitted tagger to ``directory``."""

    @classmethod
    @abstractmethod
    def load(cls, directory: Path, config: NerConfig, lang: str) -> SpanTagger:
        """Read a tagger written by :meth:`save`."""


TAGGERS: Registry[type[SpanTagger]] = Registry("tagger", ["xlnel.ner.crf"])
#: Class decorator registering a tagger under its ``registered_name``.
register_tagger = TAGGERS.register
#: The tagger class registered under a name (ConfigError when unknown).
tagger_class = TAGGERS.get
