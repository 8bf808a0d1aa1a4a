"""Whether a model-written statement may run on a live engine: one read-only query.

The statement is parsed by sqlglot in the engine's own dialect (never matched with
regular expressions), and the whole tree is inspected:

- exactly one statement, whose top is a query (``SELECT``, ``WITH ... SELECT``, a set
  operation, ``VALUES``, PostgreSQL's ``TABLE t``); anything sqlglot only keeps as a
  ``Command`` (``EXPLAIN``, ``DO``, ``CALL``, ``SHOW``...) is refused;
- no node anywhere that writes or locks: a data-modifying CTE (``WITH d AS (DELETE ...
  RETURNING *) SELECT ...``, which PostgreSQL runs), ``SELECT ... INTO``, ``FOR
  UPDATE``/``FOR SHARE``/``LOCK IN SHARE MODE``, ``COPY``, ``SET`` and the like;
- MySQL's ``INTO OUTFILE``/``INTO DUMPFILE``, which sqlglot does not parse, are found
  in the token stream and named;
- comments the server would run are refused: MySQL/MariaDB execute the body of
  ``/*! ... */`` and ``/*M! ... */`` (which sqlglot, rightly for SQL, reads as a
  comment, so every other check would miss a ``SLEEP`` or ``INTO OUTFILE`` inside), and
  optimizer hints ``/*+ ... */`` can change the statement's limits (MySQL's
  ``MAX_EXECUTION_TIME``, pg_hint_plan's ``Set``);
- no call of a function on the engine's refusal list (``RefusedFunctions``: exact
  names and name prefixes, compared case-insensitively, schema qualification ignored).

It is the first of several layers: the engine runs what passes in a read-only
transaction with a server-side timeout (``engine/live/session.py``). Pure: no database.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

# Longer than any analytical query; as the DuckDB sandbox allows.
MAX_SQL_CHARS = 50_000
# Verdicts on texts up to this long are remembered (2048 of them at most).
CACHED_CHARS = 10_000
ALLOWED_HINT = "send exactly one read-only query: SELECT, WITH ... SELECT or VALUES"
# Nodes that write, lock, copy, change the session or are not understood.
_REFUSED_NODES: dict[type, str] = {
    exp.Insert: "INSERT", exp.Update: "UPDATE", exp.Delete: "DELETE", exp.Merge: "MERGE",
    exp.Create: "CREATE", exp.Drop: "DROP", exp.Alter: "ALTER",
    exp.TruncateTable: "TRUNCATE", exp.Copy: "COPY", exp.Into: "SELECT ... INTO",
    exp.Lock: "a locking clause (FOR UPDATE / FOR SHARE)", exp.Set: "SET",
    exp.Transaction: "a transaction statement", exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK", exp.LoadData: "LOAD DATA", exp.Use: "USE",
    exp.Grant: "GRANT", exp.Revoke: "REVOKE", exp.Kill: "KILL", exp.Command: "a command",
}
_QUERY_TOPS = (exp.Query, exp.Values)
# How a comment's text starts when a server runs it (``/*!``, ``/*M!``) or plans by it
# (``/*+``); sqlglot gives comments without their ``/*``.
_RUN_COMMENTS = ("!", "M!", "+")


@dataclass(frozen=True)
class RefusedFunctions:
    """Functions an engine never runs for the model: ``names`` exactly, or any name
    starting with one of ``prefixes`` (both lower case)."""

    names: frozenset[str]
    prefixes: tuple[str, ...] = ()

    def refuses(self, name: str) -> bool:
        name = name.lower()
        return name in self.names or name.startswith(self.prefixes)


class StatementRefused(Exception):
    """The statement was not run; ``message`` says why, in words the model can act on."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_statement(sql: object, dialect: str, refused: RefusedFunctions,
                    engine_name: str) -> str:
    """The one read-only query in ``sql``, cleaned (trailing ``;`` and comments gone, so
    it can be wrapped as a subquery), or raise ``StatementRefused`` naming why.
    ``dialect`` is sqlglot's; ``engine_name`` is how messages name the engine. A verdict
    on a text up to ``CACHED_CHARS`` long is remembered (parsing costs a few ms of pure
    Python; the same question is asked again)."""
    if isinstance(sql, str) and len(sql) <= CACHED_CHARS:
        cleaned, refusal = _cached_verdict(sql, dialect, refused, engine_name)
        if refusal is not None:
            raise StatementRefused(refusal)
        return cleaned
    return _check(sql, dialect, refused, engine_name)


