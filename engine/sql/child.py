"""One SQL process: a ``DuckDbExecutor`` behind a socket, in a process of its own.

Started by ``engine/sql/sandbox.py`` as ``python -m engine.sql.child FD`` where FD is
its end of a socket pair. The protocol is pickled tuples over
``multiprocessing.connection`` (the parent is the only peer and trusts this code):

- first the parent sends the configuration (a dict); the child limits its own
  address space, opens the database and answers ``("ready", pid, temp_dir)`` or
  ``("error", exception type name, message)`` and exits;
  (When the worker dies, its end of the socket closes: an idle child sees the end of
  file at once, a busy one after its query, whose own time limit bounds the wait.)
- then, one at a time: ``("run", sql, budget_s, tag, limit_s)`` -> ``("ok",
  QueryResult)``; ``("schema",)`` -> ``("ok", [...])``; ``("settings",)`` -> ``("ok",
  {...})``; ``("exit",)`` or end of file -> the child removes its temporary
  directory and exits.

An unexpected exception is answered ``("error", type name, message)`` and the child
goes on; one it cannot survive (its memory exhausted outside DuckDB) ends it, and
the parent starts another.
"""
from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from multiprocessing.connection import Connection
from typing import Any

from engine.child_process import MEMORY_EXIT, connect, limit_address_space

logger = logging.getLogger(__name__)

def main(fd: int) -> int:
    conn = connect(fd)
    config = conn.recv()
    limit_address_space(config["address_space_bytes"])
    temp_dir = tempfile.mkdtemp(prefix="sunrise-sql-")
    try:
        from engine.sql.executor import DuckDbExecutor

        executor = DuckDbExecutor(
            config["path"], memory_limit=config["memory_limit"], threads=config["threads"],
            temp_directory=temp_dir, max_temp_size=config["max_temp_size"],
            chart_row_limit=config["chart_row_limit"],
            result_max_bytes=config["result_max_bytes"])
    except Exception as exc:
        conn.send(("error", type(exc).__name__, str(exc)))
        shutil.rmtree(temp_dir, ignore_errors=True)
        return 1
    conn.send(("ready", os.getpid(), temp_dir))
    try:
        _serve(conn, executor)
    finally:
        executor.close()
        shutil.rmtree(temp_dir, ignore_errors=True)
    return 0


def _serve(conn: Connection, executor: Any) -> None:
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return  # the parent closed its end or died
        kind = request[0]
        if kind == "exit":
            return
        try:
            if kind == "run":
                _, sql, budget_s, tag, limit_s = request
                reply: tuple = ("ok", executor.run(sql, budget_s, tag, limit_s))
            elif kind == "schema":
                reply = ("ok", executor.describe_schema())
            elif kind == "settings":
                reply = ("ok", executor.settings())
            else:
                reply = ("error", "ValueError", f"unknown request {kind!r}")
        except MemoryError:
            raise  # nothing here can be trusted any more: end, the parent starts another
        except Exception as exc:
            reply = ("error", type(exc).__name__, str(exc))
        conn.send(reply)


def _main_or_memory_exit(fd: int) -> int:
    try:
        return main(fd)
    except MemoryError:
        return MEMORY_EXIT  # said as such to the parent, which reports it


if __name__ == "__main__":
    sys.exit(_main_or_memory_exit(int(sys.argv[1])))
