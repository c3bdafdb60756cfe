"""Slow tests: the glued letters learned from real corpora in ``../shared/data``."""

from __future__ import annotations

import pytest

from tests.shared_data import shared_file
from xlnel.dictionary.corpus_evidence import CorpusEvidence, attached_letters, corpus_texts
from xlnel.dictionary.langdata import load_profile
from xlnel.dictionary.lexicon import Lexicon

pytestmark = pytest.mark.slow


def test_hebrew_posts_give_the_seven_letters_of_the_hebrew_file() -> None:
    posts = [shared_file(f"camoni/{c}.jsonl") for c in ("diabetes", "sclerosis", "depression")]
    lexicon = Lexicon.from_file(shared_file("muse/en-he.txt"))
    targets = [s.text for _, senses in lexicon.items() for s in senses]
    shares = CorpusEvidence(corpus_texts(posts)).letter_shares(targets)
    assert set(attached_letters(shares)) == set(load_profile("he").prefixes)


def test_english_abstracts_give_no_letter() -> None:
    abstracts = shared_file("bc5cdr/train.pubtator")
    lexicon = Lexicon.from_file(shared_file("muse/en-fr.txt"))
    shares = CorpusEvidence(corpus_texts([abstracts])).letter_shares(w for w, _ in lexicon.items())
    assert shares and attached_letters(shares) == {}
