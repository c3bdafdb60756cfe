"""JSON Lines corpora: one document a line, as in the Camoni Hebrew health-forum data.

Each line is an object::

    {"id": "camoni-diabetes-0", "community": "diabetes", "text": "...",
     "entities": [{"start": 10, "end": 20, "text": "...", "type": "Disorder",
                   "concept_id": "C0011849"}]}

``concept_id`` is optional (``null`` or absent for no concept), a string or a list of strings,
read by the rule of :mod:`xlnel.io.concept_ids` (``A|B`` for several concepts, ``-1`` for none,
``MESH:``/``UMLS:`` prefixes removed);
``score`` is optional, and so are the fields that say what a prediction found:
``id_kind`` (``concept`` for knowledge-base ids, ``dictionary_name`` when the dictionary gave
the matched name no id and the "id" is the name itself; absent: not stated), ``concept_name``
(the concept's preferred name), ``concept_type``, ``matched_name`` (the dictionary name that
matched), ``matched_source`` and ``alternatives`` (other concepts proposed for the span,
best first: ``[{"concept_id", "score", "similarity"}]``). Top-level keys other than ``id``,
``text`` and ``entities`` go to :attr:`Document.metadata` and are written back.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from xlnel.errors import FormatError
from xlnel.io._atomic import is_stdin, iter_lines, write_corpus
from xlnel.io._checks import check_entities
from xlnel.io._json import NotJsonError, lone_surrogate, strict_decoder
from xlnel.io.bioc_json import BIOC_JSON_KEYS
from xlnel.io.concept_ids import check_concept_ids, parse_concept_ids
from xlnel.types import FOUND_FIELDS, ID_KINDS, Document, Link

logger = logging.getLogger(__name__)

__all__ = ["document_to_dict", "entity_to_dict", "iter_jsonl", "jsonl_text", "lone_surrogate",
           "read_jsonl", "write_jsonl"]

_RESERVED = ("id", "text", "entities")
#: A JSON escape of a UTF-16 surrogate: the one way JSON text can hold a string that is not
#: Unicode text (a lone ``\\ud800``); lines without one need no check.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_DECODER = strict_decoder()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_concept_ids(value: Any, where: str, path: Path, lineno: int) -> tuple[str, ...]:
    """A ``concept_id`` string, or each string of a list, read by the one rule of
    :mod:`xlnel.io.concept_ids` that every format's ids are read by."""
    if value is None:
        return ()
    parts: list[Any] = [value] if isinstance(value, str) else value
    if not isinstance(value, str | list):
        raise FormatError(
            f"{where}: concept_id {value!r} is not a string, a list of strings or null",
            path,
            lineno,
        )
    if not all(isinstance(part, str) for part in parts):
        raise FormatError(f"{where}: concept_id {value!r} holds a non-string", path, lineno)
    return tuple(dict.fromkeys(i for part in parts for i in parse_concept_ids(part)))


def _parse_score(value: Any, where: str, path: Path, lineno: int) -> float | None:
    if value is None:
        return None
    number = _number(value)
    if number is None:
        raise FormatError(f"{where}: score {value!r} is not a finite number or null", path,
                          lineno)
    return number


def _parse_optional_str(value: Any, key: str, where: str, path: Path,
                        lineno: int) -> str | None:
    if value is not None and not isinstance(value, str):
        raise FormatError(f"{where}: {key} {value!r} is not a string or null", path, lineno)
    return value


