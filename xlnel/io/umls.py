"""UMLS Metathesaurus files: names from ``MRCONSO.RRF``, semantic types from ``MRSTY.RRF``."""

from __future__ import annotations

import logging
from collections.abc import Collection
from pathlib import Path

from xlnel.errors import FormatError
from xlnel.io._atomic import iter_lines
from xlnel.io._collector import ConceptCollector
from xlnel.types import Concept

logger = logging.getLogger(__name__)

__all__ = ["read_mrconso", "read_mrcui", "read_mrsty", "sibling_mrcui", "sibling_mrsty"]

_SUPPRESSED = frozenset({"O", "E", "Y"})
_MRCONSO_FIELDS = 18
_MRSTY_FIELDS = 6
_MRCUI_FIELDS = 7


def _rrf_fields(line: str, expected: int, what: str, path: Path, lineno: int) -> list[str]:
    """The ``|``-separated fields of an RRF line (which ends with ``|``), checked in number."""
    fields = line.split("|")
    if len(fields) == expected + 1 and fields[-1] == "":
        fields.pop()  # the line ends with "|"
    if len(fields) != expected or not fields[0]:
        raise FormatError(
            f"{what} line has {len(fields)} '|'-separated fields (expected {expected}, CUI "
            f"first): {line[:120]!r}",
            path,
            lineno,
        )
    return fields


def read_mrsty(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Read the semantic types of UMLS concepts from ``MRSTY.RRF``.

    Fields: ``CUI|TUI|STN|STY|ATUI|CVF|``.

    Args:
        path: MRSTY file, optionally ``.gz``.

    Returns:
        Per CUI its types, each as its code and its name (``T047``, ``Disease or Syndrome``),
        in file order.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: For a line that does not have 6 ``|``-separated fields or has no CUI.
    """
    path = Path(path)
    types: dict[str, dict[str, None]] = {}
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = _rrf_fields(line, _MRSTY_FIELDS, "MRSTY", path, lineno)
        tui, sty = fields[1], fields[3]  # code and name
        types.setdefault(fields[0], {}).update(dict.fromkeys(t for t in (tui, sty) if t))
    logger.info("read the semantic types of %d concepts from %s", len(types), path)
    return {cui: tuple(found) for cui, found in types.items()}


def sibling_mrsty(mrconso: str | Path) -> Path | None:
    """The ``MRSTY.RRF`` (or ``MRSTY.RRF.gz``) in the folder of an MRCONSO file, if any."""
    return _sibling(mrconso, "MRSTY.RRF")


def sibling_mrcui(mrconso: str | Path) -> Path | None:
    """The ``MRCUI.RRF`` (or ``MRCUI.RRF.gz``) in the folder of an MRCONSO file, if any."""
    return _sibling(mrconso, "MRCUI.RRF")


def _sibling(mrconso: str | Path, name: str) -> Path | None:
    folder = Path(mrconso).parent
    return next((p for p in (folder / name, folder / f"{name}.gz") if p.is_file()), None)


def read_mrcui(path: str | Path) -> dict[str, str]:
    """Retired CUI -> the CUI it was merged into, from the UMLS concept history ``MRCUI.RRF``.

    Fields: ``CUI1|VER|REL|RELA|MAPREASON|CUI2|MAPIN|``. Only ``REL = SY`` rows (CUI1 merged
    into CUI2, a current concept) are kept; deletions (``DEL``) and the broader, narrower or
    other mappings (``RB``, ``RN``, ``RO``) name no concept with the same meaning. A CUI merged
    into two concepts is left out.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: For a line that does not have 7 ``|``-separated fields or has no CUI1.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"MRCUI file not found: {path}")
    merged: dict[str, set[str]] = {}
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = _rrf_fields(line, _MRCUI_FIELDS, "MRCUI", path, lineno)
        if fields[2] == "SY" and fields[5]:
            merged.setdefault(fields[0], set()).add(fields[5])
    history = {old: next(iter(new)) for old, new in merged.items() if len(new) == 1}
    logger.info("read %d merged CUIs from %s (%d merged into several left out)", len(history),
                path, len(merged) - len(history))
    return history


def _mrconso_rank(fields: list[str]) -> int:
    # UMLS marks the preferred name of a concept as TS=P, STT=PF, ISPREF=Y.
    if fields[2] == "P" and fields[6] == "Y":
        return 0 if fields[4] == "PF" else 1
    return 2


def read_mrconso(
    path: str | Path,
    languages: Collection[str] | None = ("ENG",),
    sources: Collection[str] | None = None,
    suppress: bool = True,
    mrsty: str | Path | None = None,
) -> list[Concept]:
    """Read concept names from a UMLS ``MRCONSO.RRF`` file, streaming it line by line.

    Fields: ``CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|``.
    Names with ``TS=P`` and ``ISPREF=Y`` come first.

    Args:
        path: MRCONSO file, optionally ``.gz``.
        languages: Languages (``LAT``) to keep, such as ``("ENG", "HEB")``; ``None`` keeps all.
        sources: Source vocabularies (``SAB``) to keep; ``None`` keeps all.
        suppress: Skip suppressed names (``SUPPRESS`` of ``O``, ``E`` or ``Y``).
        mrsty: ``MRSTY.RRF`` whose semantic types (codes and names, :func:`read_mrsty`)
            become the concepts' types; ``None`` gives no types.

    Returns:
        One concept per CUI with at least one kept name, in order of first appearance.

    Raises:
        FileNotFoundError: When ``path`` (or ``mrsty``) does not exist.
        FormatError: For a line that does not have 18 ``|``-separated fields or has no CUI.
    """
    path = Path(path)
    semantic_types = {} if mrsty is None else read_mrsty(mrsty)
    keep_lat = None if languages is None else frozenset(languages)
    keep_sab = None if sources is None else frozenset(sources)
    collector = ConceptCollector()
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = _rrf_fields(line, _MRCONSO_FIELDS, "MRCONSO", path, lineno)
        if keep_lat is not None and fields[1] not in keep_lat:
            continue
        if keep_sab is not None and fields[11] not in keep_sab:
            continue
        if suppress and fields[16] in _SUPPRESSED:
            continue
        collector.add(fields[0], [fields[14]], _mrconso_rank(fields),
                      types=semantic_types.get(fields[0], ()))
    logger.info("read %d concepts from %s", len(collector), path)
    return collector.concepts()
