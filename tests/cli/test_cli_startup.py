"""``sunrise`` starts without importing what the command being run does not need.

Structural, not timed: a fresh interpreter runs the command line and reports which
modules it imported; none of the heavy libraries may be among them (they cost seconds
on a busy host). ``bench/cli_startup.py`` measures the time itself.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from sunrise.cli import main as cli_main
from sunrise.cli.lazy_group import LazyGroup

HEAVY = {"duckdb", "pandas", "numpy", "pyarrow", "anthropic", "sqlalchemy", "pymysql",
         "celery", "kombu", "redis", "flask", "werkzeug", "gunicorn", "rich", "httpx",
         "yaml", "openpyxl", "api", "worker", "engine",
         # what reading the settings costs: a command's help never reads them
         "pydantic", "pydantic_settings", "cryptography"}

REPORT_MODULES = """
import json, sys
from sunrise.cli.main import main
code = main(sys.argv[1:], prog_name="sunrise", standalone_mode=False)
sys.stdout.flush()
print(json.dumps(sorted({name.partition(".")[0] for name in sys.modules})), file=sys.stderr)
"""


def _imported_by(*args: str) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", REPORT_MODULES, *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_lists_every_command_without_importing_a_heavy_library():
    shown, imported = _imported_by("--help")
    assert not imported & (HEAVY | {"shared"}), sorted(imported & (HEAVY | {"shared"}))
    for name in ("api", "ask", "datasets", "db", "eval", "keys", "report", "worker"):
        assert f"\n  {name} " in shown, shown
    assert "Your own data" in shown and "Score Sunrise" in shown


@pytest.mark.parametrize("args", [("ask", "--help"), ("worker", "--help"),
                                  ("db", "upgrade", "--help"), ("keys", "create", "--help")])
def test_a_commands_help_imports_nothing_heavy_either(args):
    shown, imported = _imported_by(*args)
    assert "Usage: sunrise" in shown
    assert not imported & HEAVY, sorted(imported & HEAVY)


def test_a_lazy_command_is_imported_when_it_is_asked_for():
    shown, imported = _imported_by("datasets", "--help")
    assert "describe" in shown and "refresh" in shown
    assert {"httpx", "rich"} <= imported  # its own libraries, and only now


def test_the_stated_lines_are_the_commands_own():
    """``--help`` before any lazy command is imported reads exactly as click's own
    listing of the imported commands."""
    main = cli_main.main
    eager = {name: cmd for name, cmd in main.commands.items()
             if name not in cli_main.LAZY_COMMANDS}
    lazy = LazyGroup("sunrise", help=main.help, params=main.params, commands=eager,
                     lazy_commands=cli_main.LAZY_COMMANDS)
    loaded = click.Group("sunrise", help=main.help, params=main.params, commands={
        **eager, **{name: c.load() for name, c in cli_main.LAZY_COMMANDS.items()}})
    for width in (80, 200):
        before = CliRunner().invoke(lazy, ["--help"], terminal_width=width).output
        after = CliRunner().invoke(loaded, ["--help"], terminal_width=width).output
        assert before == after
    assert lazy.lazy_commands.keys() == cli_main.LAZY_COMMANDS.keys(), "nothing loaded yet"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_running_command_still_logs_in_the_format_the_settings_name(tmp_path, fmt):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUNRISE_")}
    env |= {"SUNRISE_LOG_FORMAT": fmt, "SUNRISE_DATABASE_URL": f"sqlite:///{tmp_path}/app.db"}
    done = subprocess.run([sys.executable, "-m", "sunrise.cli.main", "--log-level", "INFO",
                           "db", "upgrade"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "alembic" in line]
    assert lines, done.stderr
    if fmt == "json":
        assert all(json.loads(line)["level"] == "INFO" for line in lines)
    else:
        assert all(" INFO alembic." in line and not line.startswith("{") for line in lines)