def _parse_entity(raw: Any, index: int, text: str, path: Path, lineno: int) -> Link:
    where = f"entity {index}"
    if not isinstance(raw, dict):
        raise FormatError(f"{where} is not an object: {raw!r}", path, lineno)
    start: Any = raw.get("start")
    end: Any = raw.get("end")
    if not (_is_int(start) and _is_int(end)):
        raise FormatError(
            f"{where}: offsets start={start!r} end={end!r} are not both integers", path, lineno
        )
    if not 0 <= start < end <= len(text):
        raise FormatError(
            f"{where}: offsets {start}-{end} are not a non-empty range inside the text "
            f"of length {len(text)}",
            path,
            lineno,
        )
    mention = raw.get("text", text[start:end])
    if mention != text[start:end]:
        raise FormatError(
            f"{where}: text {mention!r} differs from the text at {start}-{end}: "
            f"{text[start:end]!r}",
            path,
            lineno,
        )
    entity_type = raw.get("type")
    if entity_type is not None and not isinstance(entity_type, str):
        raise FormatError(f"{where}: type {entity_type!r} is not a string", path, lineno)
    concept_ids = _parse_concept_ids(raw.get("concept_id"), where, path, lineno)
    score = _parse_score(raw.get("score"), where, path, lineno)
    id_kind = raw.get("id_kind")
    if id_kind is not None and id_kind not in ID_KINDS:
        raise FormatError(f"{where}: id_kind {id_kind!r} is not one of {', '.join(ID_KINDS)}",
                          path, lineno)
    found = {key: _parse_optional_str(raw.get(key), key, where, path, lineno)
             for key in FOUND_FIELDS}
    alternatives = _parse_alternatives(raw.get("alternatives"), where, path, lineno)
    # an empty type is no type, as PubTator's empty type column and BioC's empty infon read
    return Link(start, end, mention, concept_ids, entity_type or None, score,
                id_kind if concept_ids else None,
                concept_name=found["concept_name"], concept_type=found["concept_type"],
                matched_name=found["matched_name"], matched_source=found["matched_source"],
                alternatives=alternatives)


def _parse_alternatives(value: Any, where: str, path: Path,
                        lineno: int) -> tuple[tuple[str, float, float], ...]:
    """``[{"concept_id", "score", "similarity"}, ...]`` (or null) as triples."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise FormatError(f"{where}: alternatives {value!r} is not a list or null", path,
                          lineno)
    out = []
    for i, item in enumerate(value):
        fields: dict[str, Any] = item if isinstance(item, dict) else {}
        concept_id = fields.get("concept_id")
        score, similarity = _number(fields.get("score")), _number(fields.get("similarity"))
        if not isinstance(concept_id, str) or not concept_id or score is None \
                or similarity is None:
            raise FormatError(f"{where}: alternative {i} {item!r} is not an object with a "
                              "string concept_id and finite number score and similarity", path,
                              lineno)
        out.append((concept_id, score, similarity))
    return tuple(out)


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a JSON number (not a boolean) that a float holds (a
    link's scores are finite), else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer of hundreds of digits
            return None
        return number if math.isfinite(number) else None
    return None


def _parse_document(obj: Any, path: Path, lineno: int) -> Document:
    if not isinstance(obj, dict):
        raise FormatError(f"line is not a JSON object but {type(obj).__name__}", path, lineno)
    for key in ("id", "text"):
        if key not in obj:
            hint = ("; it looks like BioC JSON: read it as biocjson (--from biocjson, or the "
                    "extension .bioc.json)" if set(BIOC_JSON_KEYS) & set(obj)
                    else "")
            raise FormatError(f"document has no {key!r} key (keys: {sorted(obj)}){hint}", path,
                              lineno)
    doc_id, text = obj["id"], obj["text"]
    if not (isinstance(doc_id, str) or _is_int(doc_id)) or doc_id == "":
        raise FormatError(f"id {doc_id!r} is not a non-empty string", path, lineno)
    if not isinstance(text, str):
        raise FormatError(f"text of document {doc_id!r} is not a string", path, lineno)
    raw_entities = obj.get("entities")
    if raw_entities is None:
        raw_entities = []
    if not isinstance(raw_entities, list):
        raise FormatError(f"entities of document {doc_id!r} is not a list", path, lineno)
    entities = [_parse_entity(raw, i, text, path, lineno) for i, raw in enumerate(raw_entities)]
    entities.sort(key=lambda link: (link.start, link.end))
    metadata = {key: value for key, value in obj.items() if key not in _RESERVED}
    return Document(str(doc_id), text, tuple(entities), metadata)


def iter_jsonl(path: str | Path) -> Iterator[Document]:
    """Stream the documents of a JSON Lines file (optionally ``.gz``); blank lines are skipped.

    Args:
        path: JSONL file, or ``-`` for the standard input.

    Yields:
        Documents with entities sorted by offsets.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: Naming the file, line and bad value, for invalid JSON, a missing ``id`` or
            ``text``, a repeated id, non-integer, empty or out-of-text offsets, or an entity text
            that differs from the document text.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            obj = _DECODER.decode(line)
        except NotJsonError as exc:
            raise FormatError(str(exc), path, lineno) from None
        except json.JSONDecodeError as exc:
            hint = " (the standard input is read as JSONL)" if is_stdin(path) else ""
            if line.strip() in ("{", "["):
                hint += ("; one JSON value over several lines is not JSON Lines (BioC JSON: "
                         "--from biocjson, or the extension .bioc.json)")
            raise FormatError(f"invalid JSON: {exc}{hint}", path, lineno) from None
        except RecursionError:
            raise FormatError("invalid JSON: arrays or objects nested too deeply", path,
                              lineno) from None
        if _SURROGATE_ESCAPE.search(line):
            found = lone_surrogate(obj, "the line")
            if found is not None:
                raise FormatError(f"{found}: not Unicode text", path, lineno)
        doc = _parse_document(obj, path, lineno)
        if doc.id in seen:
            raise FormatError(
                f"document id {doc.id!r} already used on line {seen[doc.id]}", path, lineno
            )
        seen[doc.id] = lineno
        yield doc
    if not seen:
        logger.warning("%s holds no document: it is empty or blank", path)