@functools.lru_cache(maxsize=2048)
def _cached_verdict(sql: str, dialect: str, refused: RefusedFunctions,
                    engine_name: str) -> tuple[str, str | None]:
    try:
        return _check(sql, dialect, refused, engine_name), None
    except StatementRefused as exc:
        return "", exc.message


def _check(sql: object, dialect: str, refused: RefusedFunctions, engine_name: str) -> str:
    if not isinstance(sql, str) or not sql.strip():
        raise StatementRefused(f"no SQL given; {ALLOWED_HINT}")
    if len(sql) > MAX_SQL_CHARS:
        raise StatementRefused(f"the statement is longer than {MAX_SQL_CHARS:,} characters; "
                               "write a shorter query")
    try:
        reader = sqlglot.Dialect.get_or_raise(dialect)
        tokens = reader.tokenize(sql)
        _check_tokens(tokens)
        # An empty statement (``;;``, a trailing comment) is no statement.
        statements = [s for s in reader.parser().parse(tokens, sql)
                      if s is not None and not isinstance(s, exp.Semicolon)]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StatementRefused(f"the statement could not be read as {engine_name} SQL "
                               f"({first}); {ALLOWED_HINT}") from None
    if len(statements) != 1:
        raise StatementRefused(f"{len(statements) or 'no'} statements given; {ALLOWED_HINT}")
    statement = statements[0]
    if not isinstance(statement, _QUERY_TOPS):
        raise StatementRefused(f"only queries are run here, not {_kind(statement)}; "
                               f"{ALLOWED_HINT}")
    for node in statement.walk():
        for kind, what in _REFUSED_NODES.items():
            if isinstance(node, kind):
                raise StatementRefused(f"{what} is not allowed (read-only access); "
                                       f"{ALLOWED_HINT}")
        if isinstance(node, exp.Func):
            for name in _function_names(node):
                if refused.refuses(name):
                    raise StatementRefused(f"the function {name}() is not allowed on "
                                           f"{engine_name} here; compute the answer "
                                           "without it")
    meaningful = [t for t in tokens if t.token_type != sqlglot.TokenType.SEMICOLON]
    return sql[meaningful[0].start:meaningful[-1].end + 1]


def _check_tokens(tokens: list) -> None:
    """MySQL's ``INTO OUTFILE``/``DUMPFILE``, which sqlglot cannot parse, named as such;
    executable comments and optimizer hints refused (see the module doc)."""
    for token in tokens:
        if token.token_type == sqlglot.TokenType.HINT or any(
                comment.lstrip().upper().startswith(_RUN_COMMENTS)
                for comment in token.comments):
            raise StatementRefused("optimizer hints (/*+ */) and executable comments "
                                   "(/*! */) are not allowed; write the query without them")
    for before, token in itertools.pairwise(tokens):
        if before.text.upper() == "INTO" and token.text.upper() in ("OUTFILE", "DUMPFILE"):
            raise StatementRefused(f"INTO {token.text.upper()} is not allowed (nothing is "
                                   f"written anywhere); {ALLOWED_HINT}")


def _function_names(node: exp.Func) -> list[str]:
    if isinstance(node, exp.Anonymous):
        return [node.name]
    return list(node.sql_names())


def _kind(statement: exp.Expression) -> str:
    for kind, what in _REFUSED_NODES.items():
        if isinstance(statement, kind):
            return what
    return type(statement).__name__.upper()
