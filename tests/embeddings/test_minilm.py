"""The numpy MiniLM gives the published model's similarities, and refuses a wrong file."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from engine.embeddings import ModelFileMismatch, load_embedder
from engine.embeddings.minilm import model_dir

# Texts and the vectors the first numpy forward pass (commit 4c3966c) gave each alone:
# bench paraphrases, an empty text, non-ASCII, SQL, and one truncated at 256 tokens.
REFERENCE = Path(__file__).resolve().parent / "data" / "minilm_reference.npz"


def test_similarities_match_the_published_model():
    embedder = load_embedder()
    rows = embedder.embed([
        "A man is eating food.",
        "A man is eating a piece of bread.",
        "How many flights were delayed?",
        "What number of flights arrived late?",
        "The cat sat on the mat.",
    ])
    assert rows.shape == (5, 384)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    sims = rows @ rows.T
    # sentence-transformers' own example: all-MiniLM-L6-v2 scores this pair 0.7553.
    assert sims[0, 1] == pytest.approx(0.7553, abs=0.01)
    assert sims[2, 3] > 0.75  # paraphrase
    assert sims[2, 4] < 0.2 and sims[0, 4] < 0.2  # unrelated


def test_a_batch_gives_the_same_rows_as_one_at_a_time():
    embedder = load_embedder()
    texts = ["flights per carrier", "the longest delay at JFK in a winter month, by day"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_a_weights_file_that_is_not_the_published_one_is_refused(tmp_path):
    for item in model_dir().iterdir():
        if item.is_file() and item.name != "model.safetensors":
            shutil.copy(item, tmp_path / item.name)
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 64)
    with pytest.raises(ModelFileMismatch):
        load_embedder(str(tmp_path))


def test_vectors_are_the_ones_the_first_forward_pass_gave():
    """The forward pass was rearranged for CPU (issue 37); stored vectors and the
    retrieval figures read off them hold only if every vector stays where it was."""
    reference = np.load(REFERENCE)
    texts = [str(t) for t in reference["texts"]]
    embedder = load_embedder()
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.abs(alone - reference["alone"]).max() <= 1e-6
    assert np.abs(alone @ alone.T - reference["alone"] @ reference["alone"].T).max() <= 1e-6
    # Together they are padded to the longest (256 tokens): the masked path.
    assert np.abs(embedder.embed(texts) - reference["alone"]).max() <= 1e-6
