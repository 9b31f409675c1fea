"""The shared HTTP layer against a real, scriptable HTTP server on 127.0.0.1."""

from __future__ import annotations

import email.utils
import json
import pickle
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mnemometer.errors import MnemometerError
from mnemometer.http import HttpClient, HttpError, error_detail, parse_retry_after


@dataclass
class Answer:
    """One scripted reply."""

    status: int = 200
    body: bytes = b'{"ok": true}'
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    hold: threading.Event | None = None
    """Keep the request waiting until this is set, then hang up: a reply that never comes."""
    truncate: bool = False
    """Promise the whole body, send half, hang up."""


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    """time.monotonic() when the request arrived."""
    port: int
    """The client's port: one per connection."""


class Service:
    """A scriptable HTTP/1.1 server (keep-alive) that records every request."""

    def __init__(self) -> None:
        self.script: list[Answer] = []
        self.seen: list[Seen] = []
        self.default = lambda seen: Answer(body=json.dumps({"echo": seen.body}).encode())
        self.lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen = Seen(
                    self.command,
                    self.path,
                    dict(self.headers),
                    json.loads(raw) if raw else None,
                    time.monotonic(),
                    self.client_address[1],
                )
                with service.lock:
                    service.seen.append(seen)
                    answer = service.script.pop(0) if service.script else service.default(seen)
                if answer.hold is not None:
                    answer.hold.wait(10)
                    self.close_connection = True  # the client gave up on this connection
                    return
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                for k, v in answer.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(answer.body)))
                if answer.truncate:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(
                    answer.body[: len(answer.body) // 2] if answer.truncate else answer.body
                )

            do_GET = do_POST = do_PUT = do_DELETE = _handle  # noqa: N815

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service()
    yield svc
    svc.close()


def error(status: int, message: str, **headers: str) -> Answer:
    return Answer(status, json.dumps({"error": {"message": message}}).encode(), headers)


def test_json_in_json_out_with_headers_params_and_empty_replies(service: Service) -> None:
    with HttpClient(service.url + "/api/", headers={"Authorization": "Bearer k"}) as client:
        assert client.request_json("POST", "/search", json={"q": "Phoenix"}) == {
            "echo": {"q": "Phoenix"}
        }
        service.script.append(Answer(204, b""))
        assert client.request_json("DELETE", "/users/u1") is None
        client.request_json("GET", "/search", params={"q": "a b", "k": 5})
    first, _, third = service.seen
    assert (first.method, first.path) == ("POST", "/api/search")
    assert first.headers["Authorization"] == "Bearer k"
    assert first.headers["Content-Type"] == "application/json"
    assert first.headers["User-Agent"].startswith("mnemometer")
    assert third.path == "/api/search?q=a+b&k=5"


def test_retries_429_and_503_honouring_retry_after(service: Service) -> None:
    service.script += [
        error(429, "slow down", **{"Retry-After": "1"}),
        error(503, "warming up", **{"Retry-After": "0"}),
    ]
    # A back-off of 5 s would dominate unless Retry-After wins, in both directions.
    client = HttpClient(service.url, retries=3, backoff=5.0)
    assert client.request_json("POST", "/chat", json={"n": 1}) == {"echo": {"n": 1}}
    first, second, third = (s.at for s in service.seen)
    assert second - first >= 1.0  # waited at least Retry-After: 1
    assert third - second < 1.0  # Retry-After: 0 beat the 5 s back-off


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504])
def test_transient_statuses_are_retried(service: Service, status: int) -> None:
    service.script.append(error(status, "transient"))
    assert HttpClient(service.url, retries=1, backoff=0).request_json("GET", "/x") == {"echo": None}
    assert len(service.seen) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 422, 501])
def test_client_errors_are_not_retried_and_carry_the_server_detail(
    service: Service, status: int
) -> None:
    service.script.append(error(status, "bad field 'q'"))
    with pytest.raises(HttpError) as info:
        HttpClient(service.url, retries=3, backoff=0).request_json("POST", "/s", json={})
    assert len(service.seen) == 1
    e = info.value
    assert (e.kind, e.status, e.detail, e.attempts) == ("status", status, "bad field 'q'", 1)
    assert str(e) == f"POST {service.url}/s: HTTP {status}: bad field 'q'"


def test_gives_up_after_a_bounded_number_of_attempts(service: Service) -> None:
    service.script += [error(500, "index unavailable")] * 5
    with pytest.raises(HttpError, match=r"gave up after 3 attempts; last: HTTP 500: index") as info:
        HttpClient(service.url, retries=2, backoff=0).request_json("GET", "/s")
    assert len(service.seen) == 3 and info.value.attempts == 3
    service.script += [error(500, "index unavailable")]
    with pytest.raises(HttpError, match=r"^GET .*/s: HTTP 500"):  # a per-call override
        HttpClient(service.url, retries=2, backoff=0).request_json("GET", "/s", retries=0)
    assert len(service.seen) == 4


