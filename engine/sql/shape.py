"""Whether a statement repeats cheaply: running it a second time, for the summary of a
result over 25 rows, costs little beside what its rows cost.

It does when it only scans, filters, projects, joins, unnests, appends (``UNION ALL``),
cuts (``LIMIT``) or sorts: the query of its rows stops once they are out (``LIMIT``), and
the summary query drops a sort, whose order no aggregate needs. It does not when
anything in it groups (``GROUP BY``, ``DISTINCT``, ``PIVOT``), numbers rows (window
functions), compares whole inputs (``UNION``, ``EXCEPT``, ``INTERSECT``) or keeps the top
rows of a sort (``ORDER BY`` with ``LIMIT``): both queries would do that work in full.

The SQL process uses it to choose how such a result gets its summary
(``engine/sql/executor.py``): a statement that repeats cheaply runs twice, its rows then
its summary on every thread; any other runs once, its rows numbered and summarised in
one query (``result_sql.one_pass_sql``), which passes every row through one thread.
Running once is cheaper for group-bys, set operations and the top rows of a sort,
whose second run would redo the work; a plain or filtered scan and a full sort are
cheaper run twice (the numbered one-pass query pushes every row through one thread),
so those still run twice. The one query costs a little more to plan than the rows
alone, which a result of 25 rows or fewer pays once: its plan then drops it
(the measurements are in the commit that chose this).

Only a choice of speed: both ways give the same result. Pure; the parse tree comes from
the guard's private parser (``sql_guard.parse_tree``).
"""
from __future__ import annotations

from typing import Any

from engine.sql.guard import parse_tree, walk

_GROUPING = frozenset({"DISTINCT_MODIFIER", "PIVOT"})


def repeats_cheaply(statement: str) -> bool:
    """True when ``statement`` (one guarded SELECT) repeats cheaply, as the module doc
    says; False also when its tree cannot be read (running once is the safe side)."""
    tree = parse_tree(statement)
    if tree.get("error"):
        return False
    return not any(_does_work(node) for node in walk(tree.get("statements", [])))


def _does_work(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if node.get("group_expressions") or node.get("group_sets"):
        return True
    if node.get("aggregate_handling") == "FORCE_AGGREGATES":  # GROUP BY ALL
        return True
    if node.get("class") == "WINDOW" or kind in _GROUPING:
        return True
    if kind == "SET_OPERATION_NODE" and not (
            node.get("setop_type") in ("UNION", "UNION_BY_NAME") and node.get("setop_all")):
        return True
    modifiers = {modifier.get("type"): modifier for modifier in node.get("modifiers") or ()}
    order = modifiers.get("ORDER_MODIFIER")
    return bool(order and order.get("orders") and "LIMIT_MODIFIER" in modifiers)