def read_jsonl(path: str | Path) -> list[Document]:
    """Read all documents of a JSON Lines file; see :func:`iter_jsonl`."""
    docs = list(iter_jsonl(path))
    logger.info("read %d documents from %s", len(docs), path)
    return docs


def entity_to_dict(link: Link) -> dict[str, Any]:
    """The JSON object of one entity, as in the JSONL output (``null`` fields left out)."""
    entity: dict[str, Any] = {"start": link.start, "end": link.end, "text": link.text}
    if link.type is not None:
        entity["type"] = link.type
    if link.concept_ids:
        entity["concept_id"] = "|".join(link.concept_ids)
    if link.score is not None:
        entity["score"] = link.score
    if link.id_kind is not None and link.concept_ids:
        entity["id_kind"] = link.id_kind
    for key in FOUND_FIELDS:
        value = getattr(link, key)
        if value is not None:
            entity[key] = value
    if link.alternatives:
        entity["alternatives"] = [{"concept_id": c, "score": score, "similarity": sim}
                                  for c, score, sim in link.alternatives]
    return entity


def document_to_dict(doc: Document) -> dict[str, Any]:
    """The JSON object of one document, keys in the order ``id``, metadata, ``text``, ``entities``.

    Args:
        doc: Document to convert.

    Returns:
        A JSON-serialisable dict when the metadata is.

    Raises:
        ValueError: When a metadata key is ``id``, ``text`` or ``entities``.
    """
    clash = [key for key in _RESERVED if key in doc.metadata]
    if clash:
        raise ValueError(f"document {doc.id!r}: metadata keys {clash} clash with the JSONL keys")
    metadata: Mapping[str, Any] = doc.metadata
    return {
        "id": doc.id,
        **metadata,
        "text": doc.text,
        "entities": [entity_to_dict(link) for link in doc.entities],
    }


def write_jsonl(path: str | Path, docs: Iterable[Document]) -> None:
    """Write documents as JSON Lines (gzip-compressed when ``path`` ends with ``.gz``).

    Args:
        path: File to create or replace atomically.
        docs: Documents to write; metadata values must be JSON-serialisable.

    Raises:
        ValueError: When an entity does not match the text or a metadata key clashes.
        FormatError: Naming the document, for a concept id that would not read back as itself
            (see :func:`xlnel.io.concept_ids.check_concept_ids`).
        TypeError: When a metadata value cannot be written as JSON.
    """
    count = write_corpus(path, docs, jsonl_text)
    logger.info("wrote %d documents to %s", count, path)


def jsonl_text(docs: Iterable[Document]) -> Iterator[str]:
    """The JSON lines of ``docs``, one a document (see :func:`write_jsonl`).

    Documents are read one at a time, as the lines are taken, so the text can be streamed.

    Raises:
        ValueError, TypeError: As :func:`write_jsonl`.
    """
    for doc in docs:
        check_entities(doc)
        for link in doc.entities:
            check_concept_ids(doc.id, link, one_line=False)
        obj = document_to_dict(doc)
        try:
            # allow_nan=False: NaN and Infinity are not JSON, and other tools refuse them
            line = json.dumps(obj, ensure_ascii=False, allow_nan=False)
        except ValueError as exc:
            raise ValueError(f"document {doc.id!r}: {exc} (in its metadata)") from exc
        yield line + "\n"
