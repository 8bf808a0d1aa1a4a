"""Storing vectors (little-endian float32 bytes) and embedding one text on one thread."""
from __future__ import annotations

import functools

import numpy as np
from threadpoolctl import ThreadpoolController

from engine.embeddings.minilm import Embedder

# Questions remembered with their vectors: schedules and retries ask the same question
# again, and a vector is 1.5 kB against ~10 ms of CPU to compute it.
RECENT_TEXTS = 512


def vector_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def vector_of(blob: bytes | None) -> np.ndarray | None:
    return np.frombuffer(blob, dtype="<f4") if blob else None


@functools.cache
def _thread_pools() -> ThreadpoolController:
    """The process's BLAS/OpenMP pools, found once: finding them re-reads the loaded
    libraries (~0.5 ms, more on a loaded host), while limiting known ones costs ~0.02 ms.
    numpy's BLAS is loaded by the time this runs (minilm imports numpy)."""
    return ThreadpoolController()


@functools.lru_cache(maxsize=RECENT_TEXTS)
def embed_one(embedder: Embedder, text: str) -> np.ndarray:
    """One text's vector, numpy capped at one thread: workers and API processes run
    several requests at once on few cores, and one short text gains nothing from more.

    The last RECENT_TEXTS texts' vectors are remembered (per embedder); the array
    returned is read-only because it is shared between callers."""
    with _thread_pools().limit(limits=1):
        vector = embedder.embed([text])[0]
    vector.flags.writeable = False
    return vector
