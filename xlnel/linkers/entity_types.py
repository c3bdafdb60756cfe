"""Entity types for links, as the training corpus annotates them (``Disease``, ``Chemical`` ...).

A knowledge base names concepts; a corpus also types its mentions, and users of a linker read
the type (spaCy's entity label, PubTator's type column). :class:`EntityTyper` learns it from the
typed training annotations, with two kinds of evidence:

1. the concept: the type its training mentions were annotated with most often;
2. for a concept the training documents never annotated, the words: a naive Bayes model over
   character n-grams (2 to 4 letters, padded at word edges) of the mention texts, applied to
   the link's text and the concept's preferred name (*-itis*, *-emia* against *-ine*, *-ol*).

Nothing is language- or corpus-specific: a corpus without types gives no typer, one with a
single type gives that type. The typer is saved as JSON (:meth:`EntityTyper.save`); loading it
runs no code.
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from xlnel.errors import ArtifactError
from xlnel.io._atomic import atomic_write
from xlnel.normalization import normalize_string
from xlnel.types import Document, Link
from xlnel.version import __version__

logger = logging.getLogger(__name__)

__all__ = ["EntityTyper", "char_ngrams"]

#: Lengths of the character n-grams of the words model.
NGRAM_LENGTHS = (2, 3, 4)
#: Additive smoothing of the words model's counts.
SMOOTHING = 0.5


def char_ngrams(text: str) -> list[str]:
    """Character n-grams of each word of ``text``, the word padded with ``^`` and ``$``.

    >>> char_ngrams("ab")[:3]
    ['^a', 'ab', 'b$']
    """
    out: list[str] = []
    for word in text.split():
        padded = f"^{word}$"
        for n in NGRAM_LENGTHS:
            out.extend(padded[i:i + n] for i in range(len(padded) - n + 1))
    return out


@dataclass
class EntityTyper:
    """Entity type of a link from its concept's training annotations, else from its words.

    Attributes:
        lang: Language of the normalisation (:func:`xlnel.normalization.normalize_string`).
        types: The types, most annotated first.
        concepts: Concept id -> type -> times its training mentions were annotated with it.
        type_counts: Type -> training mentions of that type (the words model's prior).
        ngrams: Character n-gram -> times it occurs in the mention texts of each type (one
            count per type, in the order of ``types``).
    """

    lang: str = "en"
    types: list[str] = field(default_factory=list)
    concepts: dict[str, dict[str, int]] = field(default_factory=dict)
    type_counts: dict[str, int] = field(default_factory=dict)
    ngrams: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def fit(cls, documents: Iterable[Document], lang: str = "en") -> EntityTyper | None:
        """Count the typed annotations of ``documents``; ``None`` when none has a type."""
        concepts: dict[str, Counter[str]] = defaultdict(Counter)
        type_counts: Counter[str] = Counter()
        by_type: dict[str, Counter[str]] = defaultdict(Counter)
        for doc in documents:
            for ent in doc.entities:
                if not ent.type:
                    continue
                type_counts[ent.type] += 1
                for cid in ent.concept_ids:
                    concepts[cid][ent.type] += 1
                by_type[ent.type].update(char_ngrams(normalize_string(ent.text, lang)))
        if not type_counts:
            return None
        types = [t for t, _ in sorted(type_counts.items(), key=lambda x: (-x[1], x[0]))]
        grams = sorted(set().union(*by_type.values()))
        ngrams = {g: [by_type[t][g] for t in types] for g in grams}
        logger.info("entity typer: %d types, %d concepts, %d n-grams", len(types),
                    len(concepts), len(ngrams))
        return cls(lang, types, {c: dict(v) for c, v in sorted(concepts.items())},
                   {t: type_counts[t] for t in types}, ngrams)

    def type_of(self, text: str, concept_id: str | None = None,
                concept_name: str | None = None) -> tuple[str | None, str]:
        """The type of a mention and the evidence that gave it.

        Args:
            text: The mention text.
            concept_id: Its concept; the concept's training annotations decide when it has any.
            concept_name: The concept's preferred name, read by the words model with ``text``.

        Returns:
            ``(type, evidence)``: evidence ``concept`` or ``words``; ``(None, "none")`` for a
            typer without types.
        """
        if not self.types:
            return None, "none"
        counts = self.concepts.get(concept_id) if concept_id is not None else None
        if counts:
            # ties go to the type annotated more often overall (earlier in ``types``)
            return max(self.types, key=lambda t: counts.get(t, 0)), "concept"
        if len(self.types) == 1:
            return self.types[0], "words"
        grams = char_ngrams(normalize_string(text, self.lang))
        if concept_name:
            grams += char_ngrams(normalize_string(concept_name, self.lang))
        return self.types[self._argmax(grams)], "words"

    def _argmax(self, grams: Sequence[str]) -> int:
        """Index of the type with the highest naive Bayes log-probability of ``grams``."""
        priors, denominators = self._model
        scores = list(priors)
        for g in grams:
            counts = self.ngrams.get(g)
            if counts is None:  # an n-gram no training mention showed says nothing
                continue
            for k, c in enumerate(counts):
                scores[k] += math.log(c + SMOOTHING) - denominators[k]
        # ties go to the type annotated more often (the earlier one)
        return max(range(len(scores)), key=lambda k: (scores[k], -k))

    @cached_property
    def _model(self) -> tuple[list[float], list[float]]:
        """Log priors of the types and log denominators of their smoothed n-gram shares."""
        vocabulary = len(self.ngrams) + 1
        totals = [sum(column) for column in zip(*self.ngrams.values(), strict=True)]
        totals = totals or [0] * len(self.types)
        n = sum(self.type_counts.values())
        return ([math.log(self.type_counts[t] / n) for t in self.types],
                [math.log(total + SMOOTHING * vocabulary) for total in totals])

    def annotate(self, links: Sequence[Link]) -> list[Link]:
        """The links, each without a type given the one :meth:`type_of` finds."""
        return [link if link.type is not None else replace(
                    link, type=self.type_of(link.text, link.concept_id, link.concept_name)[0])
                for link in links]

    def annotate_document(self, document: Document) -> Document:
        """The document with :meth:`annotate` applied to its entities."""
        return replace(document, entities=tuple(self.annotate(document.entities)))

    def save(self, path: str | Path) -> None:
        """Write the typer as JSON (atomically)."""
        data = {"xlnel_version": __version__, "lang": self.lang, "types": self.types,
                "concepts": self.concepts, "type_counts": self.type_counts,
                "ngrams": self.ngrams}
        with atomic_write(Path(path)) as f:
            f.write(json.dumps(data, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> EntityTyper:
        """Read a typer written by :meth:`save`.

        Raises:
            ArtifactError: If the file is missing, not a typer, or its counts do not fit its
                types.
        """
        p = Path(path)
        if not p.is_file():
            raise ArtifactError(f"no entity typer at {p}")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            typer = cls(str(data["lang"]), [str(t) for t in data["types"]],
                        {str(c): {str(t): int(n) for t, n in v.items()}
                         for c, v in data["concepts"].items()},
                        {str(t): int(n) for t, n in data["type_counts"].items()},
                        {str(g): [int(n) for n in v] for g, v in data["ngrams"].items()})
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
            raise ArtifactError(f"{p} is not an entity typer: {e}") from None
        typer._check(p)
        return typer

    def _check(self, path: Path) -> None:
        known = set(self.types)
        if set(self.type_counts) != known or any(n <= 0 for n in self.type_counts.values()):
            raise ArtifactError(f"{path}: type_counts must give a positive count for each of "
                                f"the types {self.types}")
        bad = next((g for g, v in self.ngrams.items() if len(v) != len(self.types)), None)
        if bad is not None:
            raise ArtifactError(f"{path}: n-gram {bad!r} has {len(self.ngrams[bad])} counts "
                                f"for {len(self.types)} types")
        bad = next((c for c, v in self.concepts.items() if not set(v) <= known), None)
        if bad is not None:
            raise ArtifactError(f"{path}: concept {bad!r} has a type outside {self.types}")
