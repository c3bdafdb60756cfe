"""The linker interface: documents in, documents with linked mentions out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from xlnel.types import Document


class Linker(ABC):
    """Finds mentions in documents and links them to concepts."""

    @abstractmethod
    def link_batch(self, documents: Sequence[Document]) -> list[Document]:
        """The documents with their predicted mentions as ``entities`` (gold ones replaced)."""

    def link(self, document: Document) -> Document:
        """Link one document."""
        return self.link_batch([document])[0]
