"""A test LLM for a Letta stack: it keeps Letta's ``human`` block and answers from it."""

from __future__ import annotations

from typing import Any

from mnemometer.services._letta_server import OPENAI_EMBEDDING_MODELS
from mnemometer.testing._memory import recall, remember
from mnemometer.testing.llm_server import FakeLLMServer


def memory_llm(embeddings: str = "hash", **options: Any) -> Any:
    """The test LLM for a Letta stack: it keeps the ``human`` block and answers from it.

    Every statement goes into the block with ``memory_insert``; questions are answered with
    the block's matching lines (:func:`mnemometer.testing.remember` and
    :func:`~mnemometer.testing.recall`). It serves the ``openai/text-embedding-*`` handles
    Letta offers, with hashed (1536-d) or MiniLM (384-d) vectors.
    """
    options.setdefault("default", recall("human"))
    options.setdefault("tool_rules", [remember("human")])
    return FakeLLMServer(
        mode="minimal",
        embeddings=embeddings,
        embedding_dim=1536,
        embedding_models=OPENAI_EMBEDDING_MODELS,
        **options,
    )
