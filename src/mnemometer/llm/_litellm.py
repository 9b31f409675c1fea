"""Any provider through LiteLLM, sent by mnemometer's own HTTP layer (the ``[providers]`` extra).

LiteLLM translates: an OpenAI-shaped request becomes the provider's (Anthropic's
``/v1/messages`` with its headers, Gemini's ``generateContent``, a signed Bedrock call, ...)
and the provider's reply becomes an OpenAI-shaped one, its token counts in ``usage``.
LiteLLM does not send: it is handed an HTTP handler whose ``post`` goes through
:class:`mnemometer.http.HttpClient`, so retries, timeouts, ``Retry-After``, a run's verdict
on a dead endpoint (exit 75) and the deadline of an item apply as they do to the
OpenAI-compatible path, and a failed request is explained by the same messages. LiteLLM's
own retries are off; what it would fetch by itself (price maps, beta-header lists) is
switched off by :func:`mnemometer.envfile.quiet_libraries` before it is imported.

Decoding: ``seed`` and other options a provider does not take are dropped
(``drop_params``), never sent for it to refuse. A schema asked in llama.cpp's form
(``{"type": "json_object", "schema": ...}``, what judges and ``build`` send) is asked in
OpenAI's structured-output form, which LiteLLM translates for each provider (Anthropic's
``output_format``, or a forced tool for older models).
"""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any
from urllib.parse import urlsplit

from mnemometer.errors import MissingExtraError
from mnemometer.http import HttpClient, HttpError
from mnemometer.llm._providers import EXTRA, litellm_model
from mnemometer.llm._settings import LLMError, LLMSettings
from mnemometer.llm._wire import explain


def load_litellm() -> Any:
    """Import LiteLLM quietly and offline, or say which extra installs it.

    Raises:
        MissingExtraError: the ``[providers]`` extra is not installed.
    """
    from mnemometer.envfile import quiet_libraries

    quiet_libraries()  # before the import: it reads the switches then
    try:
        import litellm
    except ImportError:
        raise MissingExtraError("a provider-prefixed --llm-model", EXTRA, "litellm") from None
    litellm.suppress_debug_info = True  # no "Provider List: ..." banners on stdout
    # pydantic's notes on LiteLLM's own types, printed at its first reply: not the user's.
    warnings.filterwarnings("ignore", r".* (is|are) using the `ReadOnly` qualifier", UserWarning)
    litellm.telemetry = False
    return litellm


