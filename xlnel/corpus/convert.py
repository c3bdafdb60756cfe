"""Corpus conversion between the document formats, streamed (``xlnel convert``)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from xlnel.io.documents import check_source, iter_documents, write_documents
from xlnel.outputs import check_disjoint, output_format
from xlnel.types import FOUND_FIELDS, Document, Link

logger = logging.getLogger(__name__)

__all__ = ["convert"]

#: Output formats that hold only offsets, types and concept ids of a mention.
_PLAIN_FORMATS = ("pubtator", "brat")


def _counted(docs: Iterable[Document], counts: Counter[str]) -> Iterator[Document]:
    """``docs`` as they come, adding to ``counts`` the documents, their mentions, and the
    mentions with fields of a prediction (``dropped`` where the format cannot hold them)."""
    for doc in docs:
        counts["documents"] += 1
        counts["entities"] += len(doc.entities)
        counts["dropped"] += sum(map(_has_prediction_fields, doc.entities))
        yield doc


def _has_prediction_fields(link: Link) -> bool:
    return (link.score is not None or bool(link.alternatives)
            or any(getattr(link, key) is not None for key in FOUND_FIELDS))


def convert(source: str | Path, out: str | Path | IO[str], format: str | None = None,
            out_format: str | None = None) -> dict[str, int]:
    """Stream the corpus ``source`` into ``out``, in the format the output's name asks for
    (or ``out_format``).

    Documents are read and written one at a time (a BRAT folder is read whole), and ``out``
    appears only once complete. PubTator and BRAT outputs hold a mention's offsets, type and
    concept ids only: when the input's mentions carry scores or the other fields of a
    prediction, a warning says how many lose them (write JSONL or BioC to keep them).

    Args:
        source: Corpus file (JSONL, PubTator, BioC XML or JSON, plain text; optionally
            ``.gz``), BRAT folder, or ``-`` for the standard input (JSONL unless ``format``
            says otherwise).
        out: Output file (``.jsonl``, ``.json``, ``.pubtator``, ``.txt`` for PubTator, ``.xml``
            or ``.bioc`` for BioC XML, ``.bioc.json`` for BioC JSON; optionally ``.gz``), an
            existing folder for BRAT files, or an open text stream (``sys.stdout``; JSONL unless
            ``out_format`` says otherwise), written a document at a time.
        format: The input's format (one of :data:`xlnel.io.FORMATS`); ``None`` tells it from
            the name.
        out_format: The output's format (``jsonl``, ``pubtator``, ``bioc``, ``biocjson`` or
            ``brat``); ``None`` tells it from the name.

    Returns:
        ``{"documents": N, "entities": M}`` written.

    Raises:
        FileNotFoundError: When ``source`` does not exist.
        OutputError: When ``out`` is ``source``, lies inside it, or names no format (and no
            ``out_format`` is given).
        ValueError: When ``out_format`` is not a format that can be written (to a stream:
            BRAT cannot).
        FormatError: When ``source`` does not follow its format (``out`` is left as it was).
    """
    if format is None:
        check_source(source)
    out_format = output_format(out, out_format)
    if isinstance(out, str | Path):
        check_disjoint(out, [source], out_is_folder=out_format == "brat")
    counts: Counter[str] = Counter()
    write_documents(out, _counted(iter_documents(source, format), counts), out_format)
    if counts["dropped"] and out_format in _PLAIN_FORMATS:
        logger.warning("%d of the %d mentions of %s carry scores or names of a prediction, "
                       "which %s cannot hold; write .jsonl or BioC (.xml, .bioc.json) to keep them",
                       counts["dropped"], counts["entities"], source, out_format)
    logger.info("converted %d documents from %s into %s", counts["documents"], source, out)
    return {"documents": counts["documents"], "entities": counts["entities"]}
