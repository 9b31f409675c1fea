"""The HTTP side of the test LLM server: routes, faults, JSON and SSE replies."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from mnemometer.testing._wire import sse_body


class Handler(BaseHTTPRequestHandler):
    """Routes of the test LLM server; ``server_ref`` is the :class:`FakeLLMServer`."""

    server_ref: Any
    protocol_version = "HTTP/1.1"
    # A reply goes out in two writes (headers, then body). With Nagle's algorithm on, the
    # body waits for the client's delayed ACK of the headers: ~40 ms per request on a
    # keep-alive connection. Real servers (uvicorn, Go, nginx) set TCP_NODELAY too.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # tests stay quiet

    def _send(
        self,
        status: int,
        payload: bytes,
        *,
        length: int | None = None,
        content_type: str = "application/json",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
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
        path = self.path.split("?")[0].rstrip("/")
        models = self.server_ref.models
        listing = [
            {"id": m, "object": "model", "created": 0, "owned_by": "mnemometer"} for m in models
        ]
        if path in ("/v1/models", "/models"):
            self._json(200, {"object": "list", "data": listing})
        elif path.rsplit("/", 1)[0] in ("/v1/models", "/models"):
            name = path.rsplit("/", 1)[1]
            found = [m for m in listing if m["id"] == name]
            if found:
                self._json(200, found[0])
            else:
                self._error(404, f"The model `{name}` does not exist", "model_not_found")
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
        path = self.path.split("?")[0].rstrip("/")
        srv._record(path, body)
        fault = srv._next_fault()
        if fault is not None and self._fault(fault, body):
            return
        model = body.get("model")
        is_embed = path.endswith("/embeddings")
        if model not in srv.models and not (is_embed and model in srv.embedding_models):
            self._error(404, f"The model `{model}` does not exist", "model_not_found")
            return
        if path.endswith("/chat/completions"):
            if srv.latency:
                time.sleep(srv.latency)  # a model's time; requests in flight wait together
            try:
                out = srv.answer_chat(body)
            except Exception as e:  # a rule that raises is the server's 500, as in real life
                srv._logged(path, body, 500, f"{type(e).__name__}: {e}")
                self._error(500, f"{type(e).__name__}: {e}", "server_error")
                return
            srv._logged(path, body, 200, out)
            if body.get("stream"):
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(sse_body(out, usage))
            else:
                self._json(200, out)
        elif is_embed:
            out = srv.answer_embeddings(body)
            srv._logged(path, body, 200, {**out, "data": f"{len(out['data'])} vectors"})
            self._json(200, out)
        else:
            self._error(404, f"no route {self.path}", "not_found")

    def _stream(self, payload: bytes) -> None:
        # Server-sent events, then hang up: the body's end is the connection's end.
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _fault(self, fault: Any, body: dict[str, Any]) -> bool:
        """Misbehave; True when the request is answered (every kind but ``slow``)."""
        srv = self.server_ref
        if fault.kind == "status":
            self.send_response(fault.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Retry-After", "0")
            payload = json.dumps({"error": {"message": f"scripted {fault.status}"}}).encode()
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return True
        if fault.kind == "malformed":
            self._send(200, b"<html>not json</html>")
            return True
        if fault.kind == "truncated":
            # Promise the whole body, send half, hang up: what a dropped proxy does.
            payload = json.dumps(srv.answer_chat(body)).encode()
            self.close_connection = True
            self._send(200, payload[: len(payload) // 2], length=len(payload))
            return True
        if fault.kind == "empty":
            self._json(200, {"object": "chat.completion", "choices": []})
            return True
        time.sleep(fault.delay)  # "slow": then answer normally
        return False
