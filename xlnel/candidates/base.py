"""The interface of candidate generators and their registry of versioned names."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from xlnel.config import CandidatesConfig
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ConfigError
from xlnel.types import Candidate, Document


class CandidateGenerator(ABC):
    """Proposes (span, dictionary name) candidates for documents."""

    #: Registered name, such as ``xlnel.tfidf_char.v1``.
    registered_name: ClassVar[str]

    @abstractmethod
    def __init__(self, config: CandidatesConfig, lang: str) -> None:
        """Set up an unfitted generator for texts in ``lang``."""

    @abstractmethod
    def fit(self, dictionary: Dictionary) -> CandidateGenerator:
        """Index the dictionary's names."""

    @abstractmethod
    def generate_batch(self, documents: Sequence[Document]) -> list[list[Candidate]]:
        """Candidates of each document, in the documents' order."""

    def generate(self, document: Document) -> list[Candidate]:
        """Candidates of one document."""
        return self.generate_batch([document])[0]

    @abstractmethod
    def save(self, directory: Path) -> None:
        """Write the fitted generator to ``directory``."""

    @classmethod
    @abstractmethod
    def load(cls, directory: Path, config: CandidatesConfig, lang: str) -> CandidateGenerator:
        """Read a generator written by :meth:`save`."""


_GENERATORS: dict[str, type[CandidateGenerator]] = {}


def register_generator(cls: type[CandidateGenerator]) -> type[CandidateGenerator]:
    """Class decorator registering a generator under its ``registered_name``."""
    _GENERATORS[cls.registered_name] = cls
    return cls


def generator_class(name: str) -> type[CandidateGenerator]:
    """The generator class registered as ``name``.

    Raises:
        ConfigError: If no generator has that name.
    """
    # importing the module registers the built-in generators
    from xlnel.candidates import tfidf_generator  # noqa: F401

    try:
        return _GENERATORS[name]
    except KeyError:
        raise ConfigError(f"unknown candidate generator {name!r}; registered: "
                          f"{', '.join(sorted(_GENERATORS))}") from None
