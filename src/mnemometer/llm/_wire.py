"""How a client's requests reach a model: the one seam between the client and a protocol.

:class:`mnemometer.llm.LLMClient` builds OpenAI-shaped requests, caches replies, parses
JSON and counts tokens; a :class:`Wire` carries each request to the model and hands back an
OpenAI-shaped reply. :class:`OpenAIWire` posts it as it is to an OpenAI-compatible server;
:class:`mnemometer.llm._litellm.LiteLLMWire` has LiteLLM translate it for another provider
(Anthropic's Messages API, Gemini, Bedrock, ...). Both send through
:class:`mnemometer.http.HttpClient`, so retries, timeouts, a run's verdict on a dead
endpoint and the error messages are the same whatever the provider.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from mnemometer.http import HttpClient, HttpError
from mnemometer.llm._settings import LLMError, LLMSettings


class Wire(Protocol):
    """Carries an OpenAI-shaped request to a model and brings back an OpenAI-shaped reply."""

    def request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """The reply to ``method path`` with ``body`` (``/chat/completions``, ``/embeddings``).

        Raises:
            LLMError: the request failed; the message says why and what fixes it.
        """
        ...

    def models(self, probe: bool = False) -> list[str] | None:
        """Model ids served (``None`` for an unexpected reply); ``probe``: a check's.

        Raises:
            HttpError: the endpoint could not be asked (:meth:`LLMClient.check` waits on it).
        """
        ...

    def explain(self, e: HttpError) -> LLMError:
        """The transport's error, with the flag or command that fixes it."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class OpenAIWire:
    """Requests as they are, to an OpenAI-compatible server (the core; nothing extra).

    Args:
        settings: the endpoint, key, timeout and retries.
        backoff: first back-off between attempts, in seconds.
    """

    def __init__(self, settings: LLMSettings, backoff: float) -> None:
        self.settings = settings
        key = settings.api_key
        self._http = HttpClient(
            settings.base_url,
            headers={"Authorization": f"Bearer {key}"} if key else {},
            timeout=settings.timeout,
            retries=settings.max_retries,
            backoff=backoff,
        )

    def request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """See :meth:`Wire.request`."""
        try:
            data = self._http.request_json(method, path, json=body)
        except HttpError as e:
            raise self.explain(e) from None
        if not isinstance(data, dict):
            raise LLMError(
                f"{self.settings.base_url}{path}: the reply is not a JSON object: "
                f"{json.dumps(data)[:80]}"
            )
        return data

    def models(self, probe: bool = False) -> list[str] | None:
        """See :meth:`Wire.models`."""
        data = self._http.request_json("GET", "/models", probe=probe)
        try:
            return [str(m["id"]) for m in data["data"]]
        except (KeyError, TypeError):
            return None

    def explain(self, e: HttpError) -> LLMError:
        """See :meth:`Wire.explain`."""
        return explain(e, self.settings)

    def close(self) -> None:
        """See :meth:`Wire.close`."""
        self._http.close()


def explain(e: HttpError, settings: LLMSettings, provider: str | None = None) -> LLMError:
    """``e`` with the flag or command that fixes it, where we know one.

    Args:
        e: the transport's error.
        settings: the client's settings (timeout, model, endpoint).
        provider: the LiteLLM provider asked (``None``: an OpenAI-compatible server).
    """
    if e.kind == "timeout" or (e.kind == "unreachable" and e.reached):
        return LLMError(
            f"{e}: the LLM endpoint is busy or slow, not down; allow it more time "
            "(--llm-timeout, MNEMOMETER_LLM_TIMEOUT or timeout in --llm-config's [llm] table, "
            f"now {settings.timeout:g} s per request) or ask for fewer tokens "
            "(-A max_tokens=32 for agents, --max-tokens for build)"
        )
    if e.kind == "unreachable":
        tries = f" after {e.attempts} attempts" if e.attempts > 1 else ""
        where = settings.base_url or e.url
        fix = (
            "start one with `mnemometer serve-llm` or pass --llm-base-url"
            if provider is None
            else f"check --llm-base-url (none: {provider}'s own endpoint)"
        )
        return LLMError(
            f"cannot reach the LLM endpoint {where}{tries} ({e.reason}); "
            f"is the server running? {fix}"
        )
    if e.status in (401, 403):
        return LLMError(
            f"{e.url}: the API key was rejected (HTTP {e.status}: {e.detail}); "
            "set MNEMOMETER_LLM_API_KEY or pass --llm-api-key"
        )
    if e.status == 404 and "model" in e.detail.lower():
        listing = "the server's /models" if provider is None else f"{provider}'s model names"
        return LLMError(
            f"{e.url}: model {settings.model!r} not found ({e.detail}); "
            f"check --llm-model against {listing}"
        )
    return LLMError(str(e))
