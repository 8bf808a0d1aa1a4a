"""embed_one: the embedder's vector, on one BLAS thread, remembered for a repeated text."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from engine.embeddings import embed_one, load_embedder


def test_a_repeated_text_gets_the_same_read_only_vector_without_embedding_again():
    embedder = load_embedder()
    text = "How many flights left each airport in a month with snow?"
    first = embed_one(embedder, text)
    assert np.array_equal(first, embedder.embed([text])[0])
    assert embed_one(embedder, text) is first
    with pytest.raises(ValueError):
        first[0] = 0.0  # shared between callers: nobody may change it


class ThreadCountProbe:
    """Stands in for the model to see the thread pools while it runs."""

    def __init__(self):
        self.threads_seen: list[int] = []

    def embed(self, texts):
        self.threads_seen += [pool["num_threads"] for pool in threadpool_info()]
        return np.zeros((len(texts), 384), dtype=np.float32)


def test_the_text_is_embedded_on_one_thread_and_the_pools_are_given_back():
    before = [pool["num_threads"] for pool in threadpool_info()]
    probe = ThreadCountProbe()
    embed_one(probe, "one thread")
    assert probe.threads_seen and set(probe.threads_seen) == {1}
    assert [pool["num_threads"] for pool in threadpool_info()] == before
