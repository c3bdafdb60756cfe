"""docs/cli.md lists every command of the ``xlnel`` program and every option it takes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from xlnel.cli.main import app

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _commands(command: Any, path: str) -> Iterator[tuple[str, Any]]:
    # Typer builds its commands on its own copy of click: groups are told by their sub-commands.
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in subcommands.items():
            yield from _commands(sub, f"{path} {name}")
    else:
        yield path, command


PROGRAM = typer.main.get_command(app)
COMMANDS = dict(_commands(PROGRAM, "xlnel"))


def _rows(name: str) -> str:
    """The rows of the command table whose usage starts with ``name``."""
    return "\n".join(line for line in DOC.read_text(encoding="utf-8").splitlines()
                     if line.startswith((f"| `{name} ", f"| `{name}`")))


def test_the_program_has_sub_commands() -> None:
    assert {"xlnel link", "xlnel train", "xlnel dictionary coverage"} <= set(COMMANDS)


def _undocumented(command: Any, rows: str) -> list[list[str]]:
    """The options of ``command`` that ``rows`` do not name.

    A flag pair (--ci/--no-ci) counts as documented by either form; hidden options need no row.
    """
    return [param.opts for param in command.params
            if param.param_type_name == "option" and "--help" not in param.opts
            and not getattr(param, "hidden", False)
            and not any(opt in rows for opt in param.opts + param.secondary_opts)]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_and_option_is_in_the_table(name: str) -> None:
    rows = _rows(name)
    assert rows, f"docs/cli.md has no row for {name}"
    assert _undocumented(COMMANDS[name], rows) == []


def test_the_program_options_are_in_the_table() -> None:
    assert _undocumented(PROGRAM, _rows("xlnel")) == []
