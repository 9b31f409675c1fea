"""A deterministic OpenAI-compatible HTTP server on 127.0.0.1, for tests.

It speaks the real protocol over real HTTP (``/v1/chat/completions``, ``/v1/embeddings``,
``/v1/models``), answers from rules you script, and can misbehave on demand (429, 500,
malformed or truncated bodies, slow replies) so clients and agents are tested against the
failures real endpoints produce.

Example::

    from mnemometer.testing import FakeLLMServer

    with FakeLLMServer(rules=[("name and city", "Darrin Phoenix")], default="OK") as srv:
        client = LLMClient(srv.base_url, srv.model)
        srv.fail_next(2, status=429)        # the next two requests get HTTP 429
        client.chat([...]).text             # retried, then "Darrin Phoenix"
        srv.requests                        # every decoded request body, in order

A rule is ``(match, reply)``. ``match`` is a substring of the last user message
(case-insensitive), a compiled regex searched in it, or a callable taking the request body.
``reply`` is a string, or a callable taking the request body and returning a string or a
full chat-completion dict. The first matching rule wins; otherwise ``default`` (a string or
callable) answers. Embeddings are deterministic bag-of-words hashes (same text, same vector;
shared words give a positive cosine).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | Callable[[dict[str, Any]], "str | dict[str, Any]"]
Match = str | re.Pattern[str] | Callable[[dict[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class Fault:
    """One scripted misbehaviour."""

    kind: str
    """``status`` (an HTTP error), ``malformed`` (not JSON), ``truncated`` (a body cut short),
    ``slow`` (answer after ``delay`` seconds) or ``empty`` (a reply with no choices)."""
    status: int = 500
    """HTTP status for ``status`` faults."""
    delay: float = 0.0
    """Seconds to wait before answering (``slow``)."""


def last_user_message(body: dict[str, Any]) -> str:
    """The content of the last ``user`` message in a chat request ("" if none)."""
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):  # OpenAI content parts
                return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def hash_embedding(text: str, dim: int = 64) -> list[float]:
    """A deterministic unit vector: hashed lower-case words, counted."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        vec[h % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeLLMServer:
    """A scriptable OpenAI-compatible server on 127.0.0.1 (a context manager).

    Args:
        rules: ``(match, reply)`` pairs tried in order.
        default: the reply when no rule matches.
        models: model ids served; requests for any other model get a 404 naming it.
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` get a 401.
        embedding_dim: size of the hashed embedding vectors.
        port: 0 picks a free port.
    """

    def __init__(
        self,
        rules: Sequence[tuple[Match, Reply]] = (),
        default: Reply = "OK",
        *,
        models: Sequence[str] = ("fake-llm",),
        api_key: str | None = None,
        embedding_dim: int = 64,
        port: int = 0,
    ) -> None:
        self.rules = list(rules)
        self.default = default
        self.models = list(models)
        self.api_key = api_key
        self.embedding_dim = embedding_dim
        self.requests: list[dict[str, Any]] = []
        """Every decoded request body (chat and embeddings), in arrival order."""
        self.paths: list[str] = []
        """The path of every request, in arrival order."""
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ----------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Bind and serve in a background thread."""
        handler = type("_Handler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        """The first served model id."""
        return self.models[0]

    # ---- scripting ----------------------------------------------------------------------

    def add_rule(self, match: Match, reply: Reply) -> None:
        """Append a rule."""
        with self._lock:
            self.rules.append((match, reply))

    def fail_next(
        self, n: int = 1, *, status: int = 500, kind: str = "status", delay: float = 0.0
    ) -> None:
        """Make the next ``n`` requests misbehave (see :class:`Fault`)."""
        if kind not in ("status", "malformed", "truncated", "slow", "empty"):
            raise ValueError(f"unknown fault kind {kind!r}")
        with self._lock:
            self._faults.extend(Fault(kind, status, delay) for _ in range(n))

    def chat_requests(self) -> list[dict[str, Any]]:
        """The chat-completion request bodies received so far."""
        with self._lock:
            return [
                b
                for b, p in zip(self.requests, self.paths, strict=True)
                if p.endswith("/chat/completions")
            ]

    # ---- answering (called from handler threads) ----------------------------------------

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)

    def answer_chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat-completion response for ``body``."""
        text = last_user_message(body)
        with self._lock:
            rules = list(self.rules)
        reply: Reply = self.default
        for match, candidate in rules:
            if _matches(match, text, body):
                reply = candidate
                break
        out = reply(body) if callable(reply) else reply
        if isinstance(out, dict):
            return out
        prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in body["messages"])
        completion_tokens = len(str(out).split())
        return {
            "id": "chatcmpl-"
            + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12],
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": str(out)},
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def answer_embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        """The embeddings response for ``body``."""
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": hash_embedding(str(t), self.embedding_dim),
            }
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(str(t).split()) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _matches(match: Match, text: str, body: dict[str, Any]) -> bool:
    if isinstance(match, str):
        return match.lower() in text.lower()
    if isinstance(match, re.Pattern):
        return match.search(text) is not None
    return bool(match(body))


