"""Long documents linked in windows: the same links as whole-document linking."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SENTENCES
from xlnel.linkers.windows import Window, owned_candidates, plan_windows
from xlnel.pipeline import Pipeline
from xlnel.types import Candidate, Document, Span


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


def _cand(start: int, end: int, text: str, cid: str = "C1") -> Candidate:
    return Candidate(Span(start, end, text), cid, text, 0.9)


def test_owned_candidates_are_each_windows_own_spans_in_document_offsets() -> None:
    """Text "aa bb cc dd" in two windows owning [0, 6) and [6, 11), each reaching 3 characters
    beyond: window 0 reads [0, 9) and window 1 [3, 11). "bb" (3-5) is in both windows but owned
    by window 0 only; "cc" (6-8) likewise by window 1; offsets come back in the whole text."""
    windows = [Window(0, 9, 0, 6), Window(3, 11, 6, 11)]
    first = [_cand(0, 2, "aa"), _cand(3, 5, "bb"), _cand(6, 8, "cc")]
    second = [_cand(0, 2, "bb"), _cand(3, 5, "cc"), _cand(6, 8, "dd", "C2")]  # window offsets
    got = owned_candidates(windows, [first, second])
    assert [(c.span.start, c.span.end, c.span.text, c.concept_id) for c in got] == [
        (0, 2, "aa", "C1"), (3, 5, "bb", "C1"), (6, 8, "cc", "C1"), (9, 11, "dd", "C2")]
    assert owned_candidates(windows, [[], []]) == []