def test_connection_refused_is_one_line_naming_the_url() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = HttpClient(f"http://127.0.0.1:{port}", retries=2, backoff=0)
    with pytest.raises(HttpError) as info:
        client.request_json("GET", "/models")
    e = info.value
    assert e.kind == "unreachable" and isinstance(e, MnemometerError)
    message = str(e)
    assert "\n" not in message
    assert message.startswith(f"cannot reach http://127.0.0.1:{port}/models after 3 attempts (")
    assert "Connection refused" in message and message.endswith("; is the server running?")


def test_timeout_is_reported_as_a_timeout_not_as_unreachable(service: Service) -> None:
    release = threading.Event()
    service.script.append(Answer(hold=release))
    client = HttpClient(service.url, timeout=30, retries=0)
    t0 = time.monotonic()
    try:
        with pytest.raises(HttpError) as info:
            client.request_json("POST", "/slow", json={}, timeout=0.2)  # per-call override
    finally:
        release.set()
    assert time.monotonic() - t0 < 5
    e = info.value
    assert e.kind == "timeout" and e.retryable
    assert str(e) == f"POST {service.url}/slow: timed out after 0.2 s (waiting for the reply)"
    assert "cannot reach" not in str(e)


def test_a_timeout_then_a_refused_connection_is_not_reported_as_never_reached() -> None:
    """A busy server that went away between attempts was running: say it timed out first."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    held: list[socket.socket] = []

    def busy_then_gone() -> None:
        conn, _ = listener.accept()  # take the first request and never answer it
        listener.close()  # the next attempt is refused
        held.append(conn)

    t = threading.Thread(target=busy_then_gone, daemon=True)
    t.start()
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=0.3, retries=1, backoff=0)
    try:
        with pytest.raises(HttpError) as info:
            client.request_json("POST", "/v1/chat/completions", json={})
    finally:
        t.join(5)
        for conn in held:
            conn.close()
    e = info.value
    assert e.kind == "unreachable" and e.history == ("timeout", "unreachable")
    assert "is the server running?" not in str(e)
    assert "timed out after 0.3 s (waiting for the reply)" in str(e)


def test_malformed_json_is_a_clear_error(service: Service) -> None:
    service.script += [Answer(body=b"<html>oops</html>", content_type="text/html")] * 2
    with pytest.raises(HttpError) as info:
        HttpClient(service.url, retries=1, backoff=0).request_json("GET", "/s")
    assert info.value.kind == "malformed" and len(service.seen) == 2
    assert str(info.value) == (
        f"GET {service.url}/s: gave up after 2 attempts; last: "
        "malformed JSON reply (HTTP 200, text/html): b'<html>oops</html>'"
    )


def test_truncated_body_is_retried(service: Service) -> None:
    service.script.append(Answer(body=b'{"ok": true, "padding": "xxxxxxxx"}', truncate=True))
    assert HttpClient(service.url, retries=1, backoff=0).request_json("GET", "/s") == {"echo": None}
    with pytest.raises(HttpError, match="the connection dropped"):
        service.script.append(Answer(body=b'{"ok": true, "padding": "xxxxxxxx"}', truncate=True))
        HttpClient(service.url).request_json("GET", "/s")


def test_concurrent_threads_share_one_client_and_its_connections(service: Service) -> None:
    def flaky(seen: Seen) -> Answer:
        n = seen.body["n"]
        first_try = sum(1 for s in service.seen if s.body and s.body["n"] == n) == 1
        if n % 4 == 0 and first_try:  # every fourth request fails once
            return error(503, "busy", **{"Retry-After": "0"})
        return Answer(body=json.dumps({"n": n}).encode())

    service.default = flaky
    client = HttpClient(service.url, retries=2, backoff=0)
    results: dict[int, Any] = {}
    failures: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(25):
                n = t * 100 + i
                results[n] = client.request_json("POST", "/echo", json={"n": n})["n"]
        except BaseException as e:  # surfaced below
            failures.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    assert not failures
    assert len(results) == 200 and all(k == v for k, v in results.items())
    asked_again = sum(1 for n in results if n % 4 == 0)  # failed once, then succeeded
    assert len(service.seen) == 200 + asked_again
    assert len({s.port for s in service.seen}) <= 8  # connections were pooled, not per request


def test_invalid_url_is_an_error_not_retried() -> None:
    with pytest.raises(HttpError, match="invalid URL") as info:
        HttpClient("ftp://example.invalid", retries=3).request_json("GET", "/x")
    assert info.value.kind == "invalid" and not info.value.retryable
    with pytest.raises(HttpError, match=r"^http://\[::1: invalid URL"):
        HttpClient("http://[::1")


def test_credentials_in_the_url_never_reach_the_message() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(HttpError) as info:
        HttpClient(f"http://user:s3cret@127.0.0.1:{port}").request_json("GET", "/x")
    assert "s3cret" not in str(info.value) and f"127.0.0.1:{port}/x" in str(info.value)


def test_error_survives_pickling() -> None:
    e = HttpError("status", "GET", "http://h/x", "HTTP 503: busy", status=503, retry_after=2.0)
    again = pickle.loads(pickle.dumps(e.after(3)))
    assert str(again) == "GET http://h/x: gave up after 3 attempts; last: HTTP 503: busy"
    assert (again.status, again.retry_after, again.attempts) == (503, 2.0, 3)


def test_retry_after_and_error_detail_parsing() -> None:
    assert parse_retry_after("3") == 3.0 and parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    in_30_s = email.utils.formatdate(time.time() + 30, usegmt=True)  # an HTTP date
    assert 28 <= parse_retry_after(in_30_s) <= 31
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert error_detail(b'{"error": {"message": "no such model"}}') == "no such model"
    assert error_detail(b'{"error": "unauthorised"}') == "unauthorised"
    assert error_detail(b'{"detail": [{"loc": ["q"]}]}') == '[{"loc": ["q"]}]'
    assert error_detail(b"Bad Gateway") == "Bad Gateway"
    assert error_detail(b"") == ""


# ---- a run's verdict that an endpoint is down (issue 30 §7) ------------------------------


def _closed_port() -> int:
    with socket.socket() as s:  # a port nobody listens on: every connection is refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_watched_run_stops_asking_an_endpoint_after_five_refusals_in_a_row() -> None:
    from mnemometer import outage
    from mnemometer.http import EndpointDown

    client = HttpClient(f"http://127.0.0.1:{_closed_port()}/v1", retries=3, backoff=0)
    watch = outage.Outages()
    with outage.watching(watch):
        with pytest.raises(HttpError) as first:  # four attempts: not yet a verdict
            client.request_json("POST", "/chat")
        assert first.value.kind == "unreachable" and client.last_attempts == 4
        assert watch.first is None and watch.failing
        with pytest.raises(EndpointDown) as second:  # the fifth: down, no more retries
            client.request_json("POST", "/chat")
        assert client.last_attempts == 1 and not second.value.retryable
        with pytest.raises(EndpointDown, match=r"/v1 is down \(5 connection failures in a"):
            client.request_json("POST", "/chat")  # refused at once, nothing sent
    assert watch.first is not None and watch.first.failures == 5
    assert "Connection refused" in watch.first.reason
    again = pickle.loads(pickle.dumps(second.value))
    assert isinstance(again, EndpointDown) and str(again) == str(second.value)
    # Outside a watched run nothing is counted: the same client keeps retrying.
    with pytest.raises(HttpError) as outside:
        client.request_json("POST", "/chat")
    assert outside.value.kind == "unreachable" and client.last_attempts == 4


def test_an_answer_or_a_timeout_starts_the_count_again_a_probe_is_not_counted(
    service: Service,
) -> None:
    from mnemometer import outage

    watch = outage.Outages(after=2)
    dead = HttpClient(f"http://127.0.0.1:{_closed_port()}", retries=0)
    with outage.watching(watch):
        for _ in range(3):  # waiting for a server to start is not a verdict
            with pytest.raises(HttpError):
                dead.request_json("GET", "/models", probe=True)
        assert watch.first is None and not watch.failing
        with pytest.raises(HttpError):
            dead.request_json("GET", "/x")
        assert watch.failing
    # Endpoints are told apart by origin: an answer from another does not help the dead one.
    live = HttpClient(service.url, retries=0, timeout=0.2)
    service.script.append(error(500, "an answer, if not a good one"))
    with outage.watching(watch):
        with pytest.raises(HttpError, match="HTTP 500"):
            live.request_json("GET", "/x")
        assert watch.failing
        watch.reached(dead.origin)  # as an answer from it would
        assert not watch.failing and watch.first is None
        # A timeout means the connection was accepted: slow, not down.
        watch.failed(live.origin, service.url, "ConnectError: refused")
        release = threading.Event()
        service.script.append(Answer(hold=release))
        with pytest.raises(HttpError, match="timed out"):
            live.request_json("GET", "/slow")
        release.set()
        assert not watch.failing and watch.first is None
