"""One HTTP layer for every client in mnemometer: JSON in, JSON out, one kind of error.

:class:`HttpClient` wraps a pooled, thread-safe ``httpx.Client`` bound to a base URL and
retries transient failures with exponential back-off (``tenacity``). It is what the LLM
client (:mod:`mnemometer.llm`), the ``http`` store and the ``http`` agent send their
requests through::

    from mnemometer.http import HttpClient

    with HttpClient("http://127.0.0.1:8000", headers={"Authorization": "Bearer ..."},
                    timeout=10, retries=2) as client:
        hits = client.request_json("POST", "/search", json={"query": "Phoenix"})
        client.request_json("GET", "/health", timeout=1)    # one call, its own timeout

Retried, up to ``retries`` times after the first attempt: a refused or failed connection, a
timeout, a dropped connection or truncated body, a reply that is not JSON, and HTTP 408,
409, 425, 429 and 5xx (except 501 and 505, which never change). A ``Retry-After`` header
(seconds or an HTTP date) sets the wait; otherwise it doubles from ``backoff`` with jitter.
Every failure, after the last attempt, is one :class:`HttpError` whose message says what
happened and where::

    cannot reach http://127.0.0.1:8000/search (ConnectError: [Errno 111] Connection refused); is the server running?
    POST http://127.0.0.1:8000/search: timed out after 10 s (waiting for the reply)
    POST http://127.0.0.1:8000/search: HTTP 500: index unavailable
    POST http://127.0.0.1:8000/search: malformed JSON reply (HTTP 200, text/html): b'<html>...'
    POST http://127.0.0.1:8000/search: gave up after 3 attempts; last: HTTP 503: overloaded

``timeout`` is per attempt: a call that is retried can take up to ``retries + 1`` timeouts
plus the waits between them.

Inside a run, every attempt is reported to the run's watch (:mod:`mnemometer.outage`):
after a few connection failures in a row an endpoint is down for the run, and a request to
it fails at once with :class:`EndpointDown`, retries included, instead of going through
its retry cycle item after item.
"""

from __future__ import annotations

import email.utils
import functools
import json as jsonlib
import ssl
import threading
import time
from collections.abc import Mapping
from typing import Any, Literal

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential, wait_random

from mnemometer import deadline, outage
from mnemometer.errors import MnemometerError

Kind = Literal["unreachable", "timeout", "dropped", "status", "malformed", "invalid", "down"]

# 501 Not Implemented and 505 HTTP Version Not Supported are answers, not hiccups.
_NEVER_RETRY_5XX = frozenset({501, 505})
_TIMEOUT_PHASE = {
    httpx.ConnectTimeout: "connecting",
    httpx.WriteTimeout: "sending the request",
    httpx.ReadTimeout: "waiting for the reply",
    httpx.PoolTimeout: "waiting for a free connection",
}


def retryable_status(status: int) -> bool:
    """True for statuses worth asking again: 408, 409, 425, 429 and 5xx but 501/505."""
    return status in (408, 409, 425, 429) or (
        500 <= status < 600 and status not in _NEVER_RETRY_5XX
    )


