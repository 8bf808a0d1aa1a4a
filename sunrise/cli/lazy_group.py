"""A click group whose feature commands are imported only when they run.

``sunrise --help`` (and ``sunrise ask``, ``sunrise worker``...) must not pay for the
libraries of the commands it is not running: importing ``datasets``, ``report`` and
``eval`` pulls in httpx, rich, SQLAlchemy, the Anthropic SDK and more, seconds of
start-up on a busy host. So each is named here with the module that defines it and the
one line ``--help`` shows for it; the module is imported when the command is resolved
to run (or to show its own help). ``tests/cli/test_cli_startup.py`` checks that each
line matches the command's own.
"""
from __future__ import annotations

import importlib
from typing import NamedTuple

import click


class LazyCommand(NamedTuple):
    target: str  # "package.module:attribute"
    short_help: str  # what ``--help`` lists beside the name, before the import

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


class LazyGroup(click.Group):
    """A ``click.Group`` that also holds ``lazy_commands`` (name -> ``LazyCommand``)."""

    def __init__(self, *args, lazy_commands: dict[str, LazyCommand] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, importing its module on first use."""
        lazy = self.lazy_commands.pop(cmd_name, None)
        if lazy is not None:
            self.add_command(lazy.load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of ``--help``, with the stated line of each command not
        imported yet (as ``click.Group`` does it otherwise)."""
        rows = []
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names), default=0)
        for name in names:
            lazy = self.lazy_commands.get(name)
            if lazy is not None:
                # Shortened as click shortens a command's own help.
                stand_in = click.Command(name, help=lazy.short_help)
                rows.append((name, stand_in.get_short_help_str(limit)))
                continue
            cmd = super().get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
