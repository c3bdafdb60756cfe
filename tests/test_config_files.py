"""Config files and overrides as read before validation: no setting is silently dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

import xlnel.training.steps as steps
from xlnel.config import load_config
from xlnel.config_files import parse_overrides, yaml_value
from xlnel.errors import ConfigError


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, match", [
    ("lang: en\ncandidates:\n  top_m: 5\n  threshold: 0.3\n  top_m: 7\n",
     r"c\.yaml, line 5: the key 'top_m' is given twice \(first on line 3\)"),
    ("candidates: {top_m: 5, top_m: 7}\n", r"line 1: the key 'top_m' is given twice"),
    ("lang: en\nlang: he\n", r"line 2: the key 'lang' is given twice"),
])
def test_a_key_given_twice_in_a_file_is_refused(tmp_path, text, match):
    with pytest.raises(ConfigError, match=match):
        load_config(_write(tmp_path / "c.yaml", text))


def test_a_key_given_twice_in_an_included_file_is_refused(tmp_path):
    _write(tmp_path / "corpus.yaml", "data:\n  train: a.jsonl\n  train: b.jsonl\n")
    top = _write(tmp_path / "top.yaml", "include: corpus.yaml\n")
    with pytest.raises(ConfigError, match=r"corpus\.yaml, line 3: the key 'train'"):
        load_config(top)


def test_merge_keys_may_be_overridden():
    assert yaml_value("a: &x {k: 1, j: 2}\nb:\n  <<: *x\n  k: 3\n")["b"] == {"k": 3, "j": 2}


@pytest.mark.parametrize("text", ["", "# all commented out\n", "---\n"])
def test_an_empty_file_is_refused(tmp_path, text):
    with pytest.raises(ConfigError, match=r"c\.yaml: the file holds no settings; write \{\}"):
        load_config(_write(tmp_path / "c.yaml", text))
    assert load_config(_write(tmp_path / "d.yaml", "{}\n")) == load_config()


def test_a_list_file_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"c\.yaml: the top level must be a mapping, got list"):
        load_config(_write(tmp_path / "c.yaml", "- lang: en\n"))


@pytest.mark.parametrize("overrides, match", [
    (["candidates.top_n=5"], r"candidates\.top_n: unknown key \(allowed: generator, .*top_m.*"
                             r"\); did you mean 'top_m'\?"),
    (["linker.overlp=score"], r"linker\.overlp: unknown key .*did you mean 'overlap'"),
    (["nope.x=1"], r"nope: unknown key \(allowed: lang, seed, data, dictionary, dft, ner, "
                   r"candidates, filter, linker\)"),
    (["dft.R=0.1", "dft.R=0.2"], r"override 'dft\.R' is given twice \('dft\.R=0\.1' and "
                                 r"'dft\.R=0\.2'\)"),
    (["dft..R=1"], r"override 'dft\.\.R=1': the key 'dft\.\.R' has an empty part"),
    ([".R=1"], r"has an empty part"),
    (["candidates.threshold=[0.3"], r"override 'candidates\.threshold=\[0\.3': the value is "
                                    "not valid YAML"),
    (["filter.options={folds: 2, folds: 3}"], r"override 'filter\.options=.*not valid YAML.*"
                                              "'folds' is given twice"),
    (["lang.x=1"], r"lang: Input should be a valid string \(got \{'x': 1\}\)"),
    (["dictionary.kb.0=x"], r"dictionary\.kb: Input should be a valid list"),
    (["dictionary.kb=tsv:kb.tsv"], r"dictionary\.kb: Input should be a valid list "
                                   r"\(got 'tsv:kb\.tsv'\)"),
    (["candidates.top_m=ten"], r"candidates\.top_m: Input should be a valid integer "
                               r"\(got 'ten'\)"),
    (["candidates.top_m=5.5"], r"candidates\.top_m: Input should be a valid integer"),
    (["lang=123"], r"lang: Input should be a valid string \(got 123\)"),
    (["data.extra_train=[1, 2]"], r"data\.extra_train\.0: Input should be a valid string"),
])
def test_bad_overrides_are_named(overrides, match):
    with pytest.raises(ConfigError, match=match):
        load_config(None, parse_overrides(overrides))


def test_a_whole_section_after_a_key_inside_it_is_refused():
    later = parse_overrides(["filter.options.max_iter=3", "filter.options={folds: 2}"])
    with pytest.raises(ConfigError, match=r"override 'filter\.options' replaces the whole "
                                          r"section after 'filter\.options\.max_iter' set a "
                                          r"key in it, which would be lost"):
        load_config(None, later)
    first = parse_overrides(["filter.options={folds: 2}", "filter.options.max_iter=3"])
    assert load_config(None, first).filter.options == {"folds": 2, "max_iter": 3}


def test_list_overrides_replace_the_list(tmp_path):
    c = _write(tmp_path / "c.yaml", "lang: en\ndictionary:\n  kb: [a.tsv, b.tsv]\n")
    for inside in ("dictionary.kb.0=x", "lang.x=1"):  # a list or a value is not a section
        with pytest.raises(ConfigError, match=rf"cannot set '{inside[:-2]}': '\w+' is not a "
                                              "section"):
            load_config(c, parse_overrides([inside]))
    assert load_config(c, parse_overrides(["dictionary.kb=[x.tsv]"])).dictionary.kb == \
        ["x.tsv"]
    assert load_config(c, parse_overrides(["dictionary.kb=[]"])).dictionary.kb == []


def test_an_empty_section_keeps_its_defaults_and_takes_overrides(tmp_path):
    c = _write(tmp_path / "c.yaml", "lang: en\nlinker:\n  # overlap: score\n")
    assert load_config(c).linker == load_config().linker
    assert load_config(c, parse_overrides(["linker.overlap=score"])).linker.overlap == "score"
    options = _write(tmp_path / "o.yaml", "filter:\n  name: xlnel.gbdt.v1\n  options:\n"
                                          "    # folds: 2\n")
    assert load_config(options).filter.options == {}
    with pytest.raises(ConfigError, match=r"lang: Input should be a valid string \(got None\)"):
        load_config(_write(tmp_path / "d.yaml", "lang:\n"))  # a value is not a section


def test_paths_are_relative_to_the_working_directory(tmp_path, monkeypatch):
    """As docs/configuration.md says: the data paths of a config in another folder are read
    from the working directory, only ``include`` paths from the config's folder."""
    _write(tmp_path / "sub" / "docs.jsonl", '{"id": "d", "text": "x", "entities": []}\n')
    _write(tmp_path / "sub" / "corpus.yaml", "data:\n  train: docs.jsonl\n")
    config = load_config(_write(tmp_path / "sub" / "c.yaml", "include: corpus.yaml\n"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"data\.train: no such file 'docs\.jsonl' \(relative "
                                          rf"paths are read from the working folder {tmp_path}"):
        steps.check_input_files(config)
    monkeypatch.chdir(tmp_path / "sub")
    steps.check_input_files(config)


def test_a_value_set_by_an_override_is_not_blamed_on_the_file(tmp_path):
    c = _write(tmp_path / "c.yaml", "dft: {R: 0.5}\ncandidates: {top_m: 0}\n")
    with pytest.raises(ConfigError) as info:
        load_config(c, parse_overrides(["dft.R=7"]))
    message = str(info.value)
    assert "dft.R: Input should be less than or equal to 1 (got 7) (set by the override " \
        "dft.R)" in message
    assert message.endswith("candidates.top_m: Input should be greater than or equal to 1 "
                            "(got 0)")
