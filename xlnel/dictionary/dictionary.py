"""The source-language dictionary: names mapped to concept ids, with where each entry came from."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from xlnel.errors import FormatError
from xlnel.io._atomic import atomic_write, iter_lines
from xlnel.io.concept_ids import one_concept_id
from xlnel.types import Concept

logger = logging.getLogger(__name__)

#: Sources an entry may come from: a knowledge-base name, a gold annotation, or a rendering
#: built from English names (``translated`` word for word, ``composed`` from several words,
#: ``transliterated`` in part by the character fallback, ``corpus``: attested in a corpus).
SOURCES = ("kb", "translated", "annotation", "composed", "transliterated", "corpus")
#: Sources of names the builder generated (from English names or a corpus); the others
#: (``kb``, ``annotation``) are names taken as given.
GENERATED_SOURCES = frozenset({"translated", "composed", "transliterated", "corpus"})
#: Header of a dictionary TSV; a fourth ``score`` column is optional.
HEADER = ("name", "concept_id", "source")
#: Characters that would split a TSV row into fields or lines: the tab and the line-end
#: characters (the same as :data:`xlnel.io._atomic.ONE_LINE`; other separators such as U+2028
#: end no line of a TSV and are kept).
ROW_BREAKS = re.compile(r"[\t\n\r]")
# a run of white space holding such a character: stored as one space
_BREAK_RUN = re.compile(r"\s*" + ROW_BREAKS.pattern + r"\s*")


def has_word_character(name: str) -> bool:
    """Whether a name holds a letter or a digit: one of only punctuation (``-``, ``.``) names
    nothing and would match every dash or full stop of a text."""
    return any(ch.isalnum() for ch in name)


@dataclass(frozen=True)
class Entry:
    """One (name, concept) pair of the dictionary, where it came from and how sure it is.

    ``score`` is the builder's confidence in ``(0, 1]`` for a generated name; ``None`` for names
    taken as given (knowledge base, annotations).
    """

    name: str
    concept_id: str
    source: str = "kb"
    score: float | None = None


class Dictionary:
    """Names mapped to one or more concept ids; duplicates of (name, concept) are kept once.

    Names are stored as given; matching normalises them. Each (name, concept) pair keeps the
    first source it was added from, so a KB name also seen in the annotations stays ``kb``.
    """

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._entries: dict[tuple[str, str], str] = {}
        self._scores: dict[tuple[str, str], float] = {}
        self._by_name: dict[str, list[str]] = {}
        self.extend(entries)

    def add(self, name: str, concept_id: str, source: str = "kb",
            score: float | None = None) -> bool:
        """Add a pair; returns ``True`` when it was new.

        A pair already present keeps its source; its score rises to ``score`` if that is higher.
        White space in the name that holds a tab or a line break (which would break the TSV
        row) is stored as one space.

        Raises:
            ValueError: If the name or concept id is empty, the concept id holds a tab or a
                line break, or the source is unknown.
        """
        if source not in SOURCES:
            raise ValueError(f"unknown dictionary source {source!r}; allowed: {', '.join(SOURCES)}")
        name = _BREAK_RUN.sub(" ", name).strip()
        if not name or not concept_id:
            raise ValueError(f"dictionary entry needs a name and a concept id, got {name!r}, "
                             f"{concept_id!r}")
        if ROW_BREAKS.search(concept_id):
            raise ValueError(f"concept id {concept_id!r} holds a tab or a line break, which a "
                             "dictionary TSV row cannot hold; ids are written on one line")
        key = (name, concept_id)
        if score is not None and score > self._scores.get(key, float("-inf")):
            self._scores[key] = float(score)
        if key in self._entries:
            return False
        self._entries[key] = source
        self._by_name.setdefault(name, []).append(concept_id)
        return True

    def remove(self, name: str, concept_id: str) -> bool:
        """Remove a pair; returns ``True`` when it was present."""
        key = (name, concept_id)
        if self._entries.pop(key, None) is None:
            return False
        self._scores.pop(key, None)
        ids = self._by_name[name]
        ids.remove(concept_id)
        if not ids:
            del self._by_name[name]
        return True

    def extend(self, entries: Iterable[Entry]) -> int:
        """Add many entries; returns how many were new."""
        return sum(self.add(e.name, e.concept_id, e.source, e.score) for e in entries)

    @classmethod
    def from_concepts(cls, concepts: Iterable[Concept], source: str = "kb") -> Dictionary:
        """Build a dictionary holding every name of every concept that has a letter or a digit
        (a name of only punctuation, ``-`` or ``.``, is left out and counted in the log)."""
        d = cls()
        skipped = 0
        for c in concepts:
            for name in c.names:
                if has_word_character(name):
                    d.add(name, c.id, source)
                elif name.strip():
                    skipped += 1
        if skipped:
            logger.info("left out %d names without a letter or digit", skipped)
        return d

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        for key, source in self._entries.items():
            yield Entry(*key, source, self._scores.get(key))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> list[str]:
        """Distinct names, in insertion order."""
        return list(self._by_name)

    def concepts_of(self, name: str) -> list[str]:
        """Concept ids of a name (empty list when absent)."""
        return list(self._by_name.get(name, ()))

    def preferred_names(self) -> dict[str, str]:
        """Each concept's first name (the preferred one for knowledge-base concepts)."""
        out: dict[str, str] = {}
        for name, cid in self._entries:
            out.setdefault(cid, name)
        return out

    def concept_ids(self) -> set[str]:
        """All concept ids present."""
        return {cid for _, cid in self._entries}

    def source_of(self, name: str, concept_id: str) -> str | None:
        """Source of a pair, or ``None`` when absent."""
        return self._entries.get((name, concept_id))

    def score_of(self, name: str, concept_id: str) -> float | None:
        """Score of a pair, or ``None`` when absent or unscored."""
        return self._scores.get((name, concept_id))

    def count_by_source(self) -> dict[str, int]:
        """Number of entries per source."""
        counts = dict.fromkeys(SOURCES, 0)
        for source in self._entries.values():
            counts[source] += 1
        return counts

    def save(self, path: str | Path) -> None:
        """Write the dictionary as TSV ``name<TAB>concept_id<TAB>source`` (atomically).

        When any entry has a score, a fourth column ``score`` is written (empty when unscored).
        """
        scored = bool(self._scores)
        with atomic_write(path) as f:
            f.write("\t".join(HEADER + (("score",) if scored else ())) + "\n")
            for key, source in self._entries.items():
                row = f"{key[0]}\t{key[1]}\t{source}"
                if scored:
                    score = self._scores.get(key)
                    row += "\t" + ("" if score is None else f"{score:.4f}")
                f.write(row + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Dictionary:
        """Read a dictionary written by :meth:`save` (with or without the ``score`` column).

        Blank lines are skipped, as the knowledge-base TSV readers skip them. Concept ids are
        read as the corpora and knowledge bases read them (:func:`~xlnel.io.concept_ids.
        one_concept_id`: surrounding spaces and a ``MESH:``/``UMLS:`` prefix removed), so that
        they match the ids of the mentions they link.

        Raises:
            FormatError: On a wrong header, a line with another field count than the header's,
                a concept id that reads as no concept or as several (``-1``, ``D1|D2``), an
                unknown source or a score that is not a number from 0 to 1.
        """
        d = cls()
        lines = iter_lines(path)
        header = tuple(next(lines, (1, ""))[1].split("\t"))
        if header not in (HEADER, HEADER + ("score",)):
            raise FormatError(f"expected header 'name<TAB>concept_id<TAB>source[<TAB>score]', "
                              f"got {chr(9).join(header)!r}", path, 1)
        for lineno, line in lines:
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != len(header):
                raise FormatError(f"expected {len(header)} tab-separated fields, got "
                                  f"{len(parts)}: {line.rstrip()!r}", path, lineno)
            try:
                score = _score(parts[3]) if len(parts) == 4 and parts[3] else None
                concept_id = one_concept_id(parts[1], "concept_id", path, lineno)
                d.add(parts[0], concept_id, parts[2], score)
            except ValueError as e:
                raise FormatError(str(e), path, lineno) from e
        return d

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.count_by_source().items())
        return f"Dictionary({len(self._by_name)} names, {len(self)} entries: {counts})"


def _score(text: str) -> float:
    """A score column's value: a number from 0 to 1 (NaN, infinities and others would poison
    every ranking that weighs names by it)."""
    try:
        score = float(text)
    except ValueError:
        raise ValueError(f"score {text!r} is not a number; a score is a number from 0 to 1, "
                         "or empty") from None
    if not 0.0 <= score <= 1.0:  # also false for NaN
        raise ValueError(f"score {text!r} is not from 0 to 1")
    return score
