"""Mem0 as people deploy it: the hosted platform, or the self-hosted REST server.

:class:`Mem0Remote` speaks either wire format through :class:`mnemometer.http.HttpClient`
and offers the part of mem0's ``Memory`` that the ``mem0`` store and agent use (``add``,
``search``, ``delete``, ``delete_all``), so both run unchanged against a remote Mem0.

* ``platform`` (mem0's ``MemoryClient`` shapes): ``https://api.mem0.ai``, header
  ``Authorization: Token <MEM0_API_KEY>``; ``GET /v1/ping/`` checks the key,
  ``POST /v3/memories/add/`` (with ``async_mode: false``, so a search right after sees the
  memory), ``POST /v3/memories/search/`` with ``filters``, ``DELETE /v1/memories/{id}/``,
  ``DELETE /v1/memories/?user_id=``.
* ``server`` (the open-source FastAPI server, ``server/main.py``): ``MEM0_BASE_URL``, no
  ``/v1`` prefix, header ``X-API-Key`` when a key is set; ``POST /memories``,
  ``POST /search``, ``DELETE /memories/{id}``, ``DELETE /memories?user_id=``.

Both reply ``{"results": [...]}``; a bare list (older platform versions) is accepted too.
The key is read from the option or ``MNEMOMETER_MEM0_API_KEY`` / ``MEM0_API_KEY``, is
remembered as a secret (scrubbed from anything written) and is never part of
:meth:`Mem0Remote.describe`.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

from mnemometer._env import remember_secret
from mnemometer.errors import MnemometerError
from mnemometer.http import HttpClient, HttpError

MODES = ("embedded", "platform", "server")
PLATFORM_URL = "https://api.mem0.ai"


def _key(api_key: str | None) -> str | None:
    return api_key or os.environ.get("MNEMOMETER_MEM0_API_KEY") or os.environ.get("MEM0_API_KEY")


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`."""
    if mode not in MODES:
        raise MnemometerError(f"mem0: mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


class Mem0Remote:
    """A remote Mem0 (``platform`` or ``server``) behind mem0's ``Memory`` methods.

    Args:
        mode: ``platform`` or ``server``.
        url: the platform's or the server's base URL (server default: ``MEM0_BASE_URL``).
        api_key: the key (default: ``MEM0_API_KEY``); required by the platform.
        timeout: seconds per request.
        retries: extra attempts after a transient failure.
    """

    def __init__(
        self,
        mode: str,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 2,
    ) -> None:
        self.mode = check_mode(mode)
        key = _key(api_key)
        remember_secret(key)
        headers: dict[str, str] = {"Content-Type": "application/json"}
        if mode == "platform":
            if not key:
                raise MnemometerError(
                    "mem0 mode=platform needs an API key: set MEM0_API_KEY (from the Mem0 "
                    "dashboard) or -S api_key=..."
                )
            self.url = url or PLATFORM_URL
            headers["Authorization"] = f"Token {key}"
        else:
            self.url = url or os.environ.get("MNEMOMETER_MEM0_BASE_URL") or ""
            self.url = self.url or os.environ.get("MEM0_BASE_URL", "")
            if not self.url:
                raise MnemometerError(
                    "mem0 mode=server needs the server's URL: set MEM0_BASE_URL "
                    "(e.g. http://localhost:8888) or -S url=..."
                )
            if key:
                headers["X-API-Key"] = key
        self.http = HttpClient(self.url, headers=headers, timeout=timeout, retries=retries)
        if mode == "platform":
            self._check_key()

    def _check_key(self) -> None:
        try:
            self.http.request_json("GET", "/v1/ping/")
        except HttpError as e:
            if e.status in (401, 403):
                raise MnemometerError(
                    f"mem0 platform at {self.url} refused the API key (HTTP {e.status}); "
                    "check MEM0_API_KEY"
                ) from None
            raise

    def describe(self) -> dict[str, Any]:
        """Where the memories live, as ``mode`` and ``url`` options (never the key)."""
        return {"mode": self.mode, "url": self.url}

    def _path(self, platform: str, server: str) -> str:
        return platform if self.mode == "platform" else server

    @staticmethod
    def _results(reply: Any) -> dict[str, Any]:
        if isinstance(reply, list):
            return {"results": reply}
        if isinstance(reply, dict) and isinstance(reply.get("results", []), list):
            return reply
        raise MnemometerError(f"mem0: unexpected reply {str(reply)[:200]!r}")

    def add(
        self,
        messages: str | list[dict[str, str]],
        *,
        user_id: str,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
    ) -> dict[str, Any]:
        """Add messages (or one text) for ``user_id``; mem0's ``{"results": [...]}``."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        body: dict[str, Any] = {"messages": messages, "user_id": user_id, "infer": infer}
        if metadata:
            body["metadata"] = metadata
        if self.mode == "platform":
            body["async_mode"] = False
        path = self._path("/v3/memories/add/", "/memories")
        return self._results(self.http.request_json("POST", path, json=body))

    def search(
        self,
        query: str,
        *,
        filters: dict[str, Any],
        top_k: int = 10,
        threshold: float | None = None,
    ) -> dict[str, Any]:
        """The best ``top_k`` memories of ``filters["user_id"]``; ``{"results": [...]}``."""
        body: dict[str, Any] = {"query": query, "top_k": top_k}
        if self.mode == "platform":
            body["filters"] = filters
            if threshold:
                body["threshold"] = threshold
        else:
            body.update(filters)
        path = self._path("/v3/memories/search/", "/search")
        found = self._results(self.http.request_json("POST", path, json=body))
        return {"results": found["results"][:top_k]}

    def delete(self, memory_id: str) -> None:
        """Delete one memory."""
        mid = urllib.parse.quote(str(memory_id), safe="")
        self.http.request_json("DELETE", self._path(f"/v1/memories/{mid}/", f"/memories/{mid}"))

    def delete_all(self, *, user_id: str) -> None:
        """Delete every memory of ``user_id`` (never anyone else's)."""
        path = self._path("/v1/memories/", "/memories")
        self.http.request_json("DELETE", path, params={"user_id": user_id})

    def close(self) -> None:
        """Release the connection pool."""
        self.http.close()
