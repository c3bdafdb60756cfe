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