class HttpError(MnemometerError):
    """An HTTP call failed; the message says what happened and where.

    Args:
        kind: ``unreachable`` (no connection), ``timeout``, ``dropped`` (the connection
            broke mid-exchange), ``status`` (an HTTP error status), ``malformed`` (the
            reply is not JSON), ``invalid`` (the URL cannot be requested at all) or
            ``down`` (the run found the endpoint down: :class:`EndpointDown`).
        method: the request's method ("" when no request could be built).
        url: the request's URL, without credentials.
        reason: what went wrong, in words (``HTTP 500: index unavailable``).
        status: the HTTP status, when there was one.
        detail: the server's own error message, when it sent one.
        retry_after: seconds the server asked us to wait (``Retry-After``).
        attempts: how many attempts were made.
        history: the kind of every attempt's failure, in order (the last is ``kind``).
    """

    def __init__(
        self,
        kind: Kind,
        method: str,
        url: str,
        reason: str,
        *,
        status: int | None = None,
        detail: str = "",
        retry_after: float | None = None,
        attempts: int = 1,
        history: tuple[Kind, ...] = (),
    ) -> None:
        self.kind: Kind = kind
        self.method = method
        self.url = url
        self.reason = reason
        self.status = status
        self.detail = detail
        self.retry_after = retry_after
        self.attempts = attempts
        self.history: tuple[Kind, ...] = history or (kind,)
        self.first_reason = ""
        super().__init__(self._message())

    @property
    def reached(self) -> bool:
        """True when some attempt got through to the server (it timed out, dropped, answered)."""
        return any(k != "unreachable" for k in self.history)

    def _message(self) -> str:
        if self.kind == "unreachable" and self.reached:
            # A server that was busy and then went away (or stopped accepting) was running.
            return (
                f"{self.method} {self.url}: {self.first_reason}, then the server could not be "
                f"reached ({self.reason}) after {self.attempts} attempts"
            )
        if self.kind == "unreachable":
            tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
            return f"cannot reach {self.url}{tries} ({self.reason}); is the server running?"
        where = f"{self.method} {self.url}" if self.method else self.url
        if self.attempts > 1:
            return f"{where}: gave up after {self.attempts} attempts; last: {self.reason}"
        return f"{where}: {self.reason}"

    @property
    def retryable(self) -> bool:
        """True when asking again may succeed."""
        if self.kind == "status":
            return self.status is not None and retryable_status(self.status)
        return self.kind not in ("invalid", "down")

    def after(self, attempts: int, history: tuple[Kind, ...] = (), first: str = "") -> HttpError:
        """The same failure, reported as the last of ``attempts`` attempts."""
        err = HttpError(
            self.kind,
            self.method,
            self.url,
            self.reason,
            status=self.status,
            detail=self.detail,
            retry_after=self.retry_after,
            attempts=attempts,
            history=history,
        )
        if err.reached and err.kind == "unreachable":
            err.first_reason = first
            Exception.__init__(err, err._message())
        return err

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields do not survive the default Exception pickling (process pools).
        return (_restore, (self.__class__, self.__dict__))


class EndpointDown(HttpError):
    """The run found this endpoint down; nothing more is sent to it (see :mod:`mnemometer.outage`).

    Args:
        method: the request's method.
        verdict: the run's verdict on the endpoint.
    """

    def __init__(self, method: str, verdict: outage.Down) -> None:
        super().__init__("down", method, verdict.url, verdict.describe())
        self.verdict = verdict

    def _message(self) -> str:
        return f"{self.reason}; nothing more is sent to it in this run"


def _restore(cls: type[HttpError], state: dict[str, Any]) -> HttpError:
    err = cls.__new__(cls)
    err.__dict__.update(state)
    Exception.__init__(err, err._message())
    return err


