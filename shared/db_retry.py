"""Which database errors are worth retrying, and the two retry policies built on that.

Only a failure that can succeed on a second try is retried:

- a **lock conflict** -- MariaDB chose this transaction as a deadlock victim (1213,
  the whole transaction rolled back) or gave up waiting for a row lock (1205);
  SQLite's "database is locked" is the same thing. Running the unit of work again
  is safe: nothing of it was committed.
- a **lost connection** -- the server went away, restarted or cannot be reached
  (2002, 2003, 2006, 2013, 2055, 1053, 1927, 4031, or a connection SQLAlchemy
  invalidated). Retrying is safe only for writes that are idempotent or guarded,
  which is why only the worker's job writes use it: a request's commit may have
  landed before its acknowledgement was lost.
- a **server refusing connections** -- at its ``max_connections`` (1040) or a user's
  connection limit (1203 for the server's ``max_user_connections``, 1226 for the
  account's own, which also reports its hourly limits). No connection was made, so
  nothing was sent: as safe to retry as a server that cannot be reached, and a
  connection limit passes as others close theirs.

Everything else -- a value too long for its column, a constraint, a syntax error --
fails the same way every time and is raised at once.
"""
from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError
from tenacity import (
    retry,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
    wait_random_exponential,
)

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable)

LOCK_CONFLICT_CODES = frozenset({1213, 1205})
CONNECTION_LOST_CODES = frozenset({2002, 2003, 2006, 2013, 2055, 1053, 1927, 4031})
SERVER_FULL_CODES = frozenset({1040, 1203, 1226})
# A request may wait this many rounds of lock conflicts; the client is still waiting.
REQUEST_ATTEMPTS = 4
REQUEST_RETRY_S = 10.0
# The first wait of retry_transient; each next one doubles, up to its max_wait_s.
_FIRST_WAIT_S = 0.2


def _code(exc: BaseException) -> int | str | None:
    orig = getattr(exc, "orig", None)
    args = getattr(orig, "args", ())
    return args[0] if args else None


def is_lock_conflict(exc: BaseException) -> bool:
    """A deadlock or a lock wait that timed out: the unit of work can run again."""
    if not isinstance(exc, DBAPIError):
        return False
    code = _code(exc)
    if isinstance(code, str):  # SQLite's messages
        return "database is locked" in code or "database table is locked" in code
    return code in LOCK_CONFLICT_CODES


def is_connection_lost(exc: BaseException) -> bool:
    """The server could not be reached or dropped the connection."""
    if not isinstance(exc, DBAPIError):
        return False
    return bool(exc.connection_invalidated) or _code(exc) in CONNECTION_LOST_CODES


def is_server_full(exc: BaseException) -> bool:
    """The server refused a new connection: too many are open (all, or this user's)."""
    return isinstance(exc, DBAPIError) and _code(exc) in SERVER_FULL_CODES


def is_unavailable(exc: BaseException) -> bool:
    """The database cannot be used right now (lost, unreachable or full), as opposed to
    refusing this particular statement: what a client should simply retry later."""
    return is_connection_lost(exc) or is_server_full(exc)


def is_transient(exc: BaseException) -> bool:
    """Any of the above: a write that is safe to repeat may simply try again."""
    return is_lock_conflict(exc) or is_unavailable(exc)


def _log_retry(state) -> None:
    logger.warning("database write %s failed, retrying: %s",
                   getattr(state.fn, "__name__", "?"), state.outcome.exception())


def retry_transient(*, give_up_after_s: float, max_wait_s: float) -> Callable[[F], F]:
    """Retry an idempotent (or guarded) unit of work through lock conflicts and lost
    connections, with exponential backoff up to ``max_wait_s`` apart, for at most
    ``give_up_after_s`` seconds; then, or on any other error, raise it.

    The first run is a plain call, as in ``retry_lock_conflicts``: tenacity's per-call
    setup would be paid on every run, four times per job in the worker. After a
    transient failure it is logged and waited for as tenacity would (0.2 s), and tenacity takes
    over with the same schedule from the second wait on and what is left of the time.
    """
    first_wait_s = min(_FIRST_WAIT_S, max_wait_s)

    def decorate(fn: F) -> F:
        return _plain_first_try(
            fn, worth_retrying=lambda exc, spent_s: is_transient(exc) and spent_s < give_up_after_s,
            pause_s=lambda: first_wait_s,
            then=lambda spent_s: retry(
                retry=retry_if_exception(is_transient),
                wait=wait_exponential(multiplier=2 * _FIRST_WAIT_S, max=max_wait_s),
                stop=stop_after_delay(give_up_after_s - spent_s),
                reraise=True,
                before_sleep=_log_retry,
            )(fn))

    return decorate


def _plain_first_try(fn: F, *, worth_retrying: Callable[[DBAPIError, float], bool],
                     pause_s: Callable[[], float],
                     then: Callable[[float], Callable]) -> F:
    """``fn`` run plainly (tenacity sets up per call: a copy of its policy and a
    thread-local); after a failure ``worth_retrying(error, seconds spent)``, it is
    logged, ``pause_s()`` waited, and ``then(seconds spent)`` -- a tenacity-wrapped
    ``fn`` -- runs it from there on."""

    @functools.wraps(fn)
    def first_try(*args, **kwargs):
        started = time.monotonic()
        try:
            return fn(*args, **kwargs)
        except DBAPIError as exc:
            if not worth_retrying(exc, time.monotonic() - started):
                raise
            logger.warning("database write %s failed, retrying: %s", fn.__name__, exc)
            time.sleep(pause_s())
            return then(time.monotonic() - started)(*args, **kwargs)

    return first_try  # type: ignore[return-value]


# Every transaction of a request that takes row locks (a submit, a cancel, a delete):
# a deadlock or a lock wait timeout is answered by running it again, a few times,
# with jitter so that the two sides of a deadlock do not collide again.
FIRST_RETRY_JITTER_S = 0.05
_again_after_conflict = retry(
    retry=retry_if_exception(is_lock_conflict),
    wait=wait_random_exponential(multiplier=FIRST_RETRY_JITTER_S, max=1.0),
    stop=stop_after_attempt(REQUEST_ATTEMPTS - 1) | stop_after_delay(REQUEST_RETRY_S),
    reraise=True,
    before_sleep=_log_retry,
)


def retry_lock_conflicts(fn: F) -> F:
    """Run ``fn``; after a lock conflict, wait a jittered moment and run it again, up to
    ``REQUEST_ATTEMPTS`` runs in all (the retries within ``REQUEST_RETRY_S``). Any other
    error, or the last conflict, is raised.

    The first run is a plain call: tenacity sets up per call (a copy of its policy, a
    thread-local), which cost a submit more than one of its statements; it takes over
    only once a conflict happened.
    """
    again = _again_after_conflict(fn)
    return _plain_first_try(fn, worth_retrying=lambda exc, _spent_s: is_lock_conflict(exc),
                            pause_s=lambda: random.uniform(0, FIRST_RETRY_JITTER_S),
                            then=lambda _spent_s: again)
