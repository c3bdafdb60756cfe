"""cli stage: the ``xlnel`` command line (Typer apps)."""

from __future__ import annotations

from typing import Any

import typer

__all__ = ["EXTRA_ARGS", "command_group", "config_overrides"]

EXTRA_ARGS: dict[str, Any] = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Context settings of a command that takes ``--key.path value`` overrides
(:func:`config_overrides` reads them from ``ctx.args``)."""


def command_group(help: str) -> typer.Typer:  # noqa: A002 (Typer's own argument name)
    """A Typer app (the main one or a subcommand group) configured as every xlnel command is.

    Help texts are printed as written, not read as Rich markup: markup would swallow the
    square brackets they use for optional parts and extras (``[x fold]``,
    ``pip install 'xlnel[serve]'``). Errors are reported by xlnel's own handlers, not by
    Typer's pretty tracebacks, and no shell-completion options are added.
    """
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None,
                       pretty_exceptions_enable=False, add_completion=False)


def config_overrides(pairs: list[str] | None, extra: list[str]) -> dict[str, Any]:
    """``--set a.b=1`` items plus ``--a.b 1`` / ``--a.b=1`` extra arguments, as dotted keys
    to YAML-parsed values (:func:`xlnel.config.parse_overrides`).

    Raises:
        typer.BadParameter: On an extra argument that is not ``--key.path`` or lacks a value.
    """
    from xlnel.config import parse_overrides

    items = list(pairs or [])
    i = 0
    while i < len(extra):
        arg = extra[i]
        if not arg.startswith("--") or len(arg) == 2:
            raise typer.BadParameter(f"unexpected argument {arg!r}")
        key = arg[2:]
        if "=" in key:
            items.append(key)
            i += 1
        elif i + 1 < len(extra):
            items.append(f"{key}={extra[i + 1]}")
            i += 2
        else:
            raise typer.BadParameter(f"{arg} needs a value")
    return parse_overrides(items)
