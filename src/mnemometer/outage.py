"""A run's verdict on its endpoints: after a few connection failures in a row, one is down.

A killed LLM server or memory service refuses (or resets) every connection. Without a
verdict a run would ask it again for every remaining item, each time through the whole
retry cycle; with one, the run stops asking after :data:`DOWN_AFTER` consecutive
connection failures to the same endpoint (scheme, host and port), records the items it
did not reach as not attempted, and ``--resume`` runs them once the endpoint is back.

The runner watches the work of one run (its setup and each item, in the thread that runs
it); :class:`mnemometer.http.HttpClient` reports every attempt to the watch of the work it
runs in, and refuses to send to an endpoint found down (``EndpointDown``)::

    from mnemometer import outage

    watch = outage.Outages()
    with outage.watching(watch):
        store.search(...)          # its HTTP attempts are counted
    watch.first                    # the first endpoint found down, or None

Only failures to connect count: refused, reset or dropped connections and names that do
not resolve. A timeout or any HTTP reply (an error status included) means the endpoint is
up, and starts the count again. Outside a watched run nothing is counted.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

DOWN_AFTER = 5
"""Consecutive connection failures after which an endpoint is down for the run: a little
more than one request's retries (the LLM client makes four attempts), so one request that
fails after its retries is not yet a verdict, and a second that cannot connect is."""


@dataclass(frozen=True, slots=True)
class Down:
    """An endpoint found down."""

    url: str
    """The endpoint's base URL, as its client was given it."""
    failures: int
    """Consecutive connection failures seen."""
    reason: str
    """The last one, in words (``ConnectError: [Errno 111] Connection refused``)."""

    def describe(self) -> str:
        """``URL is down (N connection failures in a row; last: ...)``."""
        return (
            f"{self.url} is down ({self.failures} connection failures in a row; "
            f"last: {self.reason})"
        )


class Outages:
    """The endpoints one run asks, counted by origin (thread-safe).

    Args:
        after: consecutive connection failures that make an endpoint down.
    """

    def __init__(self, after: int = DOWN_AFTER) -> None:
        if after < 1:
            raise ValueError(f"after must be >= 1, got {after}")
        self.after = after
        self._lock = threading.Lock()
        self._failures: dict[str, int] = {}
        self._down: dict[str, Down] = {}
        self.first: Down | None = None
        """The first endpoint found down (``None`` while every endpoint is up)."""

    @property
    def failing(self) -> bool:
        """Whether some endpoint's latest attempts all failed to connect (no verdict yet)."""
        with self._lock:  # other threads count meanwhile
            return any(n and origin not in self._down for origin, n in self._failures.items())

    def down(self, origin: str) -> Down | None:
        """The verdict on ``origin`` (``None``: up, as far as this run knows)."""
        return self._down.get(origin)

    def failed(self, origin: str, url: str, reason: str) -> Down | None:
        """Count one failure to connect; the verdict when this one made ``origin`` down."""
        with self._lock:
            n = self._failures.get(origin, 0) + 1
            self._failures[origin] = n
            if n < self.after or origin in self._down:
                return self._down.get(origin)
            down = self._down[origin] = Down(url, n, reason)
            if self.first is None:
                self.first = down
            return down

    def reached(self, origin: str) -> None:
        """``origin`` answered (or accepted and kept the connection): count from zero."""
        if self._failures.get(origin):
            with self._lock:
                self._failures[origin] = 0


_CURRENT: contextvars.ContextVar[Outages | None] = contextvars.ContextVar(
    "mnemometer_outages", default=None
)


def current() -> Outages | None:
    """The watch of the work running in this thread, if any."""
    return _CURRENT.get()


@contextmanager
def watching(outages: Outages | None) -> Iterator[Outages | None]:
    """Count the HTTP attempts of the body in ``outages`` (restoring the previous watch)."""
    token = _CURRENT.set(outages)
    try:
        yield outages
    finally:
        _CURRENT.reset(token)
