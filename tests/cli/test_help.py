"""``--help`` of every command prints its text as written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from xlnel.cli.main import app

runner = CliRunner()


@pytest.mark.parametrize(("command", "expected"), [
    (["serve"], "pip install 'xlnel[serve]'"),
    (["experiment"], "Run every grid cell x seed [x fold]"),
])
def test_square_brackets_are_kept(command: list[str], expected: str) -> None:
    # Rich markup would read "[serve]" and "[x fold]" as style tags and drop them
    result = runner.invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert expected in " ".join(result.output.split())


@pytest.mark.parametrize("group", [[], ["dictionary"], ["encoder"], ["models"]])
def test_every_group_lists_its_commands(group: list[str]) -> None:
    result = runner.invoke(app, [*group, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Commands:" in result.output
