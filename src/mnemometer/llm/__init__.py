"""OpenAI-compatible LLM client: retries, timeouts, a disk cache and token accounting.

Works against any server that speaks the OpenAI REST shape (OpenAI, DeepSeek, Ollama, vLLM,
llama.cpp's server, ``mnemometer serve-llm``, :mod:`mnemometer.testing.llm_server`).
Requests go through :class:`mnemometer.http.HttpClient` (pooled httpx connections, retries
with back-off from tenacity); this module adds what is particular to LLMs: the request
shapes, a disk cache, token accounting, and errors that name the flag or command to fix
them (a rejected key, an unknown model, no server running).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemometer.llm._cache import ReplyCache, request_key
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

if TYPE_CHECKING:
    from mnemometer.http import HttpError


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call (or running totals)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.cached_calls + other.cached_calls,
        )

    def as_dict(self) -> dict[str, int]:
        """Counts for a run log's ``tokens`` field."""
        return {"prompt": self.prompt_tokens, "completion": self.completion_tokens}


@dataclass(frozen=True, slots=True)
class ChatReply:
    """One chat completion."""

    text: str
    """The first choice's message content ("" when the model sent none)."""
    usage: Usage
    """Tokens of this call (zero when the server did not say)."""
    seconds: float
    """Wall time of the call, retries included (0 for a cache hit)."""
    cached: bool = False
    """True when the reply came from the disk cache."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The decoded response body."""


