"""Options written after a knowledge-base spec: ``SPEC?types=...&lang=...&sab=...``.

A knowledge base is named by one string wherever xlnel takes one (``dictionary.kb`` in a config,
``--kb`` on the command line), so the choices users make when they load UMLS or HPO travel with
it, as scispacy's and QuickUMLS's semantic-type filters do:

- ``types``: keep only the concepts with one of these types (HPO sub-ontologies such as
  ``Phenotypic abnormality``; UMLS semantic types by code, ``T047``, or name, from the
  ``MRSTY.RRF`` beside ``MRCONSO.RRF``; the ``type`` column of a TSV table), compared without
  regard to case;
- ``lang`` and ``sab`` (``mrconso`` only): the languages (``LAT``) and source vocabularies
  (``SAB``) whose names are read; ``lang=all`` reads every language.

Values are separated by commas or given by repeating the key (``types=T047&types=T191``); a type
whose name holds a comma is given by its code.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xlnel.types import Concept

logger = logging.getLogger(__name__)

__all__ = ["KbOptions", "select_concepts", "split_options"]

_KEYS = ("types", "lang", "sab")


@dataclass(frozen=True)
class KbOptions:
    """What a knowledge-base spec's options ask for (empty: no filter).

    Attributes:
        types: Types a kept concept must have one of.
        languages: MRCONSO languages to read (``None``: the reader's default, English).
        sources: MRCONSO source vocabularies to read (``None``: all).
    """

    types: tuple[str, ...] = ()
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
        return cls(
            types=tuple(values["types"]),
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
    if not sep or exists or "=" not in tail:
        return spec, KbOptions()
    return head, KbOptions.parse(tail, spec)


def select_concepts(concepts: Sequence[Concept], types: Sequence[str],
                    spec: str) -> list[Concept]:
    """The concepts with at least one of ``types`` (compared without regard to case).

    A requested type that no concept has is logged as a warning (a typo would otherwise
    pass silently when other types match).

    Raises:
        ValueError: When no concept has any of the types; the message lists the types the
            knowledge base has, most frequent first.
    """
    if not types:
        return list(concepts)
    wanted = {t.casefold(): t for t in types}
    kept = [c for c in concepts if any(t.casefold() in wanted for t in c.types)]
    present = Counter(t for c in concepts for t in c.types)
    if not kept:
        found = ", ".join(f"{t!r} ({n})" for t, n in present.most_common(12)) or "none"
        raise ValueError(f"no concept of knowledge base {spec!r} has a type among "
                         f"{', '.join(map(repr, types))}; its types (concepts): {found}")
    seen = {t.casefold() for t in present}
    for key, original in wanted.items():
        if key not in seen:
            logger.warning("knowledge base %s: no concept has type %r", spec, original)
    logger.info("knowledge base %s: kept %d of %d concepts by type", spec, len(kept),
                len(concepts))
    return kept
