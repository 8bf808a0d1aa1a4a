"""A SQL process's end is reported as what it was (issue 33 item 0): under gevent's
monkey-patching (the API's gunicorn workers) its socket pair came out non-blocking, the
child ended at once with exit status 0, and the query was told it needed too much
memory; a process killed from outside is not out of memory either."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import duckdb

from engine.child_process import MEMORY_EXIT, describe_exit, ran_out_of_memory
from engine.sql.sandbox import SqlSandbox

_PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_queries_run_under_gevent_monkey_patching(tmp_path):
    path = tmp_path / "t.duckdb"
    duckdb.connect(str(path)).execute("CREATE TABLE t AS SELECT 1 AS a").close()
    script = textwrap.dedent(f"""
        from gevent import monkey
        monkey.patch_all()
        from engine.sql.sandbox import SqlSandbox
        sandbox = SqlSandbox({str(path)!r}, processes=1)
        for _ in range(3):
            result = sandbox.run("SELECT sum(a) FROM t")
            print(result.error if result.is_error else result.rows)
        sandbox.close()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=_PROJECT_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["[(1,)]"] * 3, done.stdout + done.stderr


def test_a_killed_sql_process_is_reported_as_killed_not_as_memory(tmp_path):
    path = tmp_path / "t.duckdb"
    duckdb.connect(str(path)).execute("CREATE TABLE t AS SELECT 1 AS a").close()
    sandbox = SqlSandbox(path, processes=1, timeout_s=30)
    try:
        (pid,) = sandbox.process_ids()
        # Killed by the operator (or a deploy) in the middle of a slow query.
        threading.Timer(0.5, os.kill, (pid, signal.SIGTERM)).start()
        result = sandbox.run("SELECT count(*) FROM range(100000000000) a")
    finally:
        sandbox.close()
    assert result.is_error
    assert "killed by SIGTERM" in result.error and "memory" not in result.error


def test_ends_are_named():
    assert describe_exit(-signal.SIGABRT) == "killed by SIGABRT"
    assert describe_exit(0) == "exit status 0"
    assert ran_out_of_memory(-signal.SIGKILL) and ran_out_of_memory(MEMORY_EXIT)
    assert not ran_out_of_memory(0) and not ran_out_of_memory(-signal.SIGTERM)
