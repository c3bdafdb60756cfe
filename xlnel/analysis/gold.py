"""Gold items for dictionary coverage: translation TSVs and corpora, dictionaries to score.

A gold item is a text with its concept ids: a row of a ``concept_id<TAB>english<TAB>translation``
TSV (the official HPO translations) or an entity of an annotated corpus. :func:`resolve_gold`
maps the ids a knowledge base has retired to the current ones
(:mod:`xlnel.io.kb_history`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import FormatError
from xlnel.io._atomic import iter_lines
from xlnel.io.kb_history import resolve_ids

__all__ = ["GoldItem", "infer_lang", "load_dictionary", "read_gold", "read_gold_tsv",
           "resolve_gold"]

_DICTIONARY_HEADER = "name\tconcept_id\tsource"
_HEBREW_LETTER = re.compile("[\u05d0-\u05ea]")


@dataclass(frozen=True)
class GoldItem:
    """One gold text with its concept ids (empty when the gold gives none)."""

    text: str
    concept_ids: tuple[str, ...] = ()


#: A column name of concept ids (``hpo_id``, ``concept_id``, ``id``, ``CUI``). Digits do not
#: tell ids from names: a ``names:`` knowledge base's ids are names (``seizure``).
_ID_COLUMN = re.compile(r"(?i)(?:[a-z]+_)?(?:id|cui|code|concept)")


def _is_header(fields: Sequence[str]) -> bool:
    return _ID_COLUMN.fullmatch(fields[0].strip()) is not None


def read_gold_tsv(path: str | Path) -> list[GoldItem]:
    """Read ``concept_id<TAB>english<TAB>translation`` rows, with or without a header line.

    The first line is a header when its first field is a column name of ids (``hpo_id``,
    ``concept_id``, ``id``, ``cui``); blank lines are skipped. Each row is the item
    (translation, concept id).

    Raises:
        FileNotFoundError: If the file does not exist.
        FormatError: On a row without three fields or with an empty id or translation.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"gold file not found: {path}")
    items: list[GoldItem] = []
    first = True
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if first and _is_header(fields):
            first = False
            continue
        first = False
        if len(fields) != 3 or not fields[0].strip() or not fields[2].strip():
            raise FormatError(f"expected 'concept_id<TAB>english<TAB>translation' with an id and "
                              f"a translation, got {len(fields)} field(s): {line[:120]!r}",
                              path, lineno)
        items.append(GoldItem(fields[2].strip(), (fields[0].strip(),)))
    return items


def read_gold(path: str | Path) -> list[GoldItem]:
    """Gold items of a TSV (``.tsv``, see :func:`read_gold_tsv`) or of a corpus's entities.

    Raises:
        FileNotFoundError: If the path does not exist.
        FormatError: If the file does not follow its format.
        ValueError: If the corpus format cannot be told, or it is a plain-text file.
    """
    from xlnel.io.documents import read_annotated_documents

    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() != ".gz"]
    if suffixes and suffixes[-1] == ".tsv":
        return read_gold_tsv(path)
    return [GoldItem(e.text, tuple(e.concept_ids))
            for doc in read_annotated_documents(path, "gold") for e in doc.entities]


def load_dictionary(spec: str | Path) -> Dictionary:
    """A dictionary from a dictionary TSV, a folder holding ``dictionary.tsv`` (``xlnel adapt``)
    or a knowledge-base spec (``hpo``, ``tsv:PATH``, ``names:PATH``: its names as entries).

    Raises:
        FileNotFoundError: If no such file exists.
        FormatError: On a malformed dictionary TSV.
        ValueError: On a knowledge-base spec of unknown format.
    """
    from xlnel.io import load_kb

    path = Path(spec)
    if path.is_dir():
        path = path / "dictionary.tsv"
    if path.is_file():
        first = next((line for _, line in iter_lines(path)), "")
        # the builder's dictionaries carry a fourth column, the entry's score
        if first.split("\t")[:3] == _DICTIONARY_HEADER.split("\t"):
            return Dictionary.load(path)
    elif Path(spec).is_dir():
        raise FileNotFoundError(f"no dictionary.tsv in {spec}")
    try:
        return Dictionary.from_concepts(load_kb(spec))
    except FileNotFoundError as e:
        raise FileNotFoundError(f"no such dictionary file or folder: {spec} ({e})") from None


def infer_lang(dictionary: str | Path, texts: Iterable[str]) -> str:
    """The normalisation language: the ``lang`` of an ``xlnel adapt`` report beside the
    dictionary, else ``he`` when the gold has Hebrew letters, else ``en``.

    The Hebrew rules change Hebrew letters only, so ``he`` is safe for mixed text.
    """
    path = Path(dictionary)
    report = (path if path.is_dir() else path.parent) / "report.json"
    if report.is_file():
        try:
            lang = json.loads(report.read_text(encoding="utf-8")).get("lang")
        except (json.JSONDecodeError, AttributeError):
            lang = None
        if isinstance(lang, str) and lang:
            return lang
    return "he" if any(_HEBREW_LETTER.search(t) for t in texts) else "en"


def resolve_gold(items: Sequence[GoldItem], history: Mapping[str, str]
                 ) -> tuple[list[GoldItem], int]:
    """The items with retired concept ids replaced by current ones, and how many ids changed."""
    changed = sum(cid in history for item in items for cid in item.concept_ids)
    return [GoldItem(item.text, resolve_ids(item.concept_ids, history)) for item in items], changed
