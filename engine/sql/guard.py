"""Decide whether a model-written SQL string may run: one read statement only.

Classification uses DuckDB's own parser, never regular expressions, so what is
checked is exactly what DuckDB would execute:

1. ``duckdb.extract_statements`` must find exactly one statement that DuckDB
   classifies as ``StatementType.SELECT``; that covers ``SELECT``, ``WITH ...
   SELECT``, ``FROM t``, ``VALUES``, ``SHOW``, ``DESCRIBE``, ``SUMMARIZE`` and
   ``PIVOT ... IN (...)``.
2. Its whole parse tree (``json_serialize_sql``) must hold only read query nodes
   -- ``WITH x AS (INSERT ... RETURNING *) SELECT ...`` is a SELECT at the top --
   and must not name a function or view that describes the host rather than the
   data (settings, database paths, extension and secret directories, temporary
   files, logs) or that runs SQL given as text (``query()``), which this check
   could not see.

``EXPLAIN`` is refused on purpose: a query plan rarely helps the model answer a
question, ``EXPLAIN ANALYZE`` runs the query anyway, and a smaller surface is
easier to reason about. The refusal tells the model to run the query itself.

The guard is one layer of several: the sandbox also opens the database
read-only with external access disabled and the configuration locked.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import duckdb

logger = logging.getLogger(__name__)

# What the model is told it may send; repeated in every refusal so that one
# failed attempt is enough to correct course.
ALLOWED_HINT = (
    "send exactly one read-only query: SELECT, WITH ... SELECT, FROM ..., VALUES, "
    "SHOW, DESCRIBE or SUMMARIZE"
)
# Far longer than any analytical query; the parse tree of a longer one costs more to
# check than the question is worth.
MAX_SQL_CHARS = 50_000

# Query nodes of DuckDB's parse tree that only read.
_READ_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
# They describe the server, not the data: settings (home and temporary directories),
# database file paths, extension and secret directories, temporary files, logs.
_HOST_METADATA = frozenset({
    "duckdb_settings", "current_setting", "pg_settings", "duckdb_databases",
    "pragma_database_list", "pg_database", "duckdb_extensions",
    "duckdb_extension_repositories", "duckdb_secrets", "which_secret",
    "duckdb_temporary_files", "duckdb_external_file_cache", "duckdb_logs",
    "duckdb_logs_parsed", "duckdb_log_contexts", "duckdb_variables", "getvariable",
    "truncate_duckdb_logs", "write_log", "enable_logging", "disable_logging",
})
# They run SQL given as text, which this guard would never see.
_SQL_AS_TEXT = frozenset({"query", "query_table", "json_execute_serialized_sql",
                          "json_deserialize_sql"})


class SqlRefused(Exception):
    """The SQL was not run; ``message`` says why in words the model can act on."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_single_read_statement(sql: str) -> str:
    """Return the one read statement in ``sql``, cleaned, or raise ``SqlRefused``.

    The returned text is the statement as written, with surrounding whitespace,
    trailing semicolons and trailing comments removed, so that callers can wrap
    it safely, e.g. ``SELECT count(*) FROM (\\n<stmt>\\n)``. No database is
    touched (the parse tree comes from a private in-memory DuckDB). Raises
    ``SqlRefused`` for non-strings, text that is not valid Unicode, more than
    ``MAX_SQL_CHARS`` characters, empty input (or only comments), parse errors
    (with DuckDB's message), more than one statement, any statement DuckDB does
    not classify as SELECT, and a tree holding a write or host metadata.
    """
    if not isinstance(sql, str):
        raise SqlRefused(f"the sql argument must be a string; {ALLOWED_HINT}")
    _check_text(sql)
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
    _check_tree(cleaned)
    return cleaned


def _check_text(sql: str) -> None:
    if len(sql) > MAX_SQL_CHARS:
        raise SqlRefused(f"the SQL is {len(sql):,} characters long; at most {MAX_SQL_CHARS:,} "
                         "are accepted, write a shorter query")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        # A lone surrogate (JSON allows "\\ud800"): DuckDB's binding refuses the string.
        raise SqlRefused(f"the SQL is not valid Unicode (character {exc.start} is a lone "
                         "surrogate); send plain text") from None


def _check_tree(statement: str) -> None:
    """Refuse a read statement whose parse tree writes or reads host metadata."""
    tree = parse_tree(statement)
    if tree.get("error"):
        # The statement parsed above; a tree DuckDB cannot serialise cannot be checked.
        raise SqlRefused(f"the SQL could not be checked: {tree.get('error_message')}; "
                         f"{ALLOWED_HINT}")
    for node in walk(tree.get("statements", [])):
        node_type = node.get("type")
        if isinstance(node_type, str) and node_type.endswith("_NODE") \
                and node_type not in _READ_NODES:
            operation = node_type.removesuffix("_QUERY_NODE").removesuffix("_NODE")
            logger.info("refused a SELECT holding %s", node_type)
            raise SqlRefused(f"{operation} inside a query is not allowed: the database is "
                             f"read-only; {ALLOWED_HINT}")
        name = _named_object(node)
        if name in _HOST_METADATA:
            raise SqlRefused(f"{name} is not available: it describes the server, not the "
                             "data; query the tables of the schema instead")
        if name in _SQL_AS_TEXT:
            raise SqlRefused(f"{name}() runs SQL given as text, which cannot be checked; "
                             "write that query directly")


def _named_object(node: dict[str, Any]) -> str | None:
    """The lower-case name of a function call or a table/view reference, else None."""
    if node.get("class") == "FUNCTION":
        return str(node.get("function_name", "")).lower()
    if node.get("type") == "BASE_TABLE":
        return str(node.get("table_name", "")).lower()
    return None


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside ``value`` (a parse tree or part of one), ``value`` first if a dict."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@functools.lru_cache(maxsize=16)
def parse_tree(statement: str) -> dict[str, Any]:
    """DuckDB's parse tree of ``statement`` (``json_serialize_sql``; ``"error": true`` and
    a message if it has none), from a private in-memory parser. Thread-safe.

    The last few trees are kept: the guard and the SQL process's choice of one pass or
    two (``engine/sql/shape.py``) read the same new statement's tree one after the
    other. Shared, so read it; never change it."""
    with _PARSER_LOCK:
        global _PARSER
        if _PARSER is None:
            # Nothing to read or load: the parser needs no file, network or extension.
            _PARSER = duckdb.connect(":memory:", config={
                "enable_external_access": False, "autoload_known_extensions": False,
                "autoinstall_known_extensions": False, "threads": 1})
            _PARSER.execute(f"PREPARE {_TREE_OF} AS SELECT json_serialize_sql($1)")
        if "\0" in statement:  # kept out of SQL text; a parameter carries it whole
            query, values = "SELECT json_serialize_sql(?)", [statement]
        else:
            # EXECUTE takes no parameter markers, so the statement goes as a literal; the
            # prepared plan makes this a third of what SELECT json_serialize_sql(?) costs.
            query, values = f"EXECUTE {_TREE_OF}({_string_literal(statement)})", None
        text = _PARSER.execute(query, values).fetchone()[0]
    return json.loads(text)


def _string_literal(text: str) -> str:
    """``text`` as a SQL string literal: DuckDB's standard strings end only at a quote
    that is not doubled (backslashes are plain characters)."""
    return "'" + text.replace("'", "''") + "'"


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


# A bare lock is not a resource; the connection it guards is opened on first use.
_PARSER_LOCK = threading.Lock()
_PARSER: Any = None
# The parser connection's prepared ``json_serialize_sql``.
_TREE_OF = "sunrise_parse_tree"
