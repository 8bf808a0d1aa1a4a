"""Names no other process of the fleet makes, cheaply: a random prefix drawn once per
process (again in a forked child) and a counter.

``uuid.uuid4()`` reads the operating system's entropy on every call, a syscall that
costs as much as a tenth of a small live query; the callers here make a name on every
query or request, and need uniqueness, not unpredictability.
"""
from __future__ import annotations

import itertools
import os
import uuid

_PREFIX: tuple[int, str] = (0, "")
_COUNTER = itertools.count()


def unique_name() -> str:
    """A name unique across processes and hosts (64 random bits per process)."""
    global _PREFIX
    pid = os.getpid()
    if _PREFIX[0] != pid:
        _PREFIX = (pid, uuid.uuid4().hex[:16])
    return f"{_PREFIX[1]}-{next(_COUNTER)}"
