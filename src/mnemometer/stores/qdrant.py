"""``qdrant``: Qdrant in local mode (embedded, no server), with our embeddings."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from mnemometer._registry import require
from mnemometer.embeddings import DEFAULT_BATCH, DEFAULT_MODEL, MINILM_REQUIRES
from mnemometer.envfile import quiet_libraries
from mnemometer.stores._ties import DEFAULT_TIE_SEED
from mnemometer.stores._vector import BufferedVectorStore, data_dir, locked

_COLLECTION = "mnemometer"


class QdrantStore(BufferedVectorStore):
    """Qdrant local mode (``qdrant-client``), cosine distance, exact search.

    Files live in the run directory (``store/qdrant``); without a run directory the store
    is in memory. Only one process may open a local Qdrant directory at a time.

    Args:
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model.
        batch_size: texts per forward pass when indexing.
        in_memory: keep everything in memory even inside a run directory.
        workdir: the run's store directory (given by the runner).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    requires = (("qdrant_client", "vector"), *MINILM_REQUIRES)
    """Optional modules, checked when the name is looked up."""

    system = "qdrant"

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        batch_size: int = DEFAULT_BATCH,
        in_memory: bool = False,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        self.path = None if (in_memory or workdir is None) else data_dir(workdir, "qdrant", self)
        super().__init__(model, batch_size, tie_seed)

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
                raise locked(self.path, "qdrant", e) from None
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

    def delete(self, memory_id: str) -> None:
        """Forget every version of one memory."""
        m = self._models
        if self._pending:
            self.flush()
        cond = m.FieldCondition(key="memory_id", match=m.MatchValue(value=str(memory_id)))
        with self._lock:
            self.client.delete(
                _COLLECTION, points_selector=m.FilterSelector(filter=m.Filter(must=[cond]))
            )
            self._ids.pop(str(memory_id), None)
