"""A run that stops when an endpoint it asks goes down (issue 30 §7).

The runner watches the HTTP attempts of its setup and of each item
(:mod:`mnemometer.outage`). Once an endpoint is found down, the items not yet started are
not attempted, and an item that finishes afterwards, or finished while the endpoint was
failing to connect, is dropped as not attempted too (its calls met the dead endpoint: it
is neither a result nor a failure of the system). The run keeps status ``running``, its
header and summary say why in one note, the command line exits with
:data:`ENDPOINT_DOWN_EXIT`, and ``--resume`` runs those items once the endpoint is back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from mnemometer import outage

STOPPED = "stopped: "
"""How the header note of a stopped run begins (dropped when the run is resumed)."""

T = TypeVar("T")

ENDPOINT_DOWN_EXIT = 75
"""The command line's exit code for a stopped run: ``EX_TEMPFAIL`` of ``sysexits.h``, a
temporary failure the user is invited to retry (here: ``--resume`` once it is back)."""


def stop_note(down: outage.Down, left: int, total: int, run_dir: Path) -> str:
    """The one line that says the run stopped, why, and how to finish it."""
    return (
        f"{STOPPED}{down.describe()}: {left} of {total} items not attempted (neither failed "
        f"nor scored); once it is back, `mnemometer run --resume {run_dir}` runs them"
    )


def stop_reason(notes: list[str]) -> str | None:
    """The stop note among a header's ``notes`` (without its prefix), if the run stopped."""
    return next((n.removeprefix(STOPPED) for n in notes if n.startswith(STOPPED)), None)


def setup_watched(setup: Callable[[], dict[str, float]], watch: outage.Outages) -> dict[str, float]:
    """``setup()`` under ``watch``; no phases when it failed because an endpoint went down."""
    try:
        with outage.watching(watch):
            return setup()
    except Exception:
        if watch.first is None:
            raise
        return {}  # storing met the dead endpoint: no item is attempted


def item_watched(fn: Callable[[Any], Any], watch: outage.Outages) -> Callable[[Any], Any]:
    """``fn`` on an item under ``watch``; nothing once an endpoint is down (not attempted)."""

    def attempt(item: Any) -> Any:
        if watch.first is not None:
            return None
        with outage.watching(watch):
            return fn(item)

    return attempt


class Recorder(Generic[T]):
    """Hands each finished item to ``write``, holding it back while an endpoint fails.

    An item that finishes while some endpoint's latest attempts all failed to connect may
    have met an endpoint going down: it waits for the verdict. When the endpoint answers
    again what waits is written; once one is down, what waits and what finishes after is
    not attempted (never written: a resume runs it).

    Args:
        write: writes one finished item to the log.
        watch: the run's watch.
    """

    def __init__(self, write: Callable[[T], None], watch: outage.Outages) -> None:
        self.write = write
        self.watch = watch
        self.written = 0
        self._held: list[T] = []

    def __call__(self, done: T) -> None:
        if self.watch.first is not None:
            return
        self._held.append(done)
        if not self.watch.failing:
            self._flush()

    def finish(self) -> None:
        """Write what still waits, unless an endpoint was found down."""
        if self.watch.first is None:
            self._flush()

    def _flush(self) -> None:
        for done in self._held:
            self.write(done)
            self.written += 1
        self._held.clear()
