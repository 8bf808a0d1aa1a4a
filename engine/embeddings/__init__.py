"""Sentence embeddings for finding text by meaning (verified queries).

Outsiders use `load_embedder()` and the `Embedder` it returns: `embed(texts)` gives
L2-normalised float32 rows, so a dot product is the cosine similarity.
"""

from engine.embeddings.minilm import Embedder, ModelFileMismatch, load_embedder

__all__ = ["Embedder", "ModelFileMismatch", "load_embedder"]
