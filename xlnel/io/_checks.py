"""Checks every corpus writer makes before writing a document, so that a file is never
written with what no reader would read back: text that is not Unicode, a score that is not a
finite number, or an entity that does not quote the text at its offsets."""

from __future__ import annotations

import dataclasses
import json
import math

from xlnel.io._json import lone_surrogate
from xlnel.types import Document

__all__ = ["check_entities", "check_scores", "check_unicode"]


def check_unicode(doc: Document) -> None:
    """Refuse a document holding a lone surrogate (in its id, text, entities or metadata),
    which no UTF-8 file can encode, before anything of it is written.

    Raises:
        ValueError: Naming the document, the field and the character's offset in it.
    """
    if _encodable(doc):
        return  # the common case, without building the places that only an error names
    found = lone_surrogate(doc.id, "its id") or lone_surrogate(doc.text, "its text")
    for i, link in enumerate(doc.entities):
        found = found or lone_surrogate(dataclasses.asdict(link),
                                        f"entity {i} ({link.start}-{link.end})")
    found = found or lone_surrogate(dict(doc.metadata), "its metadata")
    if found is not None:
        raise ValueError(f"document {doc.id!r}: {found}: not Unicode text, which no UTF-8 file "
                         "can hold; fix the text where it was made")


def _encodable(doc: Document) -> bool:
    """Whether every string of ``doc`` is UTF-8 encodable, tested in one pass of the C JSON
    encoder (several times faster than walking the values in Python on every write)."""
    value = [doc.id, doc.text, doc.metadata, [vars(link) for link in doc.entities]]
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_scores(doc: Document) -> None:
    """Refuse a link whose score (or an alternative's score or similarity) is not finite: no
    format can write NaN or an infinity faithfully (JSON has neither), and the linkers never
    make one.

    Raises:
        ValueError: Naming the document, the mention and the value.
    """
    for link in doc.entities:
        numbers = [("score", link.score)] + [
            (f"alternative {c!r} {what}", value) for c, score, sim in link.alternatives
            for what, value in (("score", score), ("similarity", sim))]
        for what, value in numbers:
            if value is not None and not math.isfinite(value):
                raise ValueError(f"document {doc.id!r}: mention {link.text!r} at "
                                 f"{link.start}-{link.end}: {what} {value} is not a finite "
                                 "number; a link's scores must be finite")


def check_entities(doc: Document) -> None:
    """Check that ``doc`` is Unicode text (:func:`check_unicode`), that its scores are finite
    (:func:`check_scores`) and that every entity lies in its text and quotes it, before writing
    it.

    Args:
        doc: Document about to be written.

    Raises:
        ValueError: Naming the document and the first lone surrogate, non-finite score or
            inconsistent entity.
    """
    check_unicode(doc)
    check_scores(doc)
    for link in doc.entities:
        if not 0 <= link.start < link.end <= len(doc.text):
            raise ValueError(
                f"document {doc.id!r}: entity offsets {link.start}-{link.end} are not a non-empty "
                f"range inside the text of length {len(doc.text)}"
            )
        if doc.text[link.start : link.end] != link.text:
            raise ValueError(
                f"document {doc.id!r}: entity text {link.text!r} differs from the text at "
                f"{link.start}-{link.end}: {doc.text[link.start : link.end]!r}"
            )
