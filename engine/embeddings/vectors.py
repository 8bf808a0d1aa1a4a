"""Storing vectors (little-endian float32 bytes) and embedding one text on one thread."""
from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from engine.embeddings.minilm import Embedder


def vector_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def vector_of(blob: bytes | None) -> np.ndarray | None:
    return np.frombuffer(blob, dtype="<f4") if blob else None


def embed_one(embedder: Embedder, text: str) -> np.ndarray:
    """One text's vector, numpy capped at one thread: workers and API processes run
    several requests at once on few cores, and one short text gains nothing from more."""
    with threadpool_limits(limits=1):
        return embedder.embed([text])[0]
