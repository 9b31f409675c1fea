"""Wire formats of the test LLM server: SSE chunks, embeddings (float or base64)."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any

# Words, then runs of punctuation (an opening brace joins them), closing braces alone:
# '{"a":"b c","d":1}' -> '{"', 'a', '":"', 'b', ' c', '","', 'd', '":', '1', '}'.
_TOKEN = re.compile(r"\s*[\w']+|\s*[^\w\s'}\]]+|[}\]]|\s+")


def hash_embedding(text: str, dim: int = 64) -> list[float]:
    """A deterministic unit vector: hashed lower-case words, counted."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        vec[h % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def fit(vec: Sequence[float], dim: int) -> list[float]:
    """``vec`` cut or zero-padded to ``dim`` and renormalised (OpenAI's ``dimensions``)."""
    out = list(vec[:dim]) + [0.0] * max(0, dim - len(vec))
    norm = math.sqrt(sum(v * v for v in out)) or 1.0
    return [v / norm for v in out]


def encode_vector(vec: Sequence[float], encoding_format: str | None) -> list[float] | str:
    """Floats, or base64 of little-endian float32 (``encoding_format: "base64"``)."""
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()
    return [float(v) for v in vec]


def decode_vector(data: str) -> list[float]:
    """The inverse of :func:`encode_vector` for base64 strings."""
    raw = base64.b64decode(data)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def embedding_inputs(body: dict[str, Any]) -> list[str]:
    """The texts of an embeddings request (token-id inputs become their ids as words)."""
    inputs = body.get("input")
    if isinstance(inputs, str):
        return [inputs]
    items = list(inputs or [])
    if items and all(isinstance(i, int) for i in items):
        return [" ".join(map(str, items))]
    return [" ".join(map(str, i)) if isinstance(i, list) else str(i) for i in items]


def embeddings_response(
    body: dict[str, Any],
    embed: Callable[[list[str]], list[list[float]]],
) -> dict[str, Any]:
    """An OpenAI embeddings response for ``body``, vectors from ``embed``."""
    texts = embedding_inputs(body)
    vectors = embed(texts) if texts else []
    dim = body.get("dimensions")
    fmt = body.get("encoding_format")
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": encode_vector(fit(v, int(dim)) if dim else v, fmt),
        }
        for i, v in enumerate(vectors)
    ]
    tokens = sum(len(t.split()) for t in texts)
    return {
        "object": "list",
        "data": data,
        "model": body.get("model"),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def sse_chunks(completion: dict[str, Any], include_usage: bool) -> Iterator[dict[str, Any]]:
    """A chat completion as OpenAI streaming chunks (delta by delta, usage last)."""
    base = {
        "id": completion.get("id", "chatcmpl-stream"),
        "object": "chat.completion.chunk",
        "created": completion.get("created", 0),
        "model": completion.get("model"),
    }
    if include_usage:
        base["usage"] = None
    choices = completion.get("choices") or []
    choice = choices[0] if choices else {"message": {}, "finish_reason": "stop"}
    message = choice.get("message") or {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\S+\s*|\s+", message.get("content") or ""):
        yield chunk({"content": piece})
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        head = {"index": i, "id": call.get("id"), "type": "function"}
        yield chunk(
            {"tool_calls": [{**head, "function": {"name": fn.get("name"), "arguments": ""}}]}
        )
        # Token by token, as a model emits them: clients that parse the arguments while
        # they stream (Letta's send_message reader) depend on where the fragments break.
        for part in _TOKEN.findall(fn.get("arguments") or ""):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage:
        yield {**base, "choices": [], "usage": completion.get("usage")}


def sse_body(completion: dict[str, Any], include_usage: bool) -> bytes:
    """The whole ``text/event-stream`` body, ``data: [DONE]`` last."""
    events = [f"data: {json.dumps(c)}\n\n" for c in sse_chunks(completion, include_usage)]
    events.append("data: [DONE]\n\n")
    return "".join(events).encode()
