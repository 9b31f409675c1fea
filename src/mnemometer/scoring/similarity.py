"""Similarity between a reply and its turn's expected answer (raw cosine, -1..1).

Two backends: the packaged MiniLM model loaded by path (offline), or any
OpenAI-compatible ``/embeddings`` endpoint. The rescue threshold depends on the model: the
seed's 0.75 was for ``(cos+1)/2`` on OpenAI vectors; ours is calibrated for MiniLM (see
:mod:`mnemometer.scoring.calibrate` and docs/scenarios.md).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from mnemometer.errors import MnemometerError

MINILM_THRESHOLD = 0.96
"""Rescue threshold for MiniLM raw cosine: the calibration in docs/scenarios.md."""
MINILM_FALSE_ACCEPT = 0.0
"""Share of the calibration set's wrong open answers at or above the threshold."""
MINILM_FALSE_ACCEPT_HELD_OUT = 2 / 90
"""The same, each expected answer held out of the calibration of its own threshold."""


class Similarity:
    """Cosine similarity with a cache of vectors.

    Args:
        backend: ``minilm`` (the packaged model), ``endpoint`` (an embeddings endpoint),
            or ``none``.
        llm: LLM client used for ``endpoint``.
    """

    def __init__(self, backend: str = "minilm", llm: Any = None) -> None:
        if backend not in ("minilm", "endpoint", "none"):
            raise MnemometerError(f"similarity must be minilm, endpoint or none, got {backend!r}")
        if backend == "endpoint" and llm is None:
            raise MnemometerError("similarity=endpoint needs an LLM endpoint (--llm-base-url)")
        self.backend = backend
        self._llm = llm
        self._model: Any = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the model now (so the first item does not pay for it)."""
        if self.backend == "minilm" and self._model is None:
            self._model = _load_minilm()

    def _vectors(self, texts: list[str]) -> list[np.ndarray]:
        with self._lock:
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if todo:
                if self.backend == "minilm":
                    self.load()
                    mats = self._model(todo)
                else:
                    mats = np.asarray(self._llm.embed(todo), dtype=np.float32)
                for t, v in zip(todo, mats, strict=True):
                    n = float(np.linalg.norm(v)) or 1.0
                    self._cache[t] = np.asarray(v, dtype=np.float32) / n
            return [self._cache[t] for t in texts]

    def warm(self, texts: list[str]) -> None:
        """Embed ``texts`` now, in one batch (later calls hit the cache)."""
        if self.backend != "none" and texts:
            self._vectors(list(texts))

    def __call__(self, reply: str, expected: str) -> float | None:
        """Cosine of ``reply`` and ``expected``; ``None`` when off or the reply is empty."""
        if self.backend == "none" or not reply.strip():
            return None
        a, b = self._vectors([reply, expected])
        return round(float(np.dot(a, b)), 6)


def _load_minilm() -> Any:
    """An ``encode(texts) -> array`` callable over the packaged MiniLM (shared per process)."""
    from mnemometer.embeddings import load_embedder

    embedder = load_embedder()
    return lambda texts: embedder.encode(list(texts))
