"""Long documents linked in windows: the same links as whole-document linking."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SENTENCES
from xlnel.linkers.windows import plan_windows
from xlnel.pipeline import Pipeline
from xlnel.types import Document


def long_text(n: int) -> str:
    """Fixture sentences in paragraphs of three, ``n`` sentences in all."""
    parts = []
    for i in range(n):
        parts.append(SENTENCES[(i * 5) % len(SENTENCES)][0])
        parts.append("\n\n" if i % 3 == 2 else " ")
    return "".join(parts)


@pytest.mark.parametrize("size,overlap", [(300, 100), (1000, 60), (157, 80)])
def test_windows_give_the_links_of_the_whole_document(pipe_dir: Path, size: int,
                                                      overlap: int) -> None:
    doc = Document("long", long_text(60))
    whole = Pipeline.load(pipe_dir).link_batch([doc])[0]
    windowed_pipe = Pipeline.load(pipe_dir, {"linker.window_chars": size,
                                             "linker.window_overlap": overlap})
    windowed = windowed_pipe.link_batch([Document("short", "She has diabetes."), doc])
    assert len(plan_windows(doc.text, size, overlap)) > 1
    assert whole.entities  # the comparison is not vacuous
    assert windowed[1].entities == whole.entities
    assert windowed[1].id == "long" and windowed[1].text == doc.text
    for link in windowed[1].entities:
        assert doc.text[link.start:link.end] == link.text
    assert windowed_pipe.link_batch([doc])[0].entities == whole.entities  # long ones only


def test_short_documents_are_one_window() -> None:
    assert plan_windows("abc", 3, 10) == [plan_windows("abc", 100, 0)[0]]


@settings(max_examples=50, deadline=None)
@given(st.text(st.sampled_from("ab .\n"), max_size=400), st.integers(1, 60),
       st.integers(0, 30))
def test_owned_parts_tile_the_text(text: str, size: int, overlap: int) -> None:
    windows = plan_windows(text, size, overlap)
    assert windows[0].own_start == 0 and windows[-1].own_end == len(text)
    for a, b in zip(windows, windows[1:], strict=False):
        assert a.own_end == b.own_start
    for w in windows:
        assert 0 < w.own_end - w.own_start <= size or len(text) == 0
        assert w.start == max(0, w.own_start - overlap)
        assert w.end == min(len(text), w.own_end + overlap)


def test_cuts_prefer_paragraphs() -> None:
    text = "a b c. d e f.\n\ng h i. j k l."
    windows = plan_windows(text, 20, 0)
    assert text[windows[0].own_start:windows[0].own_end] == "a b c. d e f.\n\n"


def test_bad_sizes_raise() -> None:
    with pytest.raises(ValueError, match="window size"):
        plan_windows("abc", 0, 1)
