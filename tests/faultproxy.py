"""A fault-injecting HTTP proxy on 127.0.0.1, in front of one real server (issue 30).

It forwards each request to its upstream and misbehaves on a seeded share of them, the way
a flaky network, load balancer or dying service does; it can also echo the request's
credentials into every reply (a careless server), or go down (every connection reset).
Everything it does is counted, so tests assert on counts, never on time::

    with FaultProxy(srv.base_url, share=0.1, faults=("empty",)) as proxy:
        run(..., "--llm-base-url", proxy.url + "/v1")
        proxy.faulted        # how many requests got a fault
        proxy.share = 0.0    # healthy from here on
        proxy.down = True    # every request from here on: the connection is reset

Fault kinds: ``empty`` (a chat reply with ``"choices": []``), ``nomessage`` (a choice
without a message), ``status`` (HTTP 503, not forwarded), ``reset`` (the connection
dropped, not forwarded), ``applied-status`` and ``applied-reset`` (forwarded, so the
upstream applied it, then answered with 503 or dropped: what makes a retried write a
duplicate). Faults are drawn for ``POST`` requests only: a model listing or a health check
passes untouched (unless the proxy is down).
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import struct
import threading
import urllib.parse
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Seen:
    """One request the proxy received, and the fault it got (``None``: forwarded)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    kind: str | None

    def json(self) -> Any:
        """The body, decoded."""
        return json.loads(self.body)


class FaultProxy:
    """A proxy to ``upstream`` (its scheme, host and port; paths pass through).

    Args:
        upstream: the real server's URL.
        share: the share of requests that get a fault (drawn in arrival order from ``seed``).
        faults: the kinds drawn from, in turn.
        seed: seed of the draw.
        echo: quote the request's ``Authorization`` header first in every chat reply's content.
    """

    def __init__(
        self,
        upstream: str,
        *,
        share: float = 0.0,
        faults: Sequence[str] = ("empty",),
        seed: int = 0,
        echo: bool = False,
    ) -> None:
        parts = urllib.parse.urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.share = share
        self.faults = list(faults)
        self.echo = echo
        self.down = False
        """Reset every connection (counted in ``resets``) instead of forwarding."""
        self.counts: Counter[str] = Counter()
        """Requests by what happened to them: ``forwarded``, each fault kind, ``down``."""
        self.requests: list[Seen] = []
        """Every request that reached the proxy, in order."""
        self._rng = random.Random(seed)
        self._turn = 0
        self._lock = threading.Lock()
        handler = type("_Handler", (_Handler,), {"proxy": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: the upstream's paths work under it."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def faulted(self) -> int:
        """Requests that got a fault (``down`` resets not included)."""
        return sum(n for kind, n in self.counts.items() if kind not in ("forwarded", "down"))

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _draw(self, method: str, path: str, headers: dict[str, str], body: bytes) -> str | None:
        """The fault for this request (``None``: forward it), and count it."""
        with self._lock:
            if self.down:
                kind: str | None = "down"
            elif method == "POST" and self.share > 0 and self._rng.random() < self.share:
                kind = self.faults[self._turn % len(self.faults)]
                self._turn += 1
            else:
                kind = None
            self.counts[kind or "forwarded"] += 1
            self.requests.append(Seen(method, path, headers, body, kind))
            return kind

    def forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
        """Send the request upstream; its status, content type and body."""
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            conn.request(method, path, body=body or None, headers=headers)
            reply = conn.getresponse()
            return reply.status, reply.getheader("Content-Type", ""), reply.read()
        finally:
            conn.close()


class _Handler(BaseHTTPRequestHandler):
    proxy: FaultProxy
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        self._handle("POST")

    def _handle(self, method: str) -> None:
        proxy = self.proxy
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        kind = proxy._draw(method, self.path, headers, body)
        if kind in ("down", "reset"):
            return self._reset()
        if kind == "status":
            return self._reply(503, "application/json", b'{"error": "injected: overloaded"}')
        status, ctype, payload = proxy.forward(method, self.path, headers, body)
        if kind == "applied-reset":
            return self._reset()
        if kind == "applied-status":
            return self._reply(503, "application/json", b'{"error": "injected: after apply"}')
        if kind == "empty":
            payload = b'{"object": "chat.completion", "choices": []}'
        elif kind == "nomessage":
            payload = b'{"object": "chat.completion", "choices": [{"index": 0}]}'
        elif proxy.echo and status == 200 and b'"choices"' in payload:
            payload = _echo(payload, headers.get("Authorization", ""))
        self._reply(status, ctype, payload)

    def _reply(self, status: int, ctype: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype or "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _reset(self) -> None:
        """Drop the connection with a reset, answering nothing."""
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


def _echo(payload: bytes, authorization: str) -> bytes:
    """A chat reply whose content also quotes the request's credentials."""
    doc = json.loads(payload)
    message = doc["choices"][0]["message"]
    message["content"] = f"(you sent Authorization: {authorization}) {message.get('content') or ''}"
    return json.dumps(doc).encode()
