from __future__ import annotations

import pytest

from xlnel.config import dump_config, load_config, parse_overrides
from xlnel.errors import ConfigError


def test_defaults_follow_the_paper():
    c = load_config()
    assert (c.candidates.max_words, c.candidates.top_m, c.candidates.threshold) == (3, 50, 0.4)
    assert c.dft.R == 0.2


def test_yaml_and_dotted_overrides(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("lang: he\ncandidates:\n  threshold: 0.5\n", encoding="utf-8")
    c = load_config(p, parse_overrides(["candidates.top_m=10", "dft.R=0"]))
    assert (c.lang, c.candidates.threshold, c.candidates.top_m, c.dft.R) == ("he", 0.5, 10, 0.0)
    assert load_config(None, {}).model_dump() != c.model_dump()
    assert "top_m: 10" in dump_config(c)


@pytest.mark.parametrize("override,match", [
    ({"dft.R": 1.5}, "dft.R"), ({"candidates.nope": 1}, "candidates.nope"),
    ({"lang": "h e"}, "lang"), ({"candidates.threshold": "high"}, "threshold")])
def test_invalid_values_name_the_key(override, match):
    with pytest.raises(ConfigError, match=match):
        load_config(None, override)


def test_bad_files_and_override_syntax(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.yaml"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)
    with pytest.raises(ConfigError, match="key.path=value"):
        parse_overrides(["novalue"])


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_include_lays_the_config_over_its_files_in_order(tmp_path):
    _write(tmp_path / "data" / "corpus.yaml",
           "lang: he\ndata: {train: a.jsonl, test_fraction: 0.2}\ndictionary: {kb: [x, y]}\n")
    _write(tmp_path / "p" / "base.yaml", "candidates: {top_m: 10, threshold: 0.3}\n")
    _write(tmp_path / "p" / "variant.yaml",
           "include: base.yaml\ncandidates: {threshold: 0.5}\ndictionary: {kb: [z]}\n")
    top = _write(tmp_path / "top.yaml",
                 "include: [data/corpus.yaml, p/variant.yaml]\ndft: {R: 0.1}\n")
    c = load_config(top, {"candidates.top_m": 7})
    assert (c.lang, c.data.train, c.data.test_fraction) == ("he", "a.jsonl", 0.2)
    assert (c.candidates.top_m, c.candidates.threshold) == (7, 0.5)  # override > file > base
    assert c.dictionary.kb == ["z"] and c.dft.R == 0.1  # lists are replaced, not joined


def test_include_override_adds_a_corpus_under_the_config(tmp_path, monkeypatch):
    _write(tmp_path / "corpus.yaml", "lang: he\ndata: {train: a.jsonl}\ncandidates: {top_m: 9}\n")
    _write(tmp_path / "cfg" / "base.yaml", "candidates: {threshold: 0.3}\n")
    pipeline = _write(tmp_path / "cfg" / "pipe.yaml",
                      "include: base.yaml\ncandidates: {top_m: 5}\n")
    monkeypatch.chdir(tmp_path)  # a command-line include is relative to the working directory
    c = load_config(pipeline, parse_overrides(["include=corpus.yaml"]))
    assert (c.lang, c.data.train) == ("he", "a.jsonl")
    assert (c.candidates.top_m, c.candidates.threshold) == (5, 0.3)
    assert load_config(None, {"include": ["corpus.yaml"]}).candidates.top_m == 9


def test_bad_includes_are_named(tmp_path):
    missing = _write(tmp_path / "m.yaml", "include: nope.yaml\n")
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_config(missing)
    _write(tmp_path / "a.yaml", "include: b.yaml\n")
    _write(tmp_path / "b.yaml", "include: a.yaml\n")
    with pytest.raises(ConfigError, match="include each other"):
        load_config(tmp_path / "a.yaml")
    wrong = _write(tmp_path / "w.yaml", "include: {a: 1}\n")
    with pytest.raises(ConfigError, match="w.yaml: include must be a path or a list"):
        load_config(wrong)
    _write(tmp_path / "l.yaml", "- 1\n")
    with pytest.raises(ConfigError, match="l.yaml: the top level must be a mapping"):
        load_config(_write(tmp_path / "c.yaml", "include: l.yaml\n"))


@pytest.mark.parametrize("override, match", [
    ("candidates.max_words=true", r"candidates\.max_words: .*valid integer.*\(got True\)"),
    ("dft.R=yes", r"dft\.R: .*not the boolean True"),
    ("linker.window_chars=2.5", r"linker\.window_chars: .*valid integer"),
    ("data.fold=3", r"data\.fold \(3\) .*set data\.folds"),
])
def test_booleans_are_not_numbers_and_a_fold_needs_folds(override, match):
    with pytest.raises(ConfigError, match=match):
        load_config(None, parse_overrides([override]))


def test_numbers_keep_their_yaml_forms(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("dft:\n  R: 1\ncandidates:\n  threshold: 2e-1\n  max_words: 4\n",
                 encoding="utf-8")
    c = load_config(p)
    assert (c.dft.R, c.candidates.threshold, c.candidates.max_words) == (1.0, 0.2, 4)


def test_an_unquoted_no_as_lang_says_to_quote_it(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("lang: no\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r'quote the code \(lang: "no"\)'):
        load_config(p)
    p.write_text('lang: "no"\n', encoding="utf-8")
    assert load_config(p).lang == "no"


@pytest.mark.parametrize("override", [
    "data.max_documents=true", "data.subset_seed=yes", "data.folds=true",
    "candidates.chunk_size=true", "candidates.generated_fallback=yes",
    "candidates.generated_min_score=on", "candidates.generated_min_chars=true",
    "filter.threshold=yes", "linker.lexicon_rate=true"])
def test_optional_numbers_refuse_booleans(override):
    key = override.partition("=")[0]
    with pytest.raises(ConfigError, match=rf"{key}: .*(valid integer|not the boolean).*"
                                          r"\(got True\)"):
        load_config(None, parse_overrides([override]))


@pytest.mark.parametrize("override, match", [
    ("filter.threshold=1.5", r"filter\.threshold: .*less than or equal to 1 \(got 1\.5\)"),
    ("filter.threshold=-0.1", r"filter\.threshold: .*greater than or equal to 0"),
    ("candidates.ngram_min=4", r"candidates\.ngram_min \(4\) must not exceed "
                               r"candidates\.ngram_max \(3\)"),
])
def test_threshold_and_ngram_ranges(override, match):
    with pytest.raises(ConfigError, match=match):
        load_config(None, parse_overrides([override]))
    assert load_config(None, {"filter.threshold": 0.0}).filter.threshold == 0.0


def _stage_parsers():
    from xlnel.filtering.cross_encoder_options import parse_options as cross_encoder
    from xlnel.linkers.align import parse_align_options
    from xlnel.linkers.dense import parse_dense_options
    from xlnel.ner.crf import parse_options as crf_tagger

    return {"filter": cross_encoder, "candidates": parse_dense_options, "ner": crf_tagger,
            "": parse_align_options}


@pytest.mark.parametrize("section, key, value, allowed", [
    ("filter", "epochs", True, "valid integer"),
    ("filter", "epochs", -1, "greater than or equal to 1"),
    ("filter", "batch_size", 0, "greater than or equal to 1"),
    ("filter", "lr", 0, "greater than 0"),
    ("filter", "neg_ratio", True, "not the boolean"),
    ("filter", "top_k_per_span", True, "valid integer"),
    ("filter", "train_layers", True, "valid integer"),
    ("filter", "prefilter_recall", 1.5, "less than or equal to 1"),
    ("filter", "dev_fraction", 1.0, "less than 1"),
    ("filter", "seed", -1, "greater than or equal to 0"),
    ("filter", "window", -1, "greater than or equal to 0"),
    ("ner", "epochs", True, "valid integer"),
    ("ner", "head_lr", True, "not the boolean"),
    ("ner", "dropout", 1.0, "less than 1"),
    ("ner", "seed", 2**32, "less than 4294967296"),
    ("ner", "inference_batch_size", 0, "greater than or equal to 1"),
    ("candidates", "batch_size", True, "valid integer"),
    ("candidates", "M", 1, "greater than or equal to 2"),
    ("candidates", "nprobe", 0, "greater than or equal to 1"),
    ("candidates", "max_length", True, "valid integer"),
    ("candidates", "switch_threshold", True, "not the boolean"),
    ("candidates", "switch_threshold", 1.5, "less than or equal to 1"),
    ("", "max_steps", True, "valid integer"),
    ("", "epochs", 0, "greater than or equal to 1"),
    ("", "seed", -1, "greater than or equal to 0"),
    ("", "base", True, "not the boolean"),
    ("filter", "lr", float("inf"), "finite number"),
    ("ner", "weight_decay", float("inf"), "finite number"),
    ("", "base", float("nan"), "finite number"),
])
def test_stage_options_refuse_booleans_and_values_out_of_range(section, key, value, allowed):
    where = f"{section}.options.{key}" if section else key
    with pytest.raises(ConfigError, match=rf"{where}: .*{allowed}.* \(got {value!r}\)"):
        _stage_parsers()[section]({key: value})


def test_translator_settings_refuse_booleans():
    from pydantic import ValidationError

    from xlnel.dictionary.translator import TranslatorConfig

    for key in ("epochs", "lr", "seed", "max_train_seconds"):
        with pytest.raises(ValidationError, match=key):
            TranslatorConfig(**{key: True})


def test_loading_leaves_the_callers_override_mappings_untouched(tmp_path):
    """A mapping given as an override is copied: keys a later override sets inside it do not
    leak into the caller's dict, which may serve other loads (an experiment's cells)."""
    options = {"folds": 2}
    config = load_config(None, {"filter.name": "xlnel.gbdt.v1", "filter.options": options,
                                "filter.options.max_iter": 5})
    assert config.filter.options == {"folds": 2, "max_iter": 5}
    assert options == {"folds": 2}
