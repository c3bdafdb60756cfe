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
            Spellings that differ only by case (``Disease``, ``disease``) are one type, as
            ``?types=`` compares them, named by its most frequent spelling; a concept counts
            once whichever spellings it has.
        distinct_types: Number of distinct types (case aside).
        type_spellings: ``(type, spellings)`` pairs, for the listed types written in more
            than one way, the spellings seen most frequent first.
        xrefs: ``(vocabulary, concepts)`` pairs of cross-references (the part of an xref
            before ``:``), most frequent first (at most ``top``). Vocabularies are grouped as
            types are: ``UMLS`` and ``umls`` are one, named by its most frequent spelling.
        xref_spellings: ``(vocabulary, spellings)`` pairs, for the listed vocabularies written
            in more than one way, the spellings seen most frequent first.
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
    type_spellings: tuple[tuple[str, tuple[str, ...]], ...] = ()
    xref_spellings: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (types and xrefs as ``{name: concepts}`` in order; the spellings
        of types and vocabularies written in more than one way as
        ``{name: [spelling, ...]}``)."""
        return {"spec": self.spec, "concepts": self.concepts, "names": self.names,
                "typed": self.typed, "distinct_types": self.distinct_types,
                "types": dict(self.types),
                "type_spellings": {t: list(seen) for t, seen in self.type_spellings},
                "xrefs": dict(self.xrefs),
                "xref_spellings": {v: list(seen) for v, seen in self.xref_spellings},
                "groups": dict(self.groups),
                "retired_ids": self.retired_ids}

    def format(self) -> str:
        """A few lines for a terminal."""
        per = self.names / self.concepts if self.concepts else 0.0
        lines = [f"{self.spec}: {_count(self.concepts, 'concept')}, "
                 f"{_count(self.names, 'name')} ({per:.1f} a concept)"]
        if self.distinct_types:
            shown = _listed(self.types, self.type_spellings)
            more = self.distinct_types - len(self.types)
            lines.append(f"  types of {_count(self.typed, 'concept')}: {shown}"
                         + (f" and {more:,} more" if more > 0 else ""))
        else:
            lines.append("  no types")
        if self.groups:
            lines.append("  UMLS semantic groups: "
                         + ", ".join(f"{g} ({n:,})" for g, n in self.groups))
        if self.xrefs:
            lines.append("  cross-references: " + _listed(self.xrefs, self.xref_spellings))
        if self.retired_ids:
            lines.append(f"  {_count(self.retired_ids, 'retired id')} mapped to current concepts")
        return "\n".join(lines)


def _listed(counts: tuple[tuple[str, int], ...],
            spellings: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """``name (n), ...``, with the spellings of a name written in more than one way."""
    seen = dict(spellings)
    return ", ".join(f"{t} ({n:,}" + (f"; written {' / '.join(seen[t])})" if t in seen else ")")
                     for t, n in counts)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def summarize_concepts(spec: str, concepts: Sequence[Concept], top: int = 20,
                       retired_ids: int = 0) -> KbSummary:
    """The :class:`KbSummary` of loaded concepts (``top``: most types and vocabularies kept;
    ``retired_ids``: how many retired ids the knowledge base's history maps)."""
    types, spellings = _by_case([c.types for c in concepts])
    xrefs, xref_spellings = _by_case([[x.partition(":")[0] for x in c.xrefs if ":" in x]
                                      for c in concepts])
    listed, listed_xrefs = types.most_common(top), xrefs.most_common(top)
    return KbSummary(spec, len(concepts), sum(len(c.names) for c in concepts),
                     sum(1 for c in concepts if c.types), tuple(listed),
                     len(types), tuple(listed_xrefs),
                     tuple(_groups(concepts).most_common()), retired_ids,
                     tuple((t, spellings[t]) for t, _ in listed if len(spellings[t]) > 1),
                     tuple((v, xref_spellings[v]) for v, _ in listed_xrefs
                           if len(xref_spellings[v]) > 1))


def _by_case(values: Sequence[Sequence[str]]) -> tuple[Counter[str],
                                                      dict[str, tuple[str, ...]]]:
    """Concepts per value (type or vocabulary; ``values`` holds each concept's), values that
    differ only by case taken as one (``?types=`` selects such types together), each named by
    its most frequent spelling; and the spellings of each."""
    per_key: dict[str, Counter[str]] = {}  # casefolded value -> concepts per spelling
    counts: Counter[str] = Counter()  # casefolded value -> concepts
    for concept_values in values:
        keys: dict[str, None] = {}
        for spelling in dict.fromkeys(concept_values):
            key = spelling.casefold()
            per_key.setdefault(key, Counter())[spelling] += 1
            keys[key] = None
        counts.update(list(keys))
    # most_common keeps first-seen order among equal counts, so ties go to the first spelling
    names = {key: seen.most_common(1)[0][0] for key, seen in per_key.items()}
    return (Counter({names[key]: n for key, n in counts.items()}),
            {names[key]: tuple(s for s, _ in seen.most_common()) for key, seen in per_key.items()})


def _groups(concepts: Sequence[Concept]) -> Counter[str]:
    """Concepts per UMLS semantic group, by the group of each of their types (code or name)."""
    of_type = {t.casefold(): g.code for g in semantic_groups().values()
               for pair in g.types for t in pair}
    return Counter(g for c in concepts
                   for g in dict.fromkeys(of_type[t.casefold()] for t in c.types
                                          if t.casefold() in of_type))
