"""Deadlines that stop abandoned work: an item's time budget, seen by every call it makes.

Python cannot kill a thread. When an item overruns its budget the runner reports it as a
timeout at once and *cancels its deadline*; the work still running in that thread stops at
its next check instead of going on (and loading a single-threaded local model server until
every later item times out too). Checks happen where work waits or loops: before every
HTTP attempt (whose timeout is also capped by the time left), between the turns of a
scenario, between the chunks of a build.

The runner sets the deadline of each item in the thread that runs it (a context variable);
code that makes calls asks :func:`current` and never needs it passed down explicitly::

    from mnemometer import deadline

    deadline.check()                        # raises Cancelled once the item was abandoned
    seconds = deadline.cap(60.0)            # 60 s, or less when the item has less left
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from mnemometer.errors import MnemometerError


class Cancelled(MnemometerError):
    """The item this work belongs to timed out or was abandoned: stop."""


@dataclass
class Deadline:
    """When an item's time is up, and whether it was abandoned before that.

    Attributes:
        expires: ``time.monotonic()`` value at which the budget runs out (``None``: never).
        label: what the deadline bounds, for messages (``item enq05``).
    """

    expires: float | None = None
    label: str = "item"
    # A flag, not a threading.Event: nothing waits on it, and an item's deadline is made
    # for every item (an Event is a lock and a condition: 3 us each).
    _cancelled: bool = field(default=False, repr=False)

    @classmethod
    def after(cls, seconds: float | None, label: str = "item") -> Deadline:
        """A deadline ``seconds`` from now (none when ``seconds`` is ``None``)."""
        return cls(None if seconds is None else time.monotonic() + seconds, label)

    def cancel(self) -> None:
        """Abandon the work: its next :meth:`check` raises :class:`Cancelled`."""
        self._cancelled = True  # one store: atomic, seen by the thread that checks

    @property
    def cancelled(self) -> bool:
        """True once cancelled or expired."""
        return self._cancelled or (self.expires is not None and time.monotonic() >= self.expires)

    def remaining(self) -> float | None:
        """Seconds left (``None``: no limit; never negative)."""
        if self.expires is None:
            return None
        return max(0.0, self.expires - time.monotonic())

    def check(self) -> None:
        """Raise :class:`Cancelled` when the work was abandoned or its time is up."""
        if self.cancelled:
            raise Cancelled(f"{self.label}: abandoned after its time budget ran out")


_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "mnemometer_deadline", default=None
)


def current() -> Deadline | None:
    """The deadline of the work running in this thread, if any."""
    return _CURRENT.get()


def check() -> None:
    """Stop (raise :class:`Cancelled`) if the current work was abandoned; else nothing."""
    d = _CURRENT.get()
    if d is not None:
        d.check()


def cap(seconds: float | None) -> float | None:
    """``seconds``, lowered to the time the current work has left (at least 0.01 s)."""
    d = _CURRENT.get()
    left = d.remaining() if d is not None else None
    if left is None:
        return seconds
    left = max(0.01, left)
    return left if seconds is None else min(seconds, left)


@contextmanager
def bound(d: Deadline | None) -> Iterator[Deadline | None]:
    """Run the body under deadline ``d`` (restoring the previous one after)."""
    token = _CURRENT.set(d)
    try:
        yield d
    finally:
        _CURRENT.reset(token)
