"""Config overrides on the command line: ``--set key=value`` and ``--key value`` together."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from xlnel.cli import config_overrides
from xlnel.cli.main import app
from xlnel.errors import ConfigError


def test_both_forms_give_dotted_keys() -> None:
    got = config_overrides(["dft.R=0.1"], ["--filter.options.epochs", "2",
                                           "--linker.overlap=score"])
    assert got == {"dft.R": 0.1, "filter.options.epochs": 2, "linker.overlap": "score"}


def test_a_key_given_in_both_forms_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"override 'dft\.R' is given twice \('dft\.R=0\.1' "
                                          r"and 'dft\.R=0\.2'\)"):
        config_overrides(["dft.R=0.1"], ["--dft.R", "0.2"])
    with pytest.raises(typer.BadParameter, match="--dft.R needs a value"):
        config_overrides([], ["--dft.R"])


@pytest.mark.parametrize("extra, match", [
    (["--dft.R", "0.1", "--set", "dft.R=0.2"], "given twice"),
    (["--candidates.top_n", "5"], "did you mean 'top_m'"),
    (["--data.max_documents", "yes"], r"data\.max_documents: .*valid integer"),
    (["--filter.threshold", "[0.3"], "not valid YAML"),
])
def test_train_refuses_bad_overrides_before_any_work(tmp_path, tiny_config, extra, match):
    out = tmp_path / "pipe"
    r = CliRunner().invoke(app, ["train", str(tiny_config), "--out", str(out), *extra])
    assert r.exit_code != 0 and isinstance(r.exception, ConfigError)
    assert re.search(match, str(r.exception)), str(r.exception)
    assert not out.exists()
