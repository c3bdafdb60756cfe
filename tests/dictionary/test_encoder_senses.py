"""Tests of the encoder fallback: the nearest native pair word of a word the pairs lack."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from xlnel.dictionary.adapt import adapt
from xlnel.dictionary.encoder_senses import (
    native_characters,
    native_targets,
    nearest_targets,
)
from xlnel.dictionary.langdata import LanguageProfile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.render import BuildSettings, WordSenses
from xlnel.errors import ConfigError

KATAKANA = re.compile("^[\u30a0-\u30ff]+$")
# hand-made unit vectors: renal is near 腎臓 (cosine 0.96), posterior near nothing
VECTORS = {"腎臓": (1.0, 0.0, 0.0), "腫瘍": (0.0, 1.0, 0.0), "renal": (0.96, 0.28, 0.0),
           "posterior": (0.6, 0.0, 0.8)}


def embed(texts: Sequence[str]) -> np.ndarray:
    return np.array([VECTORS[t] for t in texts], dtype=np.float32)


def test_native_targets_leave_out_copies_transliterations_and_phrases() -> None:
    lexicon = Lexicon([("kidney", "腎臓"), ("kidney", "キドニー"), ("tumor", "腫瘍"),
                       ("tumor", "tumor"), ("tumor board", "腫瘍 委員会")])
    assert native_targets(lexicon, KATAKANA) == ["腎臓", "腫瘍"]


def test_native_targets_leave_out_words_with_latin_letters() -> None:
    lexicon = Lexicon([("regional", "régional"), ("regional", "地域"), ("x", "x線")])
    assert native_targets(lexicon, KATAKANA) == ["地域"]


def test_native_characters_are_those_of_several_targets() -> None:
    targets = ["骨格", "骨折", "骨髄", "歯科", "ボーン", "x線"]
    assert native_characters(targets, KATAKANA) == ["骨"]
    assert native_characters(targets, KATAKANA, min_targets=1) == sorted("骨格折髄歯科線")


def test_nearest_targets_keep_only_close_words() -> None:
    found = nearest_targets(["renal", "posterior"], ["腎臓", "腫瘍"], embed, min_cosine=0.9)
    assert list(found) == ["renal"]
    assert found["renal"][0] == "腎臓"
    assert found["renal"][1] == np.float32(0.96)
    assert nearest_targets([], ["腎臓"], embed, 0.9) == {}


def test_word_senses_use_the_nearest_target_before_the_copy() -> None:
    senses = WordSenses(Lexicon([("kidney", "腎臓")]), LanguageProfile("zz", joiner=""),
                        keep_copies=False, nearest={"renal": ("腎臓", 0.96)},
                        nearest_prior=0.5)
    found = senses("renal")
    assert [s.text for s in found] == ["腎臓", "renal"]
    assert found[0].prior == 0.5


def test_adapt_needs_an_embedder_for_its_encoder(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("kidney\t腎臓\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="multilingual-e5-small"):
        adapt("ja", pairs, ["hpo"], tmp_path / "out",
              settings=BuildSettings(encoder="multilingual-e5-small"))
