"""Graphiti's pluggable parts, made of ours: the LLM client, the embedder and the reranker.

Imported only by :mod:`mnemometer.stores.graphiti`, after ``graphiti_core`` is known to be
installed (the classes subclass Graphiti's own).
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from graphiti_core.cross_encoder.client import CrossEncoderClient
from graphiti_core.embedder.client import EmbedderClient, EmbedderConfig
from graphiti_core.llm_client.client import is_server_or_retry_error
from graphiti_core.llm_client.config import LLMConfig
from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

from mnemometer.embeddings import Embedder


class _Client(OpenAIGenericClient):
    """The generic OpenAI-compatible client with a short, bounded retry.

    Graphiti's own retry waits 5 to 120 s between four attempts; a reply that is not valid
    JSON is retried ``retries`` times after a short pause, then the memory fails.
    """

    retries = 1

    async def _generate_response_with_retry(
        self,
        messages: Any,
        response_model: Any = None,
        max_tokens: int = 16384,
        model_size: Any = None,
        *,
        model: str | None = None,
    ) -> dict[str, Any]:
        from graphiti_core.llm_client.config import ModelSize

        size = model_size if model_size is not None else ModelSize.medium
        extra = {"model": model} if model is not None else {}
        for attempt in range(self.retries + 1):
            try:
                return await self._generate_response(
                    messages, response_model, max_tokens, size, **extra
                )
            except Exception as e:
                if attempt >= self.retries or not is_server_or_retry_error(e):
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")


def llm_client(store: Any) -> OpenAIGenericClient:
    """Graphiti's LLM client for ``store``: through its relay, with its retry budget."""
    s = store.settings
    config = LLMConfig(
        api_key=s.api_key or "sk-local",
        model=s.model,
        small_model=s.model,
        base_url=store.relay.base_url,
    )
    client = _Client(config=config, structured_output_mode=store.structured_output)
    client.retries = store.llm_retries
    return client


class _Embedder(EmbedderClient):
    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.config = EmbedderConfig(embedding_dim=model.dim)

    async def create(self, input_data: Any) -> list[float]:
        text = input_data[0] if isinstance(input_data, list) and input_data else input_data
        return self.model.encode_one(str(text)).tolist()

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        if not input_data_list:
            return []
        return self.model.encode([str(t) for t in input_data_list]).tolist()


class _Reranker(CrossEncoderClient):
    """Cosine similarity in MiniLM space (Graphiti's BGE reranker is a hub download)."""

    def __init__(self, model: Embedder) -> None:
        self.model = model

    async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
        if not passages:
            return []
        vecs = self.model.encode([query, *passages])
        scores = np.asarray(vecs[1:]) @ np.asarray(vecs[0])
        return sorted(zip(passages, map(float, scores), strict=True), key=lambda p: -p[1])


def local_embedder(model: Embedder) -> EmbedderClient:
    """The packaged MiniLM (or any local model) as Graphiti's embedder."""
    return _Embedder(model)


def local_reranker(model: Embedder) -> CrossEncoderClient:
    """The same model as Graphiti's cross-encoder (cosine)."""
    return _Reranker(model)
