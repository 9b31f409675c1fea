"""A metering relay on 127.0.0.1 in front of a store's LLM endpoint.

Real memory systems call their LLM through their own SDKs (openai, litellm, langchain),
each with its own retries and none with a common way to count. Pointing the system at
this relay instead of the endpoint counts what it really sends, whatever the SDK: every
chat completion (retries included), the tokens the endpoint reported, and the seconds
spent waiting. A store takes a snapshot before and after each memory's ingest; the
difference is what that memory cost.

The relay forwards each request unchanged (method, path below the base URL, headers,
body) and the reply unchanged (status, content type, body); it adds no retries of its
own. For a provider's model (``--llm-model anthropic/...``, the ``[providers]`` extra) it
answers chat completions itself instead, through the LLM client (:func:`relay_for`): the
system speaks OpenAI to the relay and LiteLLM speaks the provider's protocol onwards. Optionally it answers ``/embeddings`` itself with a local embedding function (the
packaged MiniLM), so a system that embeds through an OpenAI-compatible endpoint does so
in-process, without the LLM endpoint serving embeddings.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

Embed = Callable[[list[str]], list[list[float]]]

# Hop-by-hop headers and those httpx recomputes: never forwarded.
_DROP = frozenset(
    "host content-length connection keep-alive transfer-encoding te trailer upgrade "
    "proxy-authorization proxy-connection accept-encoding content-encoding".split()
)


@dataclass(frozen=True, slots=True)
class Meter:
    """Running totals of a relay (subtract two snapshots for the cost in between)."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    failed_calls: int = 0
    embed_calls: int = 0
    unreachable: int = 0

    def __sub__(self, other: Meter) -> Meter:
        return Meter(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def __add__(self, other: Meter) -> Meter:
        return Meter(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


class LLMRelay:
    """Forward ``/v1/...`` on 127.0.0.1 to ``upstream`` and count chat completions.

    Args:
        upstream: the real endpoint's base URL (with ``/v1``).
        embed: answer ``/embeddings`` locally with this function instead of forwarding.
        timeout: seconds allowed per upstream request.
        answer: answer chat completions with this client instead of forwarding (a
            provider's model: :func:`relay_for`); it is closed with the relay.
    """

    def __init__(
        self,
        upstream: str,
        *,
        embed: Embed | None = None,
        timeout: float = 600.0,
        answer: Any = None,
    ):
        self.upstream = upstream.rstrip("/")
        self.embed = embed
        self.answer = answer
        self._client = httpx.Client(timeout=timeout, follow_redirects=False)
        self._lock = threading.Lock()
        self._meter = Meter()
        handler = type("_RelayHandler", (_Handler,), {"relay": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name="mnemometer-llm-relay",
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: give this to the system instead of the endpoint."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def snapshot(self) -> Meter:
        """The totals so far."""
        with self._lock:
            return self._meter

    def _count(self, **delta: Any) -> None:
        with self._lock:
            self._meter = self._meter + Meter(**delta)

    def close(self) -> None:
        """Stop serving and release the port and the upstream connections."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._client.close()
        if self.answer is not None:
            self.answer.close()

    # ---- called from handler threads ----------------------------------------------------

    def forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple:
        """Send one request upstream: ``(status, content_type, body)``."""
        url = self.upstream + path
        chat = path.endswith("/chat/completions")
        t0 = time.perf_counter()
        try:
            r = self._client.request(method, url, headers=headers, content=body)
        except httpx.HTTPError as e:
            if chat:
                self._count(llm_calls=1, failed_calls=1, unreachable=1)
            msg = f"relay: cannot reach {url} ({type(e).__name__}: {e})"
            return 502, "application/json", json.dumps({"error": {"message": msg}}).encode()
        if chat:
            prompt, completion = _usage(r.content)
            self._count(
                llm_calls=1,
                prompt_tokens=prompt,
                completion_tokens=completion,
                llm_seconds=time.perf_counter() - t0,
                failed_calls=int(r.status_code >= 400),
            )
        return r.status_code, r.headers.get("content-type", "application/json"), r.content

    def answer_chat(self, body: bytes) -> tuple:
        """Answer a chat completion with :attr:`answer` (a provider's model), counted."""
        from mnemometer.errors import MnemometerError

        t0 = time.perf_counter()
        try:
            request = json.loads(body or b"{}")
            if request.get("stream"):
                raise MnemometerError("relay: a provider's model is not streamed; ask without")
            reply = self.answer.complete(request)
        except (ValueError, MnemometerError) as e:
            self._count(llm_calls=1, failed_calls=1)
            return 502, "application/json", json.dumps({"error": {"message": str(e)}}).encode()
        usage = reply.get("usage") or {}
        self._count(
            llm_calls=1,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            llm_seconds=time.perf_counter() - t0,
        )
        return 200, "application/json", json.dumps(reply).encode()

    def embeddings(self, body: bytes) -> tuple:
        """Answer ``/embeddings`` with the local function (float vectors)."""
        assert self.embed is not None
        req = json.loads(body or b"{}")
        texts = req.get("input", [])
        texts = [texts] if isinstance(texts, str) else [str(t) for t in texts]
        vectors = self.embed(texts) if texts else []
        self._count(embed_calls=1)
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts)}
        usage["total_tokens"] = usage["prompt_tokens"]
        out = {"object": "list", "data": data, "model": req.get("model"), "usage": usage}
        return 200, "application/json", json.dumps(out).encode()


def _usage(content: bytes) -> tuple[int, int]:
    """Prompt and completion tokens of a chat reply (JSON, or the last SSE usage)."""
    try:
        usage = (json.loads(content) or {}).get("usage") or {}
    except (ValueError, AttributeError):
        usage = {}
        for line in content.decode("utf-8", "replace").splitlines():
            if line.startswith("data:") and '"usage"' in line:
                try:
                    usage = json.loads(line[5:]).get("usage") or usage
                except ValueError:
                    continue
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


class _Handler(BaseHTTPRequestHandler):
    relay: LLMRelay
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path
        if path.startswith("/v1"):
            path = path[3:]
        if method == "POST" and path.split("?")[0].rstrip("/").endswith("/embeddings"):
            if self.relay.embed is not None:
                self._reply(*self.relay.embeddings(body))
                return
        answer = self.relay.answer
        if answer is not None and path.split("?")[0].rstrip("/") == "/chat/completions":
            self._reply(*self.relay.answer_chat(body))
            return
        if answer is not None and path.split("?")[0].rstrip("/") == "/models":
            listing = {"object": "list", "data": [{"id": answer.model, "object": "model"}]}
            self._reply(200, "application/json", json.dumps(listing).encode())
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _DROP}
        self._reply(*self.relay.forward(method, path, headers, body))

    def _reply(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        self._handle("POST")

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._handle("GET")


def relay_for(settings: Any, **options: Any) -> LLMRelay:
    """A relay in front of ``settings``' endpoint (:class:`mnemometer.llm.LLMSettings`).

    An OpenAI-compatible endpoint gets requests forwarded as they are; a provider's model
    (``anthropic/...``) gets them answered by an :class:`mnemometer.llm.LLMClient`, which
    has LiteLLM translate (uncached: the system's calls are what is measured).
    """
    if settings.provider is None:
        return LLMRelay(settings.base_url, **options)
    from dataclasses import replace

    from mnemometer.llm import LLMClient

    client = LLMClient.from_settings(replace(settings, cache_dir=None))
    where = settings.base_url or f"{settings.provider} (LiteLLM)"
    return LLMRelay(where, answer=client, **options)
