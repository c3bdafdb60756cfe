"""What a knowledge base holds: concepts, names, types, UMLS semantic groups and
cross-reference vocabularies.

``xlnel kb SPEC`` prints it, so a user can see which types a ``?types=`` option (or groups a
``?groups=`` option) may keep
(:mod:`xlnel.io.kb_options`) before configuring a pipeline on the knowledge base.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xlnel.io.kb_options import semantic_groups
from xlnel.types import Concept

__all__ = ["KbSummary", "summarize_concepts"]


@dataclass(frozen=True)
class KbSummary:
    """Counts over a knowledge base's concepts.

    Attributes:
        spec: The spec it was loaded from.
        concepts: Number of concepts.
        names: Number of names, over all concepts.
        typed: Concepts with at least one type.
        types: ``(type, concepts)`` pairs, most frequent first (at most the ``top`` asked for).
        distinct_types: Number of distinct types.
        xrefs: ``(vocabulary, concepts)`` pairs of cross-references (the part of an xref
            before ``:``), most frequent first (at most ``top``).
        groups: ``(UMLS semantic group, concepts)`` pairs, most frequent first, for a knowledge
            base typed by UMLS semantic types (what ``?groups=`` may keep); empty otherwise.
        retired_ids: Retired ids the knowledge base maps to current concepts
            (:func:`xlnel.io.kb_history.kb_id_history`).
    """

    spec: str
    concepts: int
    names: int
    typed: int
    types: tuple[tuple[str, int], ...]
    distinct_types: int
    xrefs: tuple[tuple[str, int], ...]
    groups: tuple[tuple[str, int], ...] = ()
    retired_ids: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (types and xrefs as ``{name: concepts}`` in order)."""
        return {"spec": self.spec, "concepts": self.concepts, "names": self.names,
                "typed": self.typed, "distinct_types": self.distinct_types,
                "types": dict(self.types), "xrefs": dict(self.xrefs),
                "groups": dict(self.groups), "retired_ids": self.retired_ids}

    def format(self) -> str:
        """A few lines for a terminal."""
        per = self.names / self.concepts if self.concepts else 0.0
        lines = [f"{self.spec}: {_count(self.concepts, 'concept')}, "
                 f"{_count(self.names, 'name')} ({per:.1f} a concept)"]
        if self.distinct_types:
            shown = ", ".join(f"{t} ({n:,})" for t, n in self.types)
            more = self.distinct_types - len(self.types)
            lines.append(f"  types of {_count(self.typed, 'concept')}: {shown}"
                         + (f" and {more:,} more" if more > 0 else ""))
        else:
            lines.append("  no types")
        if self.groups:
            lines.append("  UMLS semantic groups: "
                         + ", ".join(f"{g} ({n:,})" for g, n in self.groups))
        if self.xrefs:
            lines.append("  cross-references: "
                         + ", ".join(f"{v} ({n:,})" for v, n in self.xrefs))
        if self.retired_ids:
            lines.append(f"  {_count(self.retired_ids, 'retired id')} mapped to current concepts")
        return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def summarize_concepts(spec: str, concepts: Sequence[Concept], top: int = 20,
                       retired_ids: int = 0) -> KbSummary:
    """The :class:`KbSummary` of loaded concepts (``top``: most types and vocabularies kept;
    ``retired_ids``: how many retired ids the knowledge base's history maps)."""
    types = Counter(t for c in concepts for t in dict.fromkeys(c.types))
    xrefs = Counter(v for c in concepts
                    for v in dict.fromkeys(x.partition(":")[0] for x in c.xrefs if ":" in x))
    return KbSummary(spec, len(concepts), sum(len(c.names) for c in concepts),
                     sum(1 for c in concepts if c.types), tuple(types.most_common(top)),
                     len(types), tuple(xrefs.most_common(top)),
                     tuple(_groups(concepts).most_common()), retired_ids)


def _groups(concepts: Sequence[Concept]) -> Counter[str]:
    """Concepts per UMLS semantic group, by the group of each of their types (code or name)."""
    of_type = {t.casefold(): g.code for g in semantic_groups().values()
               for pair in g.types for t in pair}
    return Counter(g for c in concepts
                   for g in dict.fromkeys(of_type[t.casefold()] for t in c.types
                                          if t.casefold() in of_type))
