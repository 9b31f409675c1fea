"""The LLM client: OpenAI-compatible requests, retries, timeouts, a disk cache and token accounting.

Works against any server that speaks the OpenAI REST shape (OpenAI, DeepSeek, Ollama, vLLM,
llama.cpp's server, ``mnemometer serve-llm``, :mod:`mnemometer.testing.llm_server`), and,
with the ``[providers]`` extra, any provider LiteLLM speaks: a model named
``PROVIDER/MODEL`` (``anthropic/claude-haiku-4-5``, ``gemini/...``, ``bedrock/...``) is
translated by LiteLLM (:mod:`mnemometer.llm._providers` says which names count). Either
way requests go through :class:`mnemometer.http.HttpClient` (pooled httpx connections,
retries with back-off from tenacity; :mod:`mnemometer.llm._wire` is the seam); this module
adds what is particular to LLMs: the request shapes, a disk cache, token accounting, and
errors that name the flag or command to fix them (a rejected key, an unknown model, no
server running).

Typical use::

    from mnemometer.llm import LLMClient

    llm = LLMClient.from_settings(base_url="http://127.0.0.1:8080/v1", model="smollm2")
    reply = llm.chat([{"role": "user", "content": "Hi"}], max_tokens=32)
    reply.text, reply.usage.total_tokens
    data = llm.chat_json(messages, schema={"type": "object", ...})   # parsed JSON
    vectors = llm.embed(["a text", "another"])
    llm.usage                                                        # running totals

Settings come from arguments, then the environment (``MNEMOMETER_LLM_BASE_URL``,
``MNEMOMETER_LLM_MODEL``, ``MNEMOMETER_LLM_API_KEY``, ``MNEMOMETER_LLM_CACHE``, and
``MNEMOMETER_LLM_STARTUP_WAIT`` for :meth:`LLMClient.check`), then a
config file (TOML; JSON when its name does not end in ``.toml``) with an ``[llm]`` table
holding the same keys (``base_url``, ``model``, ``api_key``, ``cache_dir``, ``timeout``,
``max_retries``), read through :func:`mnemometer.config.load_model`. A run resolves them
once where it enters (:func:`find_settings`) and hands them down; components take them
with :func:`require_settings`.

The client is thread-safe: one instance can serve concurrent scenarios.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mnemometer.llm._cache import ReplyCache, request_key
from mnemometer.llm._prices import Price, PriceBook, load_prices, no_price
from mnemometer.llm._providers import PROVIDERS, no_endpoint, provider_of
from mnemometer.llm._reply import ChatReply, Usage, _text, _usage
from mnemometer.llm._settings import (
    ENV_PREFIX,
    NO_ENDPOINT,
    NO_MODEL,
    LLMConfig,
    LLMError,
    LLMSettings,
    find_settings,
    require_settings,
    resolve_settings,
)
from mnemometer.llm._tokens import ESTIMATE, TokenCounter, count_tokens, counter_for

if TYPE_CHECKING:
    from mnemometer.llm._wire import Wire

T = TypeVar("T")


class LLMClient:
    """A small, thread-safe client for chat and embeddings, OpenAI-compatible or any provider.

    One instance pools its connections; share it between threads, and :meth:`close` it (or
    use it as a context manager) when done.

    Args:
        base_url: endpoint root including ``/v1`` (``http://127.0.0.1:8080/v1``); for a
            provider's model, its endpoint (empty: the provider's default).
        model: model name sent with every request; ``PROVIDER/MODEL`` asks that provider
            through LiteLLM (the ``[providers]`` extra).
        api_key: bearer token, if the server wants one (a provider's key, else LiteLLM
            reads the provider's own variable, ``ANTHROPIC_API_KEY``, ...).
        timeout: seconds allowed per HTTP attempt.
        max_retries: extra attempts after a transient failure (connection refused or
            dropped, a timeout, 408/409/425/429/5xx, a reply that is not JSON).
        backoff: first back-off in seconds; doubles each retry (with jitter), and a
            ``Retry-After`` header wins when present.
        cache_dir: directory for the disk cache (off when ``None``). Entries are keyed on
            the SHA-256 of the full request (URL, path and body), never on the key; one
            append-only file holds them (:mod:`mnemometer.llm._cache`).
        structured: how :meth:`chat_json` asks for a schema: ``json_object`` sends
            ``{"type": "json_object", "schema": ...}`` (llama.cpp, vLLM); ``json_schema``
            sends OpenAI's structured-output form (what a provider's model is sent either way).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        cache_dir: str | Path | None = None,
        structured: str = "json_object",
    ) -> None:
        if structured not in ("json_object", "json_schema"):
            raise LLMError(f"structured must be json_object or json_schema, got {structured!r}")
        if not model:  # a run's endpoint may name none; the component using it must
            raise LLMError(NO_MODEL)
        self.settings = LLMSettings(
            base_url.rstrip("/"),
            model,
            api_key,
            float(timeout),
            int(max_retries),
            Path(cache_dir) if cache_dir else None,
        )
        self.backoff = float(backoff)
        self.structured = structured
        self._lock = threading.Lock()
        self._usage = Usage()
        cache = self.settings.cache_dir
        self._cache = ReplyCache(cache) if cache is not None else None
        self.provider = provider_of(model)
        """The LiteLLM provider the model names (``anthropic``, ...), ``None`` for the core."""
        self._wire: Wire
        if self.provider is not None:
            from mnemometer.llm._litellm import LiteLLMWire

            self._wire = LiteLLMWire(self.settings, self.backoff, self.provider)
        elif not self.settings.base_url and (unknown := no_endpoint(model, "")):
            raise LLMError(unknown)  # antropic/claude-...: a misspelt provider
        else:
            # Imported here: httpx (and the CLI it imports with rich and pygments) costs a
            # run that never asks a model a tenth of a second or more.
            from mnemometer.llm._wire import OpenAIWire

            self._wire = OpenAIWire(self.settings, self.backoff)

    @classmethod
    def from_settings(cls, settings: LLMSettings | None = None, **kwargs: Any) -> LLMClient:
        """Build a client from :class:`LLMSettings`, or resolve them from ``kwargs``/env/file."""
        s = settings or resolve_settings(**kwargs)
        return cls(
            s.base_url,
            s.model,
            s.api_key,
            timeout=s.timeout,
            max_retries=s.max_retries,
            cache_dir=s.cache_dir,
        )

    @property
    def model(self) -> str:
        """The model name."""
        return self.settings.model

    @property
    def usage(self) -> Usage:
        """Running token totals over every call made through this client."""
        return self._usage

    @property
    def counter(self) -> TokenCounter:
        """How this client counts tokens: the model's tokenizer, or the labelled estimate."""
        return counter_for(self.settings.model)

    def close(self) -> None:
        """Release pooled connections (and the cache's file)."""
        self._wire.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- public calls -------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = 0,
        response_format: Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> ChatReply:
        """Ask for one chat completion.

        ``max_tokens`` is sent as such (llama.cpp ignores ``max_completion_tokens``); any
        ``extra`` field (``stop``, ``tools``, ...) is passed through unchanged.

        Raises:
            LLMError: unreachable endpoint, unknown model, bad key, or a malformed reply.
        """
        body = self._chat_body(messages, temperature, max_tokens, seed, response_format, extra)
        return self._chat(body)[0]

    def chat_json(
        self,
        messages: Sequence[Mapping[str, Any]],
        schema: Mapping[str, Any],
        *,
        name: str = "answer",
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = 0,
        **extra: Any,
    ) -> Any:
        """Ask for JSON constrained by ``schema`` and return it parsed.

        Takes :meth:`chat`'s options. A reply whose content is not JSON is never cached.

        Raises:
            LLMError: the model's content is not valid JSON.
        """
        if self.structured == "json_schema":
            fmt: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": dict(schema), "strict": True},
            }
        else:
            fmt = {"type": "json_object", "schema": dict(schema)}
        body = self._chat_body(messages, temperature, max_tokens, seed, fmt, extra)
        return self._chat(body, self._parse_json)[1]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` with ``/embeddings``; one vector per text, in order.

        Raises:
            LLMError: the server's reply is not OpenAI-shaped (e.g. per-token vectors).
        """
        if not texts:
            return []
        body = {"model": self.settings.model, "input": list(texts)}

        def accept(data: dict[str, Any]) -> list[list[float]]:
            try:
                rows = sorted(data["data"], key=lambda r: r.get("index", 0))
                vectors = [[float(x) for x in r["embedding"]] for r in rows]
            except (KeyError, TypeError, ValueError, AttributeError):
                raise LLMError(
                    f"{self.settings.base_url}/embeddings: reply is not OpenAI-shaped (one flat "
                    "vector per input); llama.cpp's server returns per-token vectors — use the "
                    "MiniLM model instead"
                ) from None
            if len(vectors) != len(texts):
                raise LLMError(
                    f"/embeddings returned {len(vectors)} vectors for {len(texts)} texts"
                )
            return vectors

        vectors, data, _, cached = self._post("/embeddings", body, accept)
        self._account(_usage(data.get("usage"), cached))
        return vectors

    def complete(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """One chat-completion request as a memory system sent it; the OpenAI-shaped reply.

        What :mod:`mnemometer.stores._llm_relay` answers a system's own calls with, for a
        provider's model: the body's ``model`` is this client's, nothing is cached (the
        system's calls are what is measured), the tokens are counted.

        Raises:
            LLMError: as :meth:`chat`.
        """
        data = self._request("POST", "/chat/completions", {**body, "model": self.model})
        self._account(_usage(data.get("usage"), False))
        return data

    def models(self) -> list[str]:
        """Model ids the endpoint serves (``GET /models``)."""
        from mnemometer.http import HttpError

        try:
            names = self._wire.models()
        except HttpError as e:
            raise self._wire.explain(e) from None
        if not isinstance(names, list):
            raise LLMError(f"{self.settings.base_url}/models: unexpected reply")
        return names

    def check(self, startup_wait: float | None = None) -> None:
        """Fail fast, before a run: the endpoint answers, the key works, the model exists.

        A server that refuses connections is given ``startup_wait`` seconds to come up
        (default: ``MNEMOMETER_LLM_STARTUP_WAIT``, else 20): ``mnemometer serve-llm --port
        8080 &`` followed at once by a run, as the docs write it, loads its model first.
        A provider's model is asked for one token instead of ``/models`` (uncounted, uncached:
        :meth:`mnemometer.llm._litellm.LiteLLMWire.models`).

        Raises:
            LLMError: with the fix.
        """
        if startup_wait is None:
            startup_wait = float(os.environ.get(ENV_PREFIX + "STARTUP_WAIT") or 20.0)
        give_up = time.monotonic() + startup_wait
        from mnemometer.http import HttpError

        while True:
            try:
                names = self._wire.models(probe=True)  # waiting for it is no verdict
                break
            except HttpError as e:
                if e.kind != "unreachable" or e.reached or time.monotonic() >= give_up:
                    error = self._wire.explain(e)
                    if e.kind == "unreachable" and startup_wait > 0:
                        error = LLMError(f"{error} (waited {startup_wait:g} s for it to start)")
                    raise error from None
                time.sleep(0.5)  # a server still starting: ask again shortly
        if not isinstance(names, list):
            raise LLMError(f"{self.settings.base_url}/models: unexpected reply")
        if names and self.model not in names:
            from mnemometer.errors import did_you_mean

            raise LLMError(
                f"model {self.model!r} is not served by {self.settings.base_url}"
                f"{did_you_mean(self.model, names)}; available: {', '.join(names[:10])}"
            )

    # ---- plumbing -----------------------------------------------------------------------

    def _account(self, usage: Usage) -> None:
        with self._lock:
            self._usage = self._usage + usage

    def _chat_body(
        self,
        messages: Sequence[Mapping[str, Any]],
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
        response_format: Mapping[str, Any] | None,
        extra: Mapping[str, Any],
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
        }
        if max_tokens is not None:
            body["max_tokens"] = int(max_tokens)
        if seed is not None:
            body["seed"] = int(seed)
        if response_format is not None:
            body["response_format"] = dict(response_format)
        body.update(extra)
        return body

    def _chat(
        self, body: dict[str, Any], parse: Callable[[str], Any] | None = None
    ) -> tuple[ChatReply, Any]:
        """One chat completion, and its text parsed by ``parse`` (``None`` without one)."""

        def accept(data: dict[str, Any]) -> tuple[str, Any]:
            try:
                message = data["choices"][0]["message"]
                text = str(message.get("content") or "")
            except (KeyError, IndexError, TypeError, AttributeError):
                raise LLMError(
                    f"{self.settings.base_url}: chat reply has no choices[0].message: "
                    f"{json.dumps(data)[:200]}"
                ) from None
            return text, parse(text) if parse is not None else None

        (text, parsed), data, seconds, cached = self._post("/chat/completions", body, accept)
        count = self.counter.count
        usage = replace(
            _usage(data.get("usage"), cached),
            counted_prompt_tokens=sum(count(_text(m.get("content"))) for m in body["messages"]),
            counted_completion_tokens=count(text),
        )
        self._account(usage)
        return ChatReply(text, usage, 0.0 if cached else seconds, cached, data), parsed

    def _parse_json(self, text: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise LLMError(
                f"model {self.model!r} did not return valid JSON: {text[:200]!r}"
            ) from None

    def _post(
        self, path: str, body: dict[str, Any], accept: Callable[[dict[str, Any]], T]
    ) -> tuple[T, dict[str, Any], float, bool]:
        """Ask or read the cache: ``accept``'s value, the reply, its seconds, whether cached.

        Only a reply ``accept`` takes is cached: one it refuses (``"choices": []`` from a
        faulty proxy, content that is not the JSON asked for) raises and is asked again
        next time. A cached reply it refuses (written by an older version) is asked again
        too, and the new reply's line supersedes it.
        """
        key = None
        if self._cache is not None:
            key = request_key(self.settings.base_url, path, body)
            hit = self._cache.get(key)
            if hit is not None:
                try:
                    return accept(hit), hit, 0.0, True
                except LLMError:
                    pass  # a bad reply cached by an older version: ask again
        t0 = time.perf_counter()
        data = self._request("POST", path, body)
        seconds = time.perf_counter() - t0
        value = accept(data)  # raises before anything is cached
        if key is not None and self._cache is not None:
            self._cache.put(key, data)
        return value, data, seconds, False

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        return self._wire.request(method, path, body)


__all__ = [
    "ENV_PREFIX",
    "ESTIMATE",
    "NO_ENDPOINT",
    "NO_MODEL",
    "PROVIDERS",
    "ChatReply",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMSettings",
    "Price",
    "PriceBook",
    "TokenCounter",
    "Usage",
    "count_tokens",
    "counter_for",
    "find_settings",
    "load_prices",
    "no_price",
    "provider_of",
    "require_settings",
    "resolve_settings",
]
