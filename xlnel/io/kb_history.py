"""Retired concept ids of a knowledge base, and the ids that replace them.

Ontologies retire ids. HPO merges terms (the merged term's id stays on the kept one as an
``alt_id``) and obsoletes others, naming the term to use instead with ``replaced_by``. A gold
file written against an older release (the official HPO translations, an annotated corpus)
still carries those ids. No current concept has them, so every system is wrong on them whatever
it predicts. :func:`kb_id_history` reads that history from an OBO knowledge base and
:func:`resolve_ids` maps gold ids to the current ones, as the ontology itself says to.

An obsolete term with no ``replaced_by`` (only ``consider`` suggestions), or with several, keeps
its id: the ontology names no single successor. UMLS keeps its concept history in ``MRCUI.RRF``:
a CUI merged into another (``SY``) maps to it; deleted CUIs and those mapped to a broader,
narrower or other concept keep their ids. Other formats (TSV, names lists) carry no history;
their map is empty.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from xlnel.io.kb import _iter_obo_terms, _parse_spec, hpo_default_path
from xlnel.io.umls import read_mrcui, sibling_mrcui
from xlnel.types import Document

logger = logging.getLogger(__name__)

__all__ = ["kb_id_history", "kb_ids_history", "read_obo_id_history", "resolve_documents",
           "resolve_ids"]


def read_obo_id_history(path: str | Path) -> dict[str, str]:
    """Retired id -> current id of an OBO file: every ``alt_id`` of a live term, and every
    obsolete term with exactly one ``replaced_by``, followed until a live term.

    Raises:
        FileNotFoundError: When ``path`` does not exist.
        FormatError: On a malformed stanza (see :func:`xlnel.io.kb.read_obo`).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"knowledge-base file not found: {path}")
    terms = [t for t in _iter_obo_terms(path, frozenset()) if t.id]
    live = {t.id for t in terms if not t.obsolete}
    step: dict[str, str] = {}
    for term in terms:
        if not term.obsolete:
            step.update((alt, term.id) for alt in term.alt_ids if alt not in live)
        elif len(term.replaced_by) == 1:
            step[term.id] = term.replaced_by[0]
    history: dict[str, str] = {}
    for old in step:
        current, seen = old, {old}
        # a term obsoleted in favour of one obsoleted later: follow the chain, never a cycle
        while current in step and step[current] not in seen:
            current = step[current]
            seen.add(current)
        if current in live:
            history[old] = current
    logger.info("%s: %d retired ids with a current one", path, len(history))
    return history


def kb_id_history(spec: str | Path) -> dict[str, str]:
    """Retired id -> current id of a knowledge-base spec (see :func:`xlnel.io.load_kb`):
    the OBO history of ``hpo`` and ``obo:`` specs, the merged CUIs of the ``MRCUI.RRF`` beside
    an MRCONSO file (:func:`xlnel.io.umls.read_mrcui`), empty for other formats (``hpo-umls``
    included: hp.obo keeps no history of its CUIs).

    Raises:
        FileNotFoundError: When the spec's file does not exist.
        ValueError: When the spec's format cannot be told.
    """
    fmt, path, _ = _parse_spec(str(spec))
    if fmt == "hpo":
        return read_obo_id_history(hpo_default_path())
    if path is None or fmt not in ("obo", "mrconso"):
        return {}  # a format without a history, whether or not its file is here
    if not path.is_file():
        raise FileNotFoundError(f"knowledge-base file not found: {path}")
    if fmt == "obo":
        return read_obo_id_history(path)
    mrcui = sibling_mrcui(path)
    if mrcui is None:
        # most UMLS subsets leave MRCUI out; that is no fault of the user's
        logger.info("no MRCUI.RRF beside %s: its retired CUIs are not mapped", path)
        return {}
    return read_mrcui(mrcui)


def kb_ids_history(specs: Iterable[str | Path], missing_ok: bool = False) -> dict[str, str]:
    """Retired id -> current id over several knowledge-base specs (the first naming an id wins).

    Args:
        specs: Knowledge-base specs (see :func:`kb_id_history`).
        missing_ok: Skip, with a warning, a spec whose file is gone (a pipeline served on
            another machine than it was trained on) instead of raising.

    Raises:
        FileNotFoundError: When a spec's file does not exist and not ``missing_ok``.
    """
    history: dict[str, str] = {}
    for spec in specs:
        try:
            found = kb_id_history(spec)
        except FileNotFoundError as exc:
            if not missing_ok:
                raise
            logger.warning("no id history of %s: %s", spec, exc)
            continue
        for old, new in found.items():
            history.setdefault(old, new)
    return history


def resolve_ids(ids: Iterable[str], history: Mapping[str, str]) -> tuple[str, ...]:
    """``ids`` with each retired id replaced by its current one, in order, without repeats."""
    return tuple(dict.fromkeys(history.get(i, i) for i in ids))


def resolve_documents(documents: Sequence[Document], history: Mapping[str, str]
                      ) -> tuple[list[Document], int]:
    """The documents with their entities' retired ids replaced (:func:`resolve_ids`), and how
    many ids changed."""
    changed = 0
    out = []
    for doc in documents:
        entities = []
        for link in doc.entities:
            ids = resolve_ids(link.concept_ids, history)
            if ids != link.concept_ids:
                changed += sum(cid in history for cid in link.concept_ids)
                link = replace(link, concept_ids=ids)
            entities.append(link)
        out.append(replace(doc, entities=tuple(entities)))
    return out, changed
