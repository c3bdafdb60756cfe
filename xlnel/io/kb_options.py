"""Options written after a knowledge-base spec: ``SPEC?types=...&lang=...&sab=...``.

A knowledge base is named by one string wherever xlnel takes one (``dictionary.kb`` in a config,
``--kb`` on the command line), so the choices users make when they load UMLS or HPO travel with
it, as scispacy's and QuickUMLS's semantic-type filters do:

- ``types``: keep only the concepts with one of these types (HPO sub-ontologies such as
  ``Phenotypic abnormality``; UMLS semantic types by code, ``T047``, or name, from the
  ``MRSTY.RRF`` beside ``MRCONSO.RRF``; the ``type`` column of a TSV table), compared without
  regard to case;
- ``groups``: keep only the concepts of these UMLS semantic groups (``DISO`` disorders, ``CHEM``
  chemicals and drugs, ...; :func:`semantic_groups`), that is, with one of their semantic types
  by code or name; a concept given by ``types`` or by ``groups`` is kept;
- ``lang`` and ``sab`` (``mrconso`` only): the languages (``LAT``) and source vocabularies
  (``SAB``) whose names are read; ``lang=all`` reads every language.

Values are separated by commas or given by repeating the key (``types=T047&types=T191``); a type
whose name holds a comma is given by its code.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xlnel.errors import FormatError
from xlnel.io._atomic import iter_lines
from xlnel.types import Concept

logger = logging.getLogger(__name__)

__all__ = ["KbOptions", "SemanticGroup", "group_types", "select_concepts", "semantic_groups",
           "split_options"]

_KEYS = ("types", "groups", "lang", "sab")
#: The UMLS semantic groups shipped with xlnel (group, group name, TUI, type name per line).
GROUPS_FILE = Path(__file__).resolve().parents[1] / "resources" / "umls_semantic_groups.tsv"


@dataclass(frozen=True)
class SemanticGroup:
    """A UMLS semantic group: its code (``DISO``), name and semantic types.

    Attributes:
        code: Group code.
        name: Group name (``Disorders``).
        types: ``(TUI, type name)`` pairs of its semantic types.
    """

    code: str
    name: str
    types: tuple[tuple[str, str], ...]


@functools.cache
def semantic_groups(path: Path = GROUPS_FILE) -> dict[str, SemanticGroup]:
    """The UMLS semantic groups by code, read from ``path`` (tab-separated ``group, group name,
    TUI, type name``; ``#`` comments).

    Raises:
        FormatError: For a line without four fields, a TUI listed twice, or a group given two
            names.
    """
    members: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    seen: dict[str, int] = {}
    for lineno, line in iter_lines(path):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 4 or not all(f.strip() for f in fields):
            raise FormatError("expected 4 tab-separated fields (group, group name, TUI, type "
                              f"name), got {line!r}", path, lineno)
        code, name, tui, type_name = (f.strip() for f in fields)
        if tui in seen:
            raise FormatError(f"{tui} is already in a group (line {seen[tui]})", path, lineno)
        seen[tui] = lineno
        group_name, types = members.setdefault(code, (name, []))
        if group_name != name:
            raise FormatError(f"group {code} is named {name!r} here and {group_name!r} before",
                              path, lineno)
        types.append((tui, type_name))
    return {code: SemanticGroup(code, name, tuple(types))
            for code, (name, types) in members.items()}


def group_types(groups: Sequence[str], spec: str) -> dict[str, tuple[str, ...]]:
    """Per requested group (code as given), the codes and names of its semantic types.

    Raises:
        ValueError: For a group code that is not a UMLS semantic group; the message lists them.
    """
    table = semantic_groups()
    out: dict[str, tuple[str, ...]] = {}
    for group in groups:
        found = table.get(group.upper())
        if found is None:
            known = ", ".join(f"{g.code} ({g.name})" for g in table.values())
            raise ValueError(f"{group!r} in {spec!r} is no UMLS semantic group; the groups: "
                             f"{known}")
        out[group] = tuple(t for pair in found.types for t in pair)
    return out


@dataclass(frozen=True)
class KbOptions:
    """What a knowledge-base spec's options ask for (empty: no filter).

    Attributes:
        types: Types a kept concept must have one of.
        groups: UMLS semantic groups whose types a kept concept may have instead.
        languages: MRCONSO languages to read (``None``: the reader's default, English).
        sources: MRCONSO source vocabularies to read (``None``: all).
    """

    types: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    languages: tuple[str, ...] | None = None
    sources: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, text: str, spec: str) -> KbOptions:
        """Options from the text after ``?`` in ``spec``.

        Raises:
            ValueError: For an item that is not ``key=value``, an unknown key or an empty value.
        """
        values: dict[str, list[str]] = {key: [] for key in _KEYS}
        for item in text.split("&"):
            key, sep, value = item.partition("=")
            key = key.strip().lower()
            if not sep or key not in values:
                raise ValueError(f"knowledge-base option {item!r} in {spec!r} is not "
                                 f"key=value with a key among {', '.join(_KEYS)}")
            parts = [v.strip() for v in value.split(",") if v.strip()]
            if not parts:
                raise ValueError(f"knowledge-base option {key!r} in {spec!r} has no value")
            values[key].extend(parts)
        languages = values["lang"]
        group_types(values["groups"], spec)  # an unknown group fails before the KB is read
        return cls(
            types=tuple(values["types"]),
            groups=tuple(values["groups"]),
            languages=None if not languages else () if "all" in map(str.lower, languages)
            else tuple(v.upper() for v in languages),
            sources=tuple(values["sab"]) or None,
        )


def split_options(spec: str, exists: bool) -> tuple[str, KbOptions]:
    """``spec`` without its options, and the options.

    Args:
        spec: A knowledge-base spec, perhaps ending with ``?key=value&...``.
        exists: Whether ``spec`` as a whole names an existing file (then a ``?`` in it is part
            of the file name, not the start of options).
    """
    head, sep, tail = spec.rpartition("?")
    if sep and not exists and not tail.strip():
        return head, KbOptions()  # 'kb.tsv?': no options
    if not sep or exists or "=" not in tail:
        return spec, KbOptions()
    return head, KbOptions.parse(tail, spec)


def select_concepts(concepts: Sequence[Concept], types: Sequence[str], spec: str,
                    groups: Sequence[str] = ()) -> list[Concept]:
    """The concepts with at least one of ``types``, or one of the semantic types of the UMLS
    semantic ``groups`` (types compared by code or name, without regard to case).

    A requested type, or group, that no concept has is logged as a warning (a typo would
    otherwise pass silently when other types match).

    Raises:
        ValueError: When no concept has any of the types or is in any of the groups (the
            message lists the types the knowledge base has, most frequent first), or for a
            group code that is no UMLS semantic group.
    """
    if not types and not groups:
        return list(concepts)
    members = group_types(groups, spec)
    wanted = {t.casefold() for t in types}
    for group_members in members.values():
        wanted.update(t.casefold() for t in group_members)
    kept = [c for c in concepts if any(t.casefold() in wanted for t in c.types)]
    present = Counter(t for c in concepts for t in c.types)
    asked = ", ".join([*map(repr, types), *(f"group {g!r}" for g in groups)])
    if not kept:
        found = ", ".join(f"{t!r} ({n})" for t, n in present.most_common(12)) or "none"
        hint = (" (groups= reads UMLS semantic types, such as an MRCONSO file's from the "
                "MRSTY.RRF beside it)" if groups else "")
        raise ValueError(f"no concept of knowledge base {spec!r} has a type among {asked}"
                         f"{hint}; its types (concepts): {found}")
    seen = {t.casefold() for t in present}
    for original in types:
        if original.casefold() not in seen:
            logger.warning("knowledge base %s: no concept has type %r", spec, original)
    for group, group_members in members.items():
        if not any(t.casefold() in seen for t in group_members):
            logger.warning("knowledge base %s: no concept is in semantic group %r", spec, group)
    logger.info("knowledge base %s: kept %d of %d concepts by type", spec, len(kept),
                len(concepts))
    return kept
