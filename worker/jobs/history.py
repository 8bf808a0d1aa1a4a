"""Prior turns of a conversation as the model sees them: role + final text, nothing else."""
from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select

from shared.models import Message

messages = Message.__table__
# Built once: the worker reads a conversation's history for every job.
_TURNS = (select(messages.c.job_id, messages.c.role, messages.c.text)
          .where(messages.c.conversation_id == bindparam("conversation_id"),
                 messages.c.job_id != bindparam("exclude_job_id"))
          .order_by(messages.c.id))


def estimate_tokens(text: str) -> int:
    # A deliberate over-estimate (about 4 characters a token) keeps us inside the budget.
    return len(text.encode()) // 3 + 1


def load_history(
    conn: Any, conversation_id: str, *, exclude_job_id: str, max_turns: int,
    token_budget: int,
) -> list[dict]:
    """Completed question/answer pairs, oldest first, newest kept within both caps.
    ``conn`` is a connection or a session.

    A question whose job produced no answer (failed, cancelled, or a blank one) is
    left out, so the roles always alternate user, assistant and no turn is empty. Tool traces are never stored, so none
    can be replayed.
    """
    rows = conn.execute(_TURNS, {"conversation_id": conversation_id,
                                 "exclude_job_id": exclude_job_id}).all()
    by_job: dict[str, dict[str, str]] = {}
    for job_id, role, text in rows:
        by_job.setdefault(job_id, {})[role] = text
    # Blank answers (stored before empty replies were refused) are never replayed:
    # the API refuses empty message content, and every later question would fail.
    pairs = [(t["user"], t["assistant"]) for t in by_job.values()
             if t.get("user", "").strip() and t.get("assistant", "").strip()]
    kept: list[tuple[str, str]] = []
    budget = token_budget
    for question, answer in reversed(pairs[-max_turns:] if max_turns > 0 else []):
        cost = estimate_tokens(question) + estimate_tokens(answer)
        if cost > budget:
            break
        budget -= cost
        kept.append((question, answer))
    history: list[dict] = []
    for question, answer in reversed(kept):
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return history
