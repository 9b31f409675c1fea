"""``http``: any agent service behind three configurable HTTP endpoints.

Config file (TOML, ``--config FILE``)::

    [agent]
    base_url = "http://127.0.0.1:9000"
    start_session = "POST /sessions"                  # JSON body: {"user_id", "system"}
    message = "POST /sessions/{session_id}/messages"  # JSON body: {"user_id", "session_id", "message"}
    close = "DELETE /users/{user_id}"                 # optional: forget this user's memory
    session_field = "session_id"                      # where the new session id is in the reply
    reply_field = "reply"                             # where the answer is (dots for nesting)
    timeout = 60
    retries = 0                                       # extra attempts after a transient failure
    headers = { Authorization = "Bearer ..." }

A message reply may also carry ``usage`` (``prompt_tokens``, ``completion_tokens``),
``memory_ms`` and ``llm_ms``; they are recorded when present. Every scenario gets its own
``user_id`` so the service keeps their memories apart. All scenarios share one
:class:`mnemometer.http.HttpClient`, so connections are pooled across the run's threads.
"""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from mnemometer.agents._protocol import Reply
from mnemometer.config import StrictModel, load_model
from mnemometer.errors import MnemometerError
from mnemometer.http import HttpClient

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


class HttpAgentConfig(StrictModel):
    """The ``[agent]`` table of an HTTP agent config file."""

    base_url: str
    """Service root, e.g. ``http://127.0.0.1:9000``."""
    start_session: str | None = "POST /sessions"
    """``METHOD /path`` that opens a session (``None``: sessions are client-side only)."""
    message: str = "POST /sessions/{session_id}/messages"
    """``METHOD /path`` that sends one user message."""
    close: str | None = None
    """``METHOD /path`` called when a scenario ends."""
    session_field: str = "session_id"
    """Field of the start-session reply holding the session id."""
    reply_field: str = "reply"
    """Field of the message reply holding the answer text (``a.b`` for nesting)."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds allowed per HTTP call."""
    retries: int = Field(default=0, ge=0)
    """Extra attempts after a transient failure (refused or dropped connection, timeout,
    408/409/425/429/5xx). Off by default: a message that timed out may have reached the
    agent, and sending it again would put it in the conversation twice."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers (an API key, ...)."""

    @field_validator("start_session", "message", "close")
    @classmethod
    def _route(cls, v: str | None) -> str | None:
        if v is None:
            return v
        method, _, path = v.partition(" ")
        if method.upper() not in _METHODS or not path.startswith("/"):
            raise ValueError(f"expected 'METHOD /path', got {v!r}")
        return v


def load_config(path: str | Path) -> HttpAgentConfig:
    """Read an HTTP agent config file.

    Raises:
        MnemometerError: unreadable, not TOML, or invalid (naming the key).
    """
    return load_model(path, HttpAgentConfig, table="agent", what="agent config")


class HttpAgentFactory:
    """A remote agent service driven over configurable HTTP endpoints.

    Args:
        config: path of the TOML config file (see the module docstring).
        base_url: overrides the config's ``base_url``.
    """

    def __init__(self, config: str | None = None, base_url: str | None = None) -> None:
        if config is None and base_url is None:
            raise MnemometerError("--agent http needs --config FILE (see docs/scenarios.md)")
        cfg = load_config(config) if config else HttpAgentConfig(base_url=str(base_url))
        if base_url:
            cfg = cfg.model_copy(update={"base_url": base_url})
        self.config = cfg
        self._http = _client(cfg)

    def resolved_options(self) -> dict[str, Any]:
        """The endpoints (headers left out: they may hold keys)."""
        return self.config.model_dump(exclude={"headers"})

    def create(self, namespace: str) -> HttpAgent:
        """An agent for one scenario under ``user_id = namespace``."""
        return HttpAgent(self.config, namespace, self._http)

    def close(self) -> None:
        """Release the pooled connections."""
        self._http.close()


class HttpAgent:
    """One conversation with the remote service.

    Args:
        config: the service's endpoints.
        user_id: this conversation's user (one per scenario).
        http: the client to send through (default: a new one for ``config``).
    """

    def __init__(
        self, config: HttpAgentConfig, user_id: str, http: HttpClient | None = None
    ) -> None:
        self.c = config
        self.user_id = user_id
        self.session_id = ""
        self._http = http or _client(config)

    def _call(self, route: str, body: dict[str, Any] | None) -> Any:
        method, _, path = route.partition(" ")
        values = {"user_id": self.user_id, "session_id": self.session_id}
        path = path.format(**{k: urllib.parse.quote(str(v), safe="") for k, v in values.items()})
        out = self._http.request_json(method, path, json=body)
        return {} if out is None else out

    def start_session(self, system: str | None = None) -> None:
        """Open a session on the service (or a client-side one)."""
        if self.c.start_session is None:
            self.session_id = f"{self.user_id}-{time.monotonic_ns()}"
            return
        out = self._call(self.c.start_session, {"user_id": self.user_id, "system": system})
        sid = _field(out, self.c.session_field)
        if sid in (None, ""):
            raise MnemometerError(
                f"start_session reply has no {self.c.session_field!r}: {out!r:.200}"
            )
        self.session_id = str(sid)

    def send(self, message: str) -> Reply:
        """Send one message; read the reply text and optional usage and timings."""
        out = self._call(
            self.c.message,
            {"user_id": self.user_id, "session_id": self.session_id, "message": message},
        )
        text = _field(out, self.c.reply_field)
        if not isinstance(text, str):
            raise MnemometerError(
                f"message reply has no text at {self.c.reply_field!r}: {out!r:.200}"
            )
        usage = out.get("usage") if isinstance(out, dict) else None
        tokens = {}
        if isinstance(usage, dict):
            tokens = {
                "prompt": int(usage.get("prompt_tokens") or 0),
                "completion": int(usage.get("completion_tokens") or 0),
            }
        mem = out.get("memory_ms") if isinstance(out, dict) else None
        llm = out.get("llm_ms") if isinstance(out, dict) else None
        return Reply(
            text,
            tokens,
            float(mem) if mem is not None else None,
            float(llm) if llm is not None else None,
        )

    def close(self) -> None:
        """Ask the service to forget this user, when configured."""
        if self.c.close is not None:
            self._call(self.c.close, None)


def _client(config: HttpAgentConfig) -> HttpClient:
    return HttpClient(
        config.base_url, headers=config.headers, timeout=config.timeout, retries=config.retries
    )


def _field(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj
