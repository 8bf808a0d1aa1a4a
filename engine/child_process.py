"""A limited child process on a socket pair: both ends of the worker's helper processes
(the SQL processes, ``engine/sql/process.py``; the import processes,
``worker/datasets/import_process.py``).

The parent starts ``python -m <module> FD`` (a fresh interpreter, never a fork of the
multi-threaded worker) where FD is the child's end of a socket pair; both talk pickled
tuples over ``multiprocessing.connection`` (the parent is the only peer and trusts the
code). The child limits its own address space (``limit_address_space``), so that an
allocation no library bounds fails there and not in the worker.

Both ends are made blocking explicitly: under gevent (the API's gunicorn workers) a
patched ``socket.socketpair()`` gives non-blocking sockets, and a child whose first
``recv`` raised ``BlockingIOError`` ended at once with exit status 0.

How a child ended is said as what it was (``describe_exit``): an exit status, or the
signal that killed it; ``ran_out_of_memory`` says whether that end is a memory one
(the kernel's OOM killer's SIGKILL, Rust's or the C++ runtime's SIGABRT when an
allocation over the limit failed, or ``MEMORY_EXIT``, the status a child exits with
after a ``MemoryError``).
"""
from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path

# The status a child exits with when Python itself ran out of memory (its own choice:
# a traceback's exit status 1 would not say it).
MEMORY_EXIT = 86
_PROJECT_ROOT = Path(__file__).resolve().parent.parent
_MEMORY_SIGNALS = (signal.SIGKILL, signal.SIGABRT)


def start_child(module: str) -> tuple[subprocess.Popen, Connection]:
    """Start ``python -m module FD`` with its end of a new socket pair; returns the
    process and the parent's end. Raises ``OSError`` if it cannot be started."""
    ours, theirs = socket.socketpair()
    try:
        # The flag belongs to the shared open file: the child's end is blocking too.
        os.set_blocking(ours.fileno(), True)
        os.set_blocking(theirs.fileno(), True)
        proc = subprocess.Popen(
            [sys.executable, "-m", module, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, cwd=_PROJECT_ROOT)
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return proc, Connection(ours.detach())


def connect(fd: int) -> Connection:
    """The child's end of the pair it was given (blocking, whatever it inherited)."""
    os.set_blocking(fd, True)
    return Connection(fd)


def limit_address_space(limit: int) -> None:
    """Cap this process's address space at ``limit`` bytes (0: no cap). Library limits
    (DuckDB's ``memory_limit``) cover their own pools, not every allocation: the
    kernel's limit does."""
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def describe_exit(returncode: int | None) -> str:
    """How a child ended, in words: ``exit status 3``, ``killed by SIGABRT``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    if returncode == MEMORY_EXIT:
        return f"exit status {returncode} (out of memory)"
    return f"exit status {returncode}"


def ran_out_of_memory(returncode: int | None) -> bool:
    """Whether a child that ended with ``returncode`` ended for want of memory."""
    if returncode is None:
        return False
    return returncode == MEMORY_EXIT or -returncode in _MEMORY_SIGNALS


def end_child(proc: subprocess.Popen, conn: Connection) -> int | None:
    """Kill ``proc`` if it still runs and close the parent's end; its exit status."""
    if proc.poll() is None:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
    conn.close()
    return proc.returncode
