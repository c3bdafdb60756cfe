"""cli stage: the ``xlnel`` command line (Typer apps)."""

from __future__ import annotations

import typer

__all__ = ["command_group"]


def command_group(help: str) -> typer.Typer:  # noqa: A002 (Typer's own argument name)
    """A Typer app (the main one or a subcommand group) configured as every xlnel command is.

    Help texts are printed as written, not read as Rich markup: markup would swallow the
    square brackets they use for optional parts and extras (``[x fold]``,
    ``pip install 'xlnel[serve]'``). Errors are reported by xlnel's own handlers, not by
    Typer's pretty tracebacks, and no shell-completion options are added.
    """
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None,
                       pretty_exceptions_enable=False, add_completion=False)
