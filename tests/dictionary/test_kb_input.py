"""Tests of :mod:`xlnel.dictionary.kb_input`: the knowledge bases the dictionary builders read."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlnel.dictionary.kb_input import load_concepts
from xlnel.errors import FormatError


def test_a_concept_id_with_a_tab_is_refused_naming_file_line_and_id(tmp_path: Path) -> None:
    path = tmp_path / "names.txt"
    path.write_text("heart\nkidney\tfailure\n", encoding="utf-8")  # a names list: ids are names
    with pytest.raises(FormatError, match=r"names\.txt:2: concept id 'kidney\\tfailure' holds "
                                          r"a tab or a line break"):
        load_concepts([f"names:{path}"])


def test_an_obo_id_with_a_tab_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "onto.obo"
    path.write_text("[Term]\nid: HP:1\nname: heart\n\n[Term]\nid: HP:2\tX\nname: kidney\n",
                    encoding="utf-8")
    with pytest.raises(FormatError, match=r"onto\.obo:6: concept id 'HP:2\\tX'"):
        load_concepts([f"obo:{path}"])


def test_a_name_with_a_tab_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "onto.obo"
    path.write_text("[Term]\nid: HP:1\nname: heart\tfailure\n", encoding="utf-8")
    concepts, _ = load_concepts([f"obo:{path}"])
    assert concepts[0].names == ("heart\tfailure",)  # the dictionary writes it with a space
