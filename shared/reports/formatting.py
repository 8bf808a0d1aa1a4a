"""Number and usage formatting shared by the HTML and Markdown reports."""
from __future__ import annotations

from typing import Any


def fmt_int(value: Any) -> str:
    return f"{int(value or 0):,}"


def fmt_usd(value: Any) -> str:
    # Per-question costs are fractions of a cent; four decimals keep them readable.
    # None is a model without a known price: said so, never shown as $0.
    return "unknown (unpriced model)" if value is None else f"${float(value):,.4f}"


def fmt_pct(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio * 100:.1f}%"


def usage_line(usage: dict[str, Any]) -> str:
    """One line of a question's figures: tokens, cache, cost, rounds."""
    return (f"{fmt_int(usage['input_tokens'])} input, {fmt_int(usage['output_tokens'])} output, "
            f"{fmt_int(usage['cache_read_tokens'])} cache read, "
            f"{fmt_int(usage['cache_creation_tokens'])} cache write tokens; "
            f"{fmt_usd(usage['cost_usd'])}; {usage['tool_rounds']} tool rounds, "
            f"{usage['sql_executed']} queries")


def data_as_of_line(data_as_of: str | None) -> str:
    """When a question's data was current ("Data as of 2026-12-02 06:00:05 UTC."), from
    the job's ISO 8601 ``data_as_of``; empty when it read no data."""
    if not data_as_of:
        return ""
    return f"Data as of {data_as_of.replace('T', ' ').split('.')[0].rstrip('Z')} UTC."


def verified_line(verified: dict | None) -> str:
    """'Verified query: <its question>.' for an answer relying on one; else empty."""
    return f"Verified query: {verified['question']}" if verified else ""


def saving_sentence(document: dict[str, Any]) -> str:
    """How the batch's price compares with the other mode."""
    economy = document.get("economy")
    if economy:
        return (f"Economy mode (Message Batches API) cost {fmt_usd(economy['cost_usd'])} against "
                f"{fmt_usd(economy['standard_cost_usd'])} for the same tokens in normal mode: "
                f"a saving of {fmt_usd(economy['saving_usd'])} "
                f"({fmt_pct(economy['saving_ratio'])}).")
    standard = document["standard_cost_usd"]
    half = None if standard is None else standard / 2
    return (f"Normal mode. Economy mode (\"mode\": \"economy\") bills the same tokens at half "
            f"price, about {fmt_usd(half)}, in exchange for slower delivery.")


def counts_sentence(document: dict[str, Any]) -> str:
    c = document["counts"]
    parts = [f"{c['succeeded']} answered"]
    parts += [f"{c[k]} {k}" for k in ("failed", "cancelled", "unfinished") if c.get(k)]
    return f"{document['total']} questions: " + ", ".join(parts)
