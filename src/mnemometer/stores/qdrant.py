"""``qdrant``: Qdrant in local mode (embedded, no server), with our embeddings."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from mnemometer._registry import require
from mnemometer.embeddings import DEFAULT_BATCH, DEFAULT_MODEL, MINILM_REQUIRES
from mnemometer.envfile import quiet_libraries
from mnemometer.stores._ties import DEFAULT_TIE_SEED
from mnemometer.stores._vector import BufferedVectorStore, locked

_COLLECTION = "mnemometer"


class QdrantStore(BufferedVectorStore):
    """Qdrant local mode (``qdrant-client``), cosine distance, exact search.

    Files live in the run directory (``store/qdrant``); without a run directory the store
    is in memory. Only one process may open a local Qdrant directory at a time.

    Args:
        in_memory: keep everything in memory even inside a run directory.
        model, batch_size, workdir, tie_seed: see
            :class:`~mnemometer.stores._vector.BufferedVectorStore`.
    """

    requires = (("qdrant_client", "vector"), *MINILM_REQUIRES)
    system = "qdrant"

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        batch_size: int = DEFAULT_BATCH,
        in_memory: bool = False,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        super().__init__(model, batch_size, None if in_memory else workdir, tie_seed)

    def _open(self) -> None:
        quiet_libraries()
        qc = require("qdrant_client", "vector", "the qdrant store")
        self._models = require("qdrant_client.models", "vector", "the qdrant store")
        try:
            if self.path is None:
                self.client = qc.QdrantClient(location=":memory:")
            else:
                self.client = qc.QdrantClient(path=str(self.path))
        except RuntimeError as e:
            if "already accessed" in str(e):
                raise locked(self.path, self.system, e) from None
            raise
        self._clear()

    def close(self) -> None:
        """Release the directory lock."""
        self.client.close()

    def _clear(self) -> None:
        m = self._models
        if self.client.collection_exists(_COLLECTION):
            self.client.delete_collection(_COLLECTION)
        self.client.create_collection(
            _COLLECTION,
            vectors_config=m.VectorParams(size=self.embedder.dim, distance=m.Distance.COSINE),
        )

    def _insert(self, rows: list[tuple[int, str, str]], vecs: np.ndarray) -> None:
        m = self._models
        points = [
            m.PointStruct(id=seq, vector=v.tolist(), payload={"memory_id": mid, "text": text})
            for (seq, mid, text), v in zip(rows, vecs, strict=True)
        ]
        for i in range(0, len(points), 512):
            self.client.upsert(_COLLECTION, points=points[i : i + 512], wait=True)

    def _query(self, text: str, vec: np.ndarray, n: int) -> list[tuple[str, float, str]]:
        res = self.client.query_points(_COLLECTION, query=vec.tolist(), limit=n, with_payload=True)
        return [(p.payload["memory_id"], p.score, p.payload["text"]) for p in res.points]

    def _delete(self, memory_id: str) -> None:
        m = self._models
        cond = m.FieldCondition(key="memory_id", match=m.MatchValue(value=memory_id))
        self.client.delete(
            _COLLECTION, points_selector=m.FilterSelector(filter=m.Filter(must=[cond]))
        )