class LLMClient:
    """A small, thread-safe client for OpenAI-compatible chat and embeddings endpoints.

    One instance pools its connections; share it between threads, and :meth:`close` it (or
    use it as a context manager) when done.

    Args:
        base_url: endpoint root including ``/v1`` (``http://127.0.0.1:8080/v1``).
        model: model name sent with every request.
        api_key: bearer token, if the server wants one.
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
            sends OpenAI's structured-output form.
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
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # Imported here: httpx (and the CLI it imports with rich and pygments) costs a run
        # that never asks a model a tenth of a second or more.
        from mnemometer.http import HttpClient

        self._http = HttpClient(
            self.settings.base_url,
            headers=auth,
            timeout=self.settings.timeout,
            retries=self.settings.max_retries,
            backoff=self.backoff,
        )

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

    def close(self) -> None:
        """Release pooled connections (and the cache's file)."""
        self._http.close()
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
        data, seconds, cached = self._post("/chat/completions", body)
        try:
            message = data["choices"][0]["message"]
            text = message.get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LLMError(
                f"{self.settings.base_url}: chat reply has no choices[0].message: "
                f"{json.dumps(data)[:200]}"
            ) from None
        usage = _usage(data.get("usage"), cached)
        self._account(usage)
        return ChatReply(str(text), usage, 0.0 if cached else seconds, cached, data)

    def chat_json(
        self,
        messages: Sequence[Mapping[str, Any]],
        schema: Mapping[str, Any],
        *,
        name: str = "answer",
        **kwargs: Any,
    ) -> Any:
        """Ask for JSON constrained by ``schema`` and return it parsed.

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
        reply = self.chat(messages, response_format=fmt, **kwargs)
        try:
            return json.loads(reply.text)
        except json.JSONDecodeError:
            raise LLMError(
                f"model {self.model!r} did not return valid JSON: {reply.text[:200]!r}"
            ) from None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` with ``/embeddings``; one vector per text, in order.

        Raises:
            LLMError: the server's reply is not OpenAI-shaped (e.g. per-token vectors).
        """
        if not texts:
            return []
        body = {"model": self.settings.model, "input": list(texts)}
        data, _, cached = self._post("/embeddings", body)
        try:
            rows = sorted(data["data"], key=lambda r: r.get("index", 0))
            vectors = [[float(x) for x in r["embedding"]] for r in rows]
        except (KeyError, TypeError, ValueError):
            raise LLMError(
                f"{self.settings.base_url}/embeddings: reply is not OpenAI-shaped (one flat "
                "vector per input); llama.cpp's server returns per-token vectors — use the "
                "MiniLM model instead"
            ) from None
        if len(vectors) != len(texts):
            raise LLMError(f"/embeddings returned {len(vectors)} vectors for {len(texts)} texts")
        self._account(_usage(data.get("usage"), cached))
        return vectors

    def models(self) -> list[str]:
        """Model ids the endpoint serves (``GET /models``)."""
        from mnemometer.http import HttpError

        try:
            names = self._http_models()
        except HttpError as e:
            raise self._explain(e) from None
        if not isinstance(names, list):
            raise LLMError(f"{self.settings.base_url}/models: unexpected reply")
        return names

    def _http_models(self) -> list[str] | None:
        """``GET /models`` as ids (``None`` for an unexpected reply); transport errors raise."""
        data = self._http.request_json("GET", "/models")
        try:
            return [str(m["id"]) for m in data["data"]]
        except (KeyError, TypeError):
            return None

    def check(self, startup_wait: float | None = None) -> None:
        """Fail fast, before a run: the endpoint answers, the key works, the model exists.

        A server that refuses connections is given ``startup_wait`` seconds to come up
        (default: ``MNEMOMETER_LLM_STARTUP_WAIT``, else 20): ``mnemometer serve-llm --port
        8080 &`` followed at once by a run, as the docs write it, loads its model first.

        Raises:
            LLMError: with the fix.
        """
        if startup_wait is None:
            startup_wait = float(os.environ.get(ENV_PREFIX + "STARTUP_WAIT") or 20.0)
        give_up = time.monotonic() + startup_wait
        from mnemometer.http import HttpError

        while True:
            try:
                names = self._http_models()
                break
            except HttpError as e:
                if e.kind != "unreachable" or e.reached or time.monotonic() >= give_up:
                    error = self._explain(e)
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

    def _post(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float, bool]:
        key = None
        if self._cache is not None:
            key = request_key(self.settings.base_url, path, body)
            hit = self._cache.get(key)
            if hit is not None:
                return hit, 0.0, True
        t0 = time.perf_counter()
        data = self._request("POST", path, body)
        seconds = time.perf_counter() - t0
        if key is not None and self._cache is not None:
            self._cache.put(key, data)
        return data, seconds, False

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        from mnemometer.http import HttpError

        try:
            data = self._http.request_json(method, path, json=body)
        except HttpError as e:
            raise self._explain(e) from None
        if not isinstance(data, dict):
            raise LLMError(
                f"{self.settings.base_url}{path}: the reply is not a JSON object: "
                f"{json.dumps(data)[:80]}"
            )
        return data

    def _explain(self, e: HttpError) -> LLMError:
        """The transport's error, with the flag or command that fixes it where we know one."""
        if e.kind == "timeout" or (e.kind == "unreachable" and e.reached):
            return LLMError(
                f"{e}: the LLM endpoint is busy or slow, not down; allow it more time "
                "(--llm-timeout, MNEMOMETER_LLM_TIMEOUT or timeout in --llm-config's [llm] table, "
                f"now {self.settings.timeout:g} s per request) or ask for fewer tokens "
                "(-A max_tokens=32 for agents, --max-tokens for build)"
            )
        if e.kind == "unreachable":
            tries = f" after {e.attempts} attempts" if e.attempts > 1 else ""
            return LLMError(
                f"cannot reach the LLM endpoint {self.settings.base_url}{tries} ({e.reason}); "
                "is the server running? start one with `mnemometer serve-llm` or pass "
                "--llm-base-url"
            )
        if e.status in (401, 403):
            return LLMError(
                f"{e.url}: the API key was rejected (HTTP {e.status}: {e.detail}); "
                "set MNEMOMETER_LLM_API_KEY or pass --llm-api-key"
            )
        if e.status == 404 and "model" in e.detail.lower():
            return LLMError(
                f"{e.url}: model {self.model!r} not found ({e.detail}); "
                "check --llm-model against the server's /models"
            )
        return LLMError(str(e))


def _usage(raw: Any, cached: bool) -> Usage:
    if cached:
        return Usage(calls=1, cached_calls=1)
    if not isinstance(raw, Mapping):
        return Usage(calls=1)
    return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0), 1)


__all__ = [
    "ENV_PREFIX",
    "NO_ENDPOINT",
    "NO_MODEL",
    "ChatReply",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMSettings",
    "Usage",
    "find_settings",
    "require_settings",
    "resolve_settings",
]
