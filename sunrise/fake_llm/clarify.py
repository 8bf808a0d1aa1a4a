"""When the offline model asks back instead of guessing: a "delay" with no direction on
a table that has both departure and arrival delays (the sample data's `flights`). Each
option is the question rewritten for one meaning, so sending it answers it."""
from __future__ import annotations

import re

from sunrise.fake_llm.schema_prompt import Schema

_BARE_DELAY = re.compile(r"\bdelay(s)?\b", re.IGNORECASE)
_DIRECTED = re.compile(r"\b(dep|arr|departure|departures|departing|arrival|arrivals|arriving)"
                       r"(_delay)?\b", re.IGNORECASE)
MEANINGS = (("departure delay", "dep_delay"), ("arrival delay", "arr_delay"))


def clarification(question: str, schema: Schema) -> dict | None:
    """``{"question", "options"}`` for an ambiguous question, else None."""
    if not _BARE_DELAY.search(question) or _DIRECTED.search(question):
        return None
    columns = {column.name for table in schema.tables for column in table.columns}
    if not all(column in columns for _, column in MEANINGS):
        return None
    options = [_BARE_DELAY.sub(lambda m, w=words: w + (m.group(1) or ""), question, count=1).strip()
               for words, _ in MEANINGS]
    return {"question": "Do you mean the departure delay or the arrival delay?",
            "options": options}