class LiteLLMWire:
    """A :class:`mnemometer.llm._wire.Wire` that has LiteLLM speak the provider's protocol.

    Args:
        settings: model (``anthropic/claude-...``), endpoint (empty: the provider's
            default), key (empty: the provider's own variable, ``ANTHROPIC_API_KEY``...),
            timeout and retries.
        backoff: first back-off between attempts, in seconds.
        provider: the provider the model names.
    """

    def __init__(self, settings: LLMSettings, backoff: float, provider: str) -> None:
        self._litellm = load_litellm()
        self.settings = settings
        self.provider = provider
        self.model = litellm_model(settings.model)
        self._handler = _handler_class(self._litellm)(settings, backoff)

    def request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """See :meth:`mnemometer.llm._wire.Wire.request`: chat completions and embeddings."""
        try:
            return self._send(method, path, body)
        except HttpError as e:
            raise self.explain(e) from None

    def models(self, probe: bool = False) -> list[str] | None:
        """See :meth:`mnemometer.llm._wire.Wire.models`: the model, once it answered one token.

        Providers have no common way to list models (or to check a key without asking), so
        :meth:`mnemometer.llm.LLMClient.check` asks the model for one token: the key, the
        model and the endpoint are then known to work. That request is not cached and not
        counted in the client's usage.
        """
        self._handler.probe = probe
        try:
            ping = {"messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
            self._send("POST", "/chat/completions", ping)
        finally:
            self._handler.probe = False
        return [self.settings.model]

    def _send(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """The OpenAI-shaped reply; the HTTP layer's failure raised as it is.

        Raises:
            HttpError: the request failed in the HTTP layer.
            Cancelled: the item's time ran out (:mod:`mnemometer.deadline`).
            LLMError: LiteLLM refused it before sending (missing credentials, ...).
        """
        body = dict(body or {})
        body.pop("model", None)
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_object" and "schema" in fmt:
            # llama.cpp's form, which LiteLLM drops: OpenAI's, which it translates.
            schema = {"name": "answer", "schema": fmt["schema"]}
            body["response_format"] = {"type": "json_schema", "json_schema": schema}
        call = {"/chat/completions": "completion", "/embeddings": "embedding"}.get(path)
        if method != "POST" or call is None:
            raise LLMError(f"{self.provider}: {method} {path} is not asked through LiteLLM")
        s = self.settings
        options: dict[str, Any] = {
            "model": self.model,
            "api_base": s.base_url or None,
            "api_key": s.api_key,
            "timeout": s.timeout,
            "client": self._handler,
            "max_retries": 0,  # the HTTP layer retries
            "num_retries": 0,
            "drop_params": True,
        }
        self._handler.failure = None
        try:
            reply = getattr(self._litellm, call)(**body, **options)
        except Exception as e:  # LiteLLM wraps everything; ours is the one that says why
            failure = self._handler.failure
            if failure is not None:  # what the HTTP layer raised, as the OpenAI path raises it
                raise failure from None
            raise self._translate(e) from None
        return json.loads(reply.model_dump_json())

    def explain(self, e: HttpError) -> LLMError:
        """See :meth:`mnemometer.llm._wire.Wire.explain` (the provider's key variable too)."""
        error = explain(e, self.settings, self.provider)
        if e.status in (401, 403):
            env = f"{self.provider.upper()}_API_KEY"
            return LLMError(f"{error} (or {env}, which LiteLLM reads for {self.provider})")
        return error

    def _translate(self, e: Exception) -> LLMError:
        """One line from a LiteLLM exception raised before anything was sent."""
        text = " ".join(str(e).split())
        for prefix in ("litellm.", type(e).__name__ + ":"):
            text = text.removeprefix(prefix).strip()
        if len(text) > 240:
            text = text[:240].rsplit(" ", 1)[0] + " ..."
        if "key" in text.lower() or "credential" in text.lower():
            text += f" (pass --llm-api-key, or set {self.provider.upper()}_API_KEY)"
        return LLMError(f"{self.provider} model {self.settings.model!r}: {text}")

    def close(self) -> None:
        """See :meth:`mnemometer.llm._wire.Wire.close`."""
        self._handler.close()


def _handler_class(litellm: Any) -> type:
    """LiteLLM's ``HTTPHandler`` with ``post`` sent through :class:`HttpClient`."""
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    class Handler(HTTPHandler):  # type: ignore[misc, valid-type]
        """What LiteLLM posts with: one pooled :class:`HttpClient` per origin."""

        def __init__(self, settings: LLMSettings, backoff: float) -> None:
            super().__init__(timeout=settings.timeout)
            self.settings = settings
            self.backoff = backoff
            self._by_origin: dict[str, HttpClient] = {}
            self._lock = threading.Lock()
            self._local = threading.local()

        @property
        def failure(self) -> Exception | None:
            """What the HTTP layer raised in the calling thread's current request, if anything."""
            return getattr(self._local, "failure", None)

        @failure.setter
        def failure(self, value: Exception | None) -> None:
            self._local.failure = value

        @property
        def probe(self) -> bool:
            """True while the calling thread checks the endpoint (not counted as down)."""
            return getattr(self._local, "probe", False)

        @probe.setter
        def probe(self, value: bool) -> None:
            self._local.probe = value

        def post(  # noqa: PLR0913 - LiteLLM's signature
            self,
            url: str,
            data: Any = None,
            json: Any = None,
            params: dict[str, Any] | None = None,
            headers: dict[str, Any] | None = None,
            stream: bool = False,
            timeout: Any = None,
            files: Any = None,
            content: Any = None,
            logging_obj: Any = None,
        ) -> Any:
            import httpx

            if stream or files:
                raise LLMError("streamed and multipart requests are not sent through LiteLLM")
            origin, path = _split(url)
            try:
                reply = self._origin_client(origin).request_json(
                    "POST",
                    path,
                    json=json,
                    content=content if content is not None else data,
                    params=params,
                    headers={k: str(v) for k, v in (headers or {}).items()},
                    probe=self.probe,
                )
            except Exception as e:  # HttpError, or Cancelled (the item's time is up)
                self.failure = e
                raise
            return httpx.Response(200, json=reply, request=httpx.Request("POST", url))

        def _origin_client(self, origin: str) -> HttpClient:
            with self._lock:
                client = self._by_origin.get(origin)
                if client is None:
                    s = self.settings
                    client = HttpClient(
                        origin, timeout=s.timeout, retries=s.max_retries, backoff=self.backoff
                    )
                    self._by_origin[origin] = client
                return client

        def close(self) -> None:
            with self._lock:
                for client in self._by_origin.values():
                    client.close()
                self._by_origin.clear()

    return Handler


def _split(url: str) -> tuple[str, str]:
    """``(scheme://host:port, /path?query)`` of an absolute URL."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{parts.scheme}://{parts.netloc}", path + (f"?{parts.query}" if parts.query else "")
