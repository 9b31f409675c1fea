"""A local stand-in for Mem0's hosted platform API and its self-hosted REST server.

Nothing but 127.0.0.1 is reachable in our tests, so the ``mem0`` store's and agent's remote
modes are tested against this: a real HTTP server speaking the documented request and reply
shapes (see :mod:`mnemometer.stores._mem0_remote`), with their authentication, that keeps
memories verbatim (no LLM extraction, whatever ``infer`` says) and ranks them by shared
words. It is a wire-format stand-in, not Mem0: scores from it say nothing about Mem0.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
import uuid
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from typing import Any

from mnemometer.testing._handler import Handler

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class FakeMem0Server:
    """Mem0's REST shapes on 127.0.0.1 (a context manager).

    Args:
        mode: ``platform`` (``/v1``–``/v3`` paths, ``Authorization: Token``) or ``server``
            (the open-source server's paths, ``X-API-Key`` when ``api_key`` is set).
        api_key: the key every request must carry (required for ``platform``).

    Attributes:
        url: ``http://127.0.0.1:<port>``.
        requests: ``(method, path, headers)`` of every request, in order.
        memories: id → the stored memory.
    """

    def __init__(self, mode: str = "server", api_key: str | None = None) -> None:
        if mode not in ("platform", "server"):
            raise ValueError(f"mode must be platform or server, got {mode!r}")
        if mode == "platform" and not api_key:
            raise ValueError("the platform needs an api_key")
        self.mode = mode
        self.api_key = api_key
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.memories: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        handler = type("Mem0Handler", (_Handler,), {"srv": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread: threading.Thread | None = None

    def start(self) -> FakeMem0Server:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeMem0Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- what a route does ------------------------------------------------------------

    def authorised(self, headers: Any) -> bool:
        """Whether the request carries the key the mode expects."""
        if self.mode == "platform":
            return headers.get("Authorization") == f"Token {self.api_key}"
        return self.api_key is None or headers.get("X-API-Key") == self.api_key

    def add(self, body: dict[str, Any]) -> tuple[int, Any]:
        """Store each message of ``body`` verbatim under its ``user_id``."""
        user = body.get("user_id")
        messages = body.get("messages")
        if not user or not isinstance(messages, list):
            return 400, {"detail": "messages (a list) and user_id are required"}
        results = []
        with self.lock:
            for m in messages:
                mid = str(uuid.uuid4())
                self.memories[mid] = {
                    "id": mid,
                    "memory": str(m.get("content", "")),
                    "user_id": user,
                    "metadata": body.get("metadata") or {},
                    "created_at": datetime.now(UTC).isoformat(),
                }
                results.append({"id": mid, "memory": self.memories[mid]["memory"], "event": "ADD"})
        if self.mode == "platform" and body.get("async_mode", True) is not False:
            queued = "Memory processing has been queued for background execution"
            return 200, {"results": [{"message": queued, "status": "PENDING", "event_id": "e1"}]}
        return 200, {"results": results}

    def search(self, body: dict[str, Any]) -> tuple[int, Any]:
        """Memories of the user, ranked by words shared with the query."""
        if self.mode == "platform":
            if "user_id" in body:
                return 400, {"detail": "top-level user_id is not supported; use filters"}
            user = (body.get("filters") or {}).get("user_id")
        else:
            user = body.get("user_id")
        if not user or not isinstance(body.get("query"), str):
            return 400, {"detail": "query and a user_id are required"}
        q = _words(body["query"])
        with self.lock:
            rows = [dict(m) for m in self.memories.values() if m["user_id"] == user]
        for r in rows:
            r["score"] = len(q & _words(r["memory"])) / (len(q) or 1)
        rows = [r for r in rows if r["score"] > 0]
        rows.sort(key=lambda r: (-r["score"], r["created_at"]))
        return 200, {"results": rows[: int(body.get("top_k") or 100)]}

    def delete(self, mid: str) -> tuple[int, Any]:
        """Delete one memory."""
        with self.lock:
            if self.memories.pop(mid, None) is None:
                return 404, {"detail": "Memory not found"}
        return 200, {"message": "Memory deleted successfully!"}

    def delete_all(self, query: dict[str, list[str]]) -> tuple[int, Any]:
        """Delete every memory of the ``user_id`` query parameter."""
        user = (query.get("user_id") or [""])[0]
        if not user:
            return 400, {"detail": "At least one identifier is required."}
        with self.lock:
            for mid in [k for k, m in self.memories.items() if m["user_id"] == user]:
                del self.memories[mid]
        return 200, {"message": "Memories deleted successfully!"}


class _Handler(Handler):
    """Mem0's routes on the test servers' JSON plumbing (quiet, no Nagle delay)."""

    srv: FakeMem0Server

    def _reply(self, status: int, obj: Any) -> None:
        self._json(status, obj)

    def _route(self, method: str) -> None:
        srv = self.srv
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urllib.parse.urlsplit(self.path)
        path, query = parts.path, urllib.parse.parse_qs(parts.query)
        srv.requests.append((method, path, dict(self.headers.items())))
        if not srv.authorised(self.headers):
            return self._reply(401, {"detail": "Invalid API key"})
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            return self._reply(400, {"detail": "body is not JSON"})
        self._reply(*self._dispatch(method, path, body, query))

    def _dispatch(
        self, method: str, path: str, body: Any, query: dict[str, list[str]]
    ) -> tuple[int, Any]:
        srv = self.srv
        p = "/v1/memories/" if srv.mode == "platform" else "/memories"
        routes = {
            ("platform", "GET", "/v1/ping/"): lambda: (200, {"status": "ok", "org_id": "o"}),
            ("platform", "POST", "/v3/memories/add/"): lambda: srv.add(body),
            ("platform", "POST", "/v3/memories/search/"): lambda: srv.search(body),
            ("server", "POST", "/memories"): lambda: srv.add(body),
            ("server", "POST", "/search"): lambda: srv.search(body),
            (srv.mode, "DELETE", p): lambda: srv.delete_all(query),
        }
        if (srv.mode, method, path) in routes:
            return routes[(srv.mode, method, path)]()
        if method == "DELETE" and path.startswith(p):
            return srv.delete(urllib.parse.unquote(path[len(p) :].strip("/")))
        return 404, {"detail": f"Not Found: {method} {path}"}

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        self._route("POST")

    def do_DELETE(self) -> None:  # noqa: N802 - http.server naming
        self._route("DELETE")
