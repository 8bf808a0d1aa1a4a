"""Decide whether a model-written SQL string may run: one read statement only.

Classification uses DuckDB's own parser (``duckdb.extract_statements``), never
regular expressions, so what is checked is exactly what DuckDB would execute.
A statement passes when DuckDB classifies it as ``StatementType.SELECT``; that
covers ``SELECT``, ``WITH ... SELECT``, ``FROM t``, ``VALUES``, ``SHOW``,
``DESCRIBE``, ``SUMMARIZE`` and ``PIVOT ... IN (...)``.

``EXPLAIN`` is refused on purpose: a query plan rarely helps the model answer a
question, ``EXPLAIN ANALYZE`` runs the query anyway, and a smaller surface is
easier to reason about. The refusal tells the model to run the query itself.

The guard is one layer of several: the sandbox also opens the database
read-only with external access disabled and the configuration locked.
"""

from __future__ import annotations

import logging

import duckdb

logger = logging.getLogger(__name__)

# What the model is told it may send; repeated in every refusal so that one
# failed attempt is enough to correct course.
ALLOWED_HINT = (
    "send exactly one read-only query: SELECT, WITH ... SELECT, FROM ..., VALUES, "
    "SHOW, DESCRIBE or SUMMARIZE"
)


class SqlRefused(Exception):
    """The SQL was not run; ``message`` says why in words the model can act on."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_single_read_statement(sql: str) -> str:
    """Return the one read statement in ``sql``, cleaned, or raise ``SqlRefused``.

    The returned text is the statement as written, with surrounding whitespace,
    trailing semicolons and trailing comments removed, so that callers can wrap
    it safely, e.g. ``SELECT count(*) FROM (\\n<stmt>\\n)``. Pure: no database
    is touched. Raises ``SqlRefused`` for non-strings, empty input (or only
    comments), parse errors (with DuckDB's message), more than one statement,
    and any statement DuckDB does not classify as SELECT.
    """
    if not isinstance(sql, str):
        raise SqlRefused(f"the sql argument must be a string; {ALLOWED_HINT}")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise SqlRefused(f"the SQL does not parse: {exc}") from exc
    if not statements:
        raise SqlRefused(f"the SQL is empty; {ALLOWED_HINT}")
    if len(statements) > 1:
        raise SqlRefused(
            f"exactly one statement is allowed but {len(statements)} were sent; "
            "send each query as its own execute_sql call"
        )
    statement = statements[0]
    kind = statement.type
    if kind == duckdb.StatementType.EXPLAIN:
        raise SqlRefused("EXPLAIN is not available; run the query itself instead")
    if kind != duckdb.StatementType.SELECT:
        name = getattr(kind, "name", str(kind))
        logger.info("refused %s statement", name)
        if kind == duckdb.StatementType.MULTI:
            # DuckDB expands a PIVOT without an IN list into several statements.
            raise SqlRefused(
                "this expands to several statements (a PIVOT needs an explicit "
                f"IN (...) list of values); {ALLOWED_HINT}"
            )
        raise SqlRefused(
            f"{name} statements are not allowed: the database is read-only and "
            f"settings are locked; {ALLOWED_HINT}"
        )
    cleaned = _strip_trailing_noise(statement.query)
    if not cleaned:
        raise SqlRefused(f"the SQL is empty; {ALLOWED_HINT}")
    return cleaned


def _strip_trailing_noise(text: str) -> str:
    """Drop trailing ``;`` and comments using DuckDB's tokenizer.

    A trailing ``-- comment`` or a ``;`` would break the statement once it is
    embedded in a subquery; the tokenizer knows which ``;`` and ``--`` are
    really inside string literals or identifiers.
    """
    text = text.strip()
    try:
        tokens = duckdb.tokenize(text)
    except Exception:  # the parser accepted it; keep it as is
        logger.warning("could not tokenize a parsed statement; using it unchanged",
                       exc_info=True)
        return text.rstrip(";").strip()
    cut = len(text)
    for index in range(len(tokens) - 1, -1, -1):
        start, token_type = tokens[index]
        end = tokens[index + 1][0] if index + 1 < len(tokens) else len(text)
        is_comment = token_type == duckdb.token_type.comment
        is_semicolon = (
            token_type == duckdb.token_type.operator and text[start:end].strip() == ";"
        )
        if not (is_comment or is_semicolon):
            break
        cut = start
    return text[:cut].strip()
