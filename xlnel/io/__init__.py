"""Corpus and knowledge-base formats: PubTator, JSON Lines, BioC XML and JSON, BRAT, TSV,
MRCONSO, OBO and lists.

Readers raise :class:`~xlnel.errors.FormatError` naming the file, line and bad value; writers
replace their target atomically, so a failed write never leaves a partial file.
"""

from __future__ import annotations

from xlnel.io._atomic import atomic_path, atomic_write
from xlnel.io.bioc import iter_bioc, read_bioc, write_bioc
from xlnel.io.bioc_json import iter_bioc_json, read_bioc_json, write_bioc_json
from xlnel.io.brat import read_brat, read_brat_document, write_brat
from xlnel.io.concept_ids import format_concept_ids, normalize_concept_id, parse_concept_ids
from xlnel.io.documents import (
    FORMATS,
    format_documents,
    guess_format,
    read_documents,
    write_documents,
)
from xlnel.io.jsonl import document_to_dict, iter_jsonl, read_jsonl, write_jsonl
from xlnel.io.kb import (
    hpo_default_path,
    load_kb,
    read_hpo,
    read_kb_tsv,
    read_mrconso,
    read_mrsty,
    read_names_list,
    read_obo,
    read_term_to_cui,
)
from xlnel.io.pubtator import iter_pubtator, read_pubtator, write_pubtator

__all__ = [
    "FORMATS",
    "atomic_path",
    "atomic_write",
    "document_to_dict",
    "format_concept_ids",
    "format_documents",
    "guess_format",
    "hpo_default_path",
    "iter_bioc",
    "iter_bioc_json",
    "iter_jsonl",
    "iter_pubtator",
    "load_kb",
    "normalize_concept_id",
    "parse_concept_ids",
    "read_bioc",
    "read_bioc_json",
    "read_brat",
    "read_brat_document",
    "read_documents",
    "read_hpo",
    "read_jsonl",
    "read_kb_tsv",
    "read_mrconso",
    "read_mrsty",
    "read_names_list",
    "read_obo",
    "read_pubtator",
    "read_term_to_cui",
    "write_bioc",
    "write_bioc_json",
    "write_brat",
    "write_documents",
    "write_jsonl",
    "write_pubtator",
]