class _Handler(BaseHTTPRequestHandler):
    server_ref: FakeLLMServer
    protocol_version = "HTTP/1.1"
    # A reply goes out in two writes (headers, then body). With Nagle's algorithm on, the
    # body waits for the client's delayed ACK of the headers: ~40 ms per request on a
    # keep-alive connection. Real servers (uvicorn, Go, nginx) set TCP_NODELAY too.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # tests stay quiet

    def _send(self, status: int, payload: bytes, *, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload) if length is None else length))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode())

    def _error(self, status: int, message: str, code: str = "error") -> None:
        self._json(status, {"error": {"message": message, "type": code, "code": code}})

    def _authorised(self) -> bool:
        key = self.server_ref.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "Incorrect API key provided", "invalid_api_key")
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if not self._authorised():
            return
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [
                {"id": m, "object": "model", "owned_by": "mnemometer"}
                for m in self.server_ref.models
            ]
            self._json(200, {"object": "list", "data": data})
        else:
            self._error(404, f"no route {self.path}", "not_found")

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        srv = self.server_ref
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self._authorised():
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._error(400, "request body is not JSON", "invalid_request_error")
            return
        path = self.path.rstrip("/")
        srv._record(path, body)
        fault = srv._next_fault()
        if fault is not None:
            if fault.kind == "status":
                self.send_response(fault.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Retry-After", "0")
                payload = json.dumps({"error": {"message": f"scripted {fault.status}"}}).encode()
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            if fault.kind == "malformed":
                self._send(200, b"<html>not json</html>")
                return
            if fault.kind == "truncated":
                # Promise the whole body, send half, hang up: what a dropped proxy does.
                payload = json.dumps(srv.answer_chat(body)).encode()
                self.close_connection = True
                self._send(200, payload[: len(payload) // 2], length=len(payload))
                return
            if fault.kind == "empty":
                self._json(200, {"object": "chat.completion", "choices": []})
                return
            time.sleep(fault.delay)  # "slow": then answer normally
        model = body.get("model")
        if model not in srv.models:
            self._error(404, f"The model `{model}` does not exist", "model_not_found")
            return
        if path.endswith("/chat/completions"):
            try:
                self._json(200, srv.answer_chat(body))
            except Exception as e:  # a rule that raises is the server's 500, as in real life
                self._error(500, f"{type(e).__name__}: {e}", "server_error")
        elif path.endswith("/embeddings"):
            self._json(200, srv.answer_embeddings(body))
        else:
            self._error(404, f"no route {self.path}", "not_found")


def echo_memories(body: dict[str, Any]) -> str:
    """A reply that lists the memories the prompt gave ("- " lines), or "Noted.".

    A deterministic stand-in for a perfect reader: what an agent retrieved is what it says,
    so scenario results measure the memory alone.
    """
    lines = [ln[2:] for ln in last_user_message(body).splitlines() if ln.startswith("- ")]
    return "; ".join(lines) if lines else "Noted."


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted: ``python -m mnemometer.testing --port 8090``."""
    import argparse

    p = argparse.ArgumentParser(description="A deterministic OpenAI-compatible server.")
    p.add_argument("--port", type=int, default=8090)
    p.add_argument("--model", default="fake-llm")
    p.add_argument(
        "--reply",
        default=None,
        help="fixed reply (default: echo the memories; judge requests get a verdict)",
    )
    args = p.parse_args(argv)
    from mnemometer.testing._bench import benchmark_reply

    srv = FakeLLMServer(
        default=args.reply if args.reply is not None else benchmark_reply,
        models=[args.model],
        port=args.port,
    ).start()
    print(f"serving {args.model} at {srv.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    main()
