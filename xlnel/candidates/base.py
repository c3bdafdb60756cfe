"""The interface of candidate generators and their registry of versioned names."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from xlnel.config import CandidatesConfig
from xlnel.dictionary.dictionary import Dictionary
from xlnel.registry import Registry
from xlnel.types import Candidate, Document, Span


class CandidateGenerator(ABC):
    """Proposes (span, dictionary name) candidates for documents."""

    #: Registered name, such as ``xlnel.tfidf_char.v1``.
    registered_name: ClassVar[str]
    #: ``candidates`` keys a fitted generator keeps from training (what its index was built
    #: with); the others, its search settings, may change when a pipeline is loaded
    #: (``xlnel link --set``).
    trained_keys: ClassVar[frozenset[str]] = frozenset({"options"})
    #: ``candidates.options`` keys a loaded generator takes from the config although its
    #: options are trained (the device, search settings of an index).
    inference_options: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def __init__(self, config: CandidatesConfig, lang: str) -> None:
        """Set up an unfitted generator for texts in ``lang``."""

    @abstractmethod
    def fit(self, dictionary: Dictionary) -> CandidateGenerator:
        """Index the dictionary's names."""

    def generate_batch(self, documents: Sequence[Document],
                       spans: Sequence[Sequence[Span]] | None = None) -> list[list[Candidate]]:
        """Candidates of each document, in the documents' order.

        Args:
            documents: The documents.
            spans: Mention spans per document (from a tagger) to match instead of the
                generator's own enumeration of all word spans; ``None`` = enumerate.

        Raises:
            ValueError: If ``spans`` is given for another number of documents (the lists
                would be paired with the wrong documents, or some documents left out).
        """
        if spans is not None and len(spans) != len(documents):
            raise ValueError(f"spans given for {len(spans)} documents, but there are "
                             f"{len(documents)} documents; give one list of spans per "
                             "document (empty for a document without mentions)")
        return self._generate_batch(documents, spans)

    @abstractmethod
    def _generate_batch(self, documents: Sequence[Document],
                        spans: Sequence[Sequence[Span]] | None) -> list[list[Candidate]]:
        """What :meth:`generate_batch` returns, for ``spans`` already checked to pair with
        ``documents``."""

    def generate(self, document: Document, spans: Sequence[Span] | None = None
                 ) -> list[Candidate]:
        """Candidates of one document (of ``spans`` when given)."""
        return self.generate_batch([document], None if spans is None else [spans])[0]

    @abstractmethod
    def save(self, directory: Path) -> None:
        """Write the fitted generator to ``directory``."""

    @classmethod
    @abstractmethod
    def load(cls, directory: Path, config: CandidatesConfig, lang: str) -> CandidateGenerator:
        """Read a generator written by :meth:`save`."""


GENERATORS: Registry[type[CandidateGenerator]] = Registry(
    "candidate generator", ["xlnel.candidates.tfidf_generator", "xlnel.linkers.dense"])
#: Class decorator registering a generator under its ``registered_name``.
register_generator = GENERATORS.register
#: The generator class registered under a name (ConfigError when unknown).
generator_class = GENERATORS.get
