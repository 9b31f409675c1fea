"""``chroma``: Chroma embedded (``PersistentClient``) with our embedding function."""

from __future__ import annotations

from typing import Any

import numpy as np

from mnemometer._registry import require
from mnemometer.embeddings import MINILM_REQUIRES, Embedder
from mnemometer.envfile import quiet_libraries
from mnemometer.stores._vector import BufferedVectorStore

_COLLECTION = "mnemometer"


def _embedding_function(embedder: Embedder) -> Any:
    """A Chroma ``EmbeddingFunction`` over our embedder (Chroma's default one downloads)."""
    ef_mod = require("chromadb.api.types", "vector", "the chroma store")

    class MnemometerEmbedding(ef_mod.EmbeddingFunction):
        def __init__(self) -> None:
            self.embedder = embedder

        def __call__(self, input: Any) -> Any:  # noqa: A002 - Chroma's parameter name
            return list(self.embedder.encode(list(input)))

        @staticmethod
        def name() -> str:
            return "mnemometer"

        def get_config(self) -> dict[str, Any]:
            return {"model": self.embedder.path}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> Any:
            raise NotImplementedError("mnemometer builds its embedding function itself")

    return MnemometerEmbedding()


class ChromaStore(BufferedVectorStore):
    """Chroma embedded: a ``PersistentClient`` in the run directory, cosine space.

    Texts are embedded by our embedding function (the packaged MiniLM by default; Chroma's
    own default would try to download a model). Telemetry is off. Without a run directory
    the client is ephemeral (in memory). Options: ``model``, ``batch_size``, ``workdir`` and
    ``tie_seed``, as :class:`~mnemometer.stores._vector.BufferedVectorStore` says.
    """

    requires = (("chromadb", "vector"), *MINILM_REQUIRES)
    system = "chroma"

    def _open(self) -> None:
        quiet_libraries()
        chromadb = require("chromadb", "vector", "the chroma store")
        settings = chromadb.config.Settings(anonymized_telemetry=False, allow_reset=True)
        if self.path is None:
            self.client = chromadb.EphemeralClient(settings=settings)
        else:
            self.client = chromadb.PersistentClient(path=str(self.path), settings=settings)
        self._ef = _embedding_function(self.embedder)
        self._clear()

    def _clear(self) -> None:
        try:
            self.client.delete_collection(_COLLECTION)
        except Exception:  # noqa: S110 - absent collection; Chroma's error type varies by version
            pass
        self.col = self.client.create_collection(
            _COLLECTION, embedding_function=self._ef, metadata={"hnsw:space": "cosine"}
        )

    def _insert(self, rows: list[tuple[int, str, str]], vecs: np.ndarray) -> None:
        step = 1000
        for i in range(0, len(rows), step):
            part = rows[i : i + step]
            self.col.add(
                ids=[str(seq) for seq, _, _ in part],
                documents=[text for _, _, text in part],
                metadatas=[{"memory_id": mid} for _, mid, _ in part],
                embeddings=[v for v in vecs[i : i + step]],
            )

    def _query(self, text: str, vec: np.ndarray, n: int) -> list[tuple[str, float, str]]:
        n = min(n, self.col.count())
        if n == 0:
            return []
        res = self.col.query(
            query_texts=[text], n_results=n, include=["metadatas", "documents", "distances"]
        )
        return [
            (meta["memory_id"], 1.0 - dist, doc)
            for meta, dist, doc in zip(
                res["metadatas"][0], res["distances"][0], res["documents"][0], strict=True
            )
        ]

    def _delete(self, memory_id: str) -> None:
        self.col.delete(where={"memory_id": memory_id})