class HttpClient:
    """A thread-safe JSON-over-HTTP client for one service, with retries.

    One instance pools connections and can be shared by every thread of a run. Close it
    (or use it as a context manager) to release them.

    Args:
        base_url: service root; request paths are appended to it
            (``http://127.0.0.1:8080/v1`` + ``/models``).
        headers: sent with every request (an ``Authorization`` header, ...).
        timeout: seconds allowed per attempt (connect, send, wait for the reply, each).
        retries: extra attempts after a transient failure (see the module docstring); 0
            sends each request once.
        backoff: first wait between attempts in seconds; it doubles each time, plus up to
            half of ``backoff`` of jitter. A ``Retry-After`` header wins.
        max_wait: cap on any single wait, ``Retry-After`` included.

    Raises:
        HttpError: ``base_url`` cannot be parsed as a URL.
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        retries: int = 0,
        backoff: float = 0.5,
        max_wait: float = 30.0,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        try:
            self._client = httpx.Client(
                base_url=self.base_url,
                headers={
                    "Accept": "application/json",
                    "User-Agent": _user_agent(),
                    **(headers or {}),
                },
                timeout=self.timeout,
                follow_redirects=True,  # as urllib did; httpx does not by default
                verify=_ssl_context(),
            )
        except httpx.InvalidURL as e:
            raise HttpError("invalid", "", self.base_url, f"invalid URL: {e}") from None
        url = self._client.base_url  # what a run's watch counts failures by
        self.origin = f"{url.scheme}://{url.host}:{url.port or ''}"
        self._local = threading.local()
        self._backoff = wait_exponential(multiplier=self.backoff, max=self.max_wait) + wait_random(
            0, self.backoff / 2
        )
        # Retrying keeps its per-call state in thread-locals, so one instance serves all threads.
        self._retrying = Retrying(
            stop=stop_after_attempt(self.retries + 1),
            wait=self._wait,
            retry=retry_if_exception(lambda e: isinstance(e, HttpError) and e.retryable),
            retry_error_callback=_give_up,
            reraise=True,
        )

    def request_json(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | str | None = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        probe: bool = False,
    ) -> Any:
        """Send one request (retrying transient failures) and return the decoded JSON reply.

        Args:
            method: ``GET``, ``POST``, ...
            path: appended to ``base_url``; may carry a query string.
            json: the body, encoded as JSON (none when ``None``).
            content: the body as it is, already encoded (a signed request's bytes); it
                wins over ``json``.
            params: query parameters.
            headers: extra headers for this request only.
            timeout: seconds per attempt for this request (default: the client's).
            retries: extra attempts for this request (default: the client's).
            probe: asks whether the service is up at all (waiting for one to start): its
                failures are not counted towards the run's verdict that it is down.

        Returns:
            The parsed reply, or ``None`` when the body is empty (``204``, ...).

        Raises:
            EndpointDown: the run found the endpoint down (before or during this request).
            HttpError: the last attempt failed, or the failure is not worth retrying.
        """
        seconds = self.timeout if timeout is None else float(timeout)
        # An abandoned item's call stops here, and no attempt outlives the item's budget.
        deadline.check()
        seconds = deadline.cap(seconds) or seconds
        try:
            request = self._client.build_request(
                method.upper(),
                path,
                json=json if content is None else None,
                content=content,
                params=params,
                headers=headers,
                timeout=seconds,
            )
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as e:
            raise HttpError(
                "invalid", method.upper(), self.base_url + path, f"invalid URL: {e}"
            ) from None
        retrying = self._retrying
        if retries is not None and retries != self.retries:
            retrying = retrying.copy(stop=stop_after_attempt(int(retries) + 1))
        failures: list[HttpError] = []
        watch = None if probe else outage.current()

        def attempt() -> Any:
            self._local.attempts = len(failures) + 1
            try:
                return self._send(request, seconds, watch)
            except HttpError as e:
                failures.append(e)
                raise

        try:
            return retrying(attempt)
        except HttpError as e:
            if len(failures) > 1 and not isinstance(e, EndpointDown):
                first = next((f.reason for f in failures if f.kind != "unreachable"), "")
                raise e.after(e.attempts, tuple(f.kind for f in failures), first) from None
            raise

    @property
    def last_attempts(self) -> int:
        """Attempts the calling thread's last request made (a write retried twice: 3)."""
        return getattr(self._local, "attempts", 0)

    def close(self) -> None:
        """Close pooled connections; the client cannot send afterwards."""
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, request: httpx.Request, seconds: float, watch: outage.Outages | None) -> Any:
        """One attempt: send, check the status, decode the body; report it to ``watch``."""
        method, url = request.method, _display_url(request.url)
        deadline.check()  # a retry of an abandoned call is never sent
        if watch is not None and (down := watch.down(self.origin)) is not None:
            raise EndpointDown(method, down)
        try:
            response = self._client.send(request)
        except httpx.ConnectTimeout as e:  # no answer to connect: as good as refused
            timeout = HttpError(
                "timeout", method, url, f"timed out after {seconds:g} s (connecting)"
            )
            raise self._no_connection(watch, e, timeout) from None
        except httpx.TimeoutException as e:
            if watch is not None:
                watch.reached(self.origin)  # it accepted the connection: slow, not down
            phase = _TIMEOUT_PHASE.get(type(e), "waiting")
            raise HttpError(
                "timeout", method, url, f"timed out after {seconds:g} s ({phase})"
            ) from None
        except httpx.UnsupportedProtocol as e:
            raise HttpError("invalid", method, url, f"invalid URL: {e}") from None
        except httpx.ConnectError as e:  # refused, or a name that does not resolve
            error = HttpError("unreachable", method, url, _describe(e))
            raise self._no_connection(watch, e, error) from None
        except httpx.TransportError as e:  # reset, truncated body, protocol violation
            error = HttpError("dropped", method, url, f"the connection dropped ({_describe(e)})")
            raise self._no_connection(watch, e, error) from None
        if watch is not None:
            watch.reached(self.origin)
        status, body = response.status_code, response.content
        if status >= 400:
            detail = error_detail(body) or response.reason_phrase
            raise HttpError(
                "status",
                method,
                url,
                f"HTTP {status}: {detail}",
                status=status,
                detail=detail,
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        if not body.strip():
            return None
        try:
            return jsonlib.loads(body)
        except ValueError:  # JSONDecodeError, UnicodeDecodeError
            ctype = response.headers.get("Content-Type", "no content type").split(";")[0]
            raise HttpError(
                "malformed",
                method,
                url,
                f"malformed JSON reply (HTTP {status}, {ctype}): {body[:120]!r}",
                status=status,
            ) from None

    def _no_connection(
        self, watch: outage.Outages | None, e: Exception, error: HttpError
    ) -> HttpError:
        """``error``, or :class:`EndpointDown` when this failure made the endpoint down."""
        down = watch.failed(self.origin, self.base_url, _describe(e)) if watch else None
        return EndpointDown(error.method, down) if down is not None else error

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, HttpError) and error.retry_after is not None:
            return min(error.retry_after, self.max_wait)
        return self._backoff(state)


def _give_up(state: RetryCallState) -> Any:
    """Called by tenacity when every attempt failed: report the last failure, counted."""
    error = state.outcome.exception() if state.outcome else None
    if isinstance(error, HttpError):
        raise error.after(state.attempt_number) from None
    raise error or RuntimeError("retry state without an outcome")


def error_detail(body: bytes) -> str:
    """The server's error message from a reply body ("" when it has none).

    Understands the shapes real services send: OpenAI's ``{"error": {"message": ...}}``,
    ``{"error": "..."}``, FastAPI's ``{"detail": ...}``, ``{"message": ...}``; anything else
    is the body's first 200 characters.
    """
    text = body.decode("utf-8", "replace").strip()
    try:
        doc = jsonlib.loads(text)
    except ValueError:
        return text[:200]
    if isinstance(doc, Mapping):
        for key in ("error", "detail", "message"):
            value = doc.get(key)
            if isinstance(value, Mapping):
                value = value.get("message") or value
            if value:
                return (value if isinstance(value, str) else jsonlib.dumps(value))[:200]
    return text[:200]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _describe(e: Exception) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _display_url(url: httpx.URL) -> str:
    """The URL for messages: never a password in ``user:pass@host``."""
    return str(url.copy_with(username=None, password=None)) if url.userinfo else str(url)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle is most of what a new httpx.Client costs (~70 ms here); a
    # context is safe to share, so every client in the process reuses this one.
    return httpx.create_ssl_context()


@functools.cache
def _user_agent() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"mnemometer/{version('mnemometer')}"
    except PackageNotFoundError:
        return "mnemometer"
