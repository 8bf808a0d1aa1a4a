"""Reading the verified queries Sunrise appends to a question (``<verified_queries>``,
``worker/agent/verified_queries.py``), as the offline model does: the question without
them, and the verified SQL it adopts -- the most similar one, when its similarity is at
least ADOPT_AT (below that a real model would write its own query)."""
from __future__ import annotations

import re
from dataclasses import dataclass

ADOPT_AT = 0.75
_BLOCK = re.compile(r"\s*<verified_queries>.*?</verified_queries>\s*$", re.DOTALL)
_ITEM = re.compile(r'<verified_query id="([^"]*)" similarity="([0-9.]+)">\s*'
                   r"<question>(.*?)</question>\s*<sql>(.*?)</sql>\s*</verified_query>", re.DOTALL)


@dataclass(frozen=True)
class VerifiedOffer:
    verified_query_id: str
    similarity: float
    question: str
    sql: str


def split_question(text: str) -> tuple[str, list[VerifiedOffer]]:
    """The question alone, and the verified queries offered with it (best first)."""
    found = _BLOCK.search(text)
    if found is None:
        return text, []
    offers = [VerifiedOffer(m.group(1), float(m.group(2)), m.group(3),
                            m.group(4).strip()) for m in _ITEM.finditer(found.group(0))]
    return text[: found.start()], offers


def adopted_sql(offers: list[VerifiedOffer]) -> str | None:
    best = max(offers, key=lambda o: o.similarity, default=None)
    return best.sql if best is not None and best.similarity >= ADOPT_AT else None
