"""Verified queries at question time: the ones nearest in meaning to the question go to
the model in the turn (after the cached prefix), and an answer relying on one says so.

The system prompt stays byte-identical with or without them, so the prompt cache still
hits: the retrieved queries are appended to the user's question in the request only
(the conversation keeps the bare question).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Engine

from engine.embeddings import embed_one, load_embedder, vector_of
from shared.models import VerifiedQuery
from shared.verified_sql import matching_verified

logger = logging.getLogger(__name__)

TOP_K = 3
# Below this cosine similarity a verified query is noise to the model, not help.
MIN_SIMILARITY = 0.45
# An answer is marked verified only when the question asked is this close in meaning to
# the verified question whose SQL it ran: a verified query is trusted for its question,
# not for every question its SQL was run for. Set from bench/verified_retrieval.py (no
# paraphrase's nearest wrong question scored above 0.89 there); see
# docs/verified-queries.md for what it trades.
MARK_AT = 0.9
BLOCK_START = "<verified_queries>"
BLOCK_END = "</verified_queries>"
GUIDANCE = ("Verified queries: SQL a person checked and approved for questions like this one, "
            "most similar first. If one answers the question, run its SQL as written "
            "(change only literal values the question changes) instead of writing your own.")


@dataclass(frozen=True)
class Verified:
    verified_query_id: str
    question: str
    sql: str
    vector: np.ndarray | None = None


@dataclass(frozen=True)
class Retrieved:
    query: Verified
    similarity: float


@dataclass
class VerifiedContext:
    """A job's verified queries: all of its dataset's (to mark the answer) and the ones
    retrieved for its question (for the model)."""

    all: list[Verified] = field(default_factory=list)
    retrieved: list[Retrieved] = field(default_factory=list)
    # The question's similarity to each verified question, by id.
    similarity: dict[str, float] = field(default_factory=dict)

    @classmethod
    def for_vector(cls, question_vector: np.ndarray, known: list[Verified]) -> VerifiedContext:
        ranked = rank(question_vector, known)
        return cls(known, [r for r in ranked[:TOP_K] if r.similarity >= MIN_SIMILARITY],
                   {r.query.verified_query_id: r.similarity for r in ranked})

    def turn_text(self, question: str) -> str:
        """The question as the model reads it: with the retrieved queries after it."""
        if not self.retrieved:
            return question
        items = "\n".join(
            f'<verified_query id="{r.query.verified_query_id}" similarity="{r.similarity:.2f}">\n'
            f"<question>{r.query.question}</question>\n<sql>{r.query.sql}</sql>\n</verified_query>"
            for r in self.retrieved)
        return f"{question}\n\n{BLOCK_START}\n{GUIDANCE}\n{items}\n{BLOCK_END}"

    def relied_on(self, sql: str | None) -> dict | None:
        """``result.verified`` for an answer relying on ``sql``, or None."""
        found = matching_verified(sql, self.all)
        if found is None:
            return None
        closeness = self.similarity.get(found.verified_query_id, 0.0)
        if closeness < MARK_AT:
            logger.info("answer ran verified query %s, but the question is not close enough "
                        "to its own (%.2f < %.2f): not marked", found.verified_query_id,
                        closeness, MARK_AT)
            return None
        return {"verified_query_id": found.verified_query_id, "question": found.question}


def rank(question_vector: np.ndarray, candidates: list[Verified]) -> list[Retrieved]:
    """Every candidate with its similarity to the question, most similar first."""
    usable = [c for c in candidates if c.vector is not None]
    if not usable:
        return []
    scores = np.stack([c.vector for c in usable]) @ question_vector
    return [Retrieved(usable[i], float(scores[i])) for i in np.argsort(-scores)]


class VerifiedQueries:
    """Loads a dataset's verified queries and retrieves the nearest for a question. The
    embedding model loads on the first dataset that has any (once per process)."""

    def __init__(self, engine: Engine, embedder_factory=load_embedder):
        self.engine = engine
        self._embedder_factory = embedder_factory

    def for_question(self, tenant_id: int, dataset_id: str | None, question: str) -> VerifiedContext:
        """Never raises: a failure costs the job its verified queries, not its answer."""
        if dataset_id is None:
            return VerifiedContext()
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(select(
                    VerifiedQuery.id, VerifiedQuery.question, VerifiedQuery.sql,
                    VerifiedQuery.embedding).where(VerifiedQuery.tenant_id == tenant_id,
                                                   VerifiedQuery.dataset_id == dataset_id)).all()
            if not rows:
                return VerifiedContext()
            embedder = self._embedder_factory()
            known = [Verified(r.id, r.question, r.sql,
                              vector_of(r.embedding) if r.embedding else embed_one(embedder, r.question))
                     for r in rows]
            return VerifiedContext.for_vector(embed_one(embedder, question), known)
        except Exception:
            logger.exception("dataset %s: verified queries unavailable for this job", dataset_id)
            return VerifiedContext()
