"""``dense``: exact cosine search over sentence embeddings (packaged MiniLM by default)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from mnemometer.embeddings import DEFAULT_BATCH, DEFAULT_MODEL, MINILM_REQUIRES, load_embedder
from mnemometer.stores._lexical import IndexedStore
from mnemometer.stores._protocol import Hit
from mnemometer.stores._ties import DEFAULT_TIE_SEED


class DenseStore(IndexedStore):
    """Dense retrieval: sentence-transformers embeddings, exact search on numpy.

    Texts are embedded in batches when the store is flushed (new texts only); a query is
    one forward pass and one matrix-vector product. Hit scores are cosine similarities
    mapped to ``[0, 1]`` as ``(1 + cos) / 2``.

    Args:
        model: ``minilm`` (the packaged all-MiniLM-L6-v2) or the directory of any
            sentence-transformers model.
        batch_size: texts per forward pass when indexing.
        lang: accepted for symmetry with the lexical stores; embeddings do not tokenise.
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    requires = (*MINILM_REQUIRES, ("threadpoolctl", "embeddings"))
    """Optional modules, checked when the name is looked up."""

    #: Dense search ranks everything; an empty result never means "nothing relevant".
    abstains = False

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        batch_size: int = DEFAULT_BATCH,
        lang: str = "auto",
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        self.model = str(model)
        self.batch_size = int(batch_size)
        self.embedder = load_embedder(model)
        super().__init__(lang=lang, tie_seed=tie_seed)

    def resolved_options(self) -> dict[str, Any]:
        """Options as resolved (the model directory actually loaded), for the run log."""
        return {**super().resolved_options(), "model": self.embedder.path}

    def reset(self) -> None:
        """Forget everything."""
        super().reset()
        with self._lock:
            self._vecs = np.zeros((0, self.embedder.dim), dtype=np.float32)

    def flush(self) -> None:
        """Embed every text stored since the last flush."""
        with self._lock:
            new = self._texts[len(self._vecs) :]
            if new:
                vecs = self.embedder.encode(new, self.batch_size)
                self._vecs = np.concatenate([self._vecs, vecs]) if len(self._vecs) else vecs
            self._tie_keys()
            self._dirty = False

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Return the ``top_k`` memories closest to ``query``, best first."""
        if self._dirty:
            self.flush()
        if not self._texts or top_k <= 0 or not query.strip():
            return []
        return self._top(self.scores(query), top_k)

    def scores(self, query: str) -> np.ndarray:
        """Similarity in ``[0, 1]`` of ``query`` to every stored text (flushed first)."""
        if self._dirty:
            self.flush()
        from threadpoolctl import threadpool_limits  # [embeddings]; loaded once, then cached

        q = self.embedder.encode_one(query)
        # One BLAS thread for this small product: OpenBLAS's spinning workers otherwise fight
        # torch's threads for the cores, and a 0.1 ms product costs up to ~90 ms at p95.
        with threadpool_limits(limits=1, user_api="blas"):
            cos = self._vecs @ q
        # Strictly positive so the shared top-k keeps every document.
        return np.maximum((1.0 + cos) / 2.0, 1e-9)
