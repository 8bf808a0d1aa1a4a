"""Sentence embeddings for finding text by meaning (verified queries).

Outsiders use `load_embedder()` and the `Embedder` it returns (`embed(texts)` gives
L2-normalised float32 rows, so a dot product is the cosine similarity), `embed_one`,
and `vector_bytes` / `vector_of` to store a vector.
"""

from engine.embeddings.minilm import Embedder, ModelFileMismatch, load_embedder
from engine.embeddings.vectors import embed_one, vector_bytes, vector_of

__all__ = ["Embedder", "ModelFileMismatch", "embed_one", "load_embedder", "vector_bytes",
           "vector_of"]
