"""Where items run: the ``Executor`` protocol and the local one (a bounded thread pool).

An executor calls a function on every work unit and hands each outcome to one callback, in
the driver's process, as it arrives; the driver is the only writer of the run log, so a
log is the same whatever ran the items, and ``--resume`` works across executors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from mnemometer.runner._pool import Done, execute

T = TypeVar("T")


@runtime_checkable
class Executor(Protocol):
    """Runs work units and reports each outcome to the driver."""

    name: str
    """Recorded in the run header (``local``, ``ray``, ...)."""

    def map(
        self,
        fn: Callable[[T], Any],
        units: Sequence[T],
        on_done: Callable[[Done[T]], None],
        *,
        concurrency: int,
        timeout: float | None,
    ) -> None:
        """Call ``fn`` on every unit; call ``on_done`` once per unit, never concurrently.

        A unit whose call raised is reported with its exception, one that overran
        ``timeout`` as timed out; an exception from ``on_done`` stops the map and is raised.
        """
        ...


class LocalExecutor:
    """Threads in this process, ``concurrency`` at a time, a timeout on every call."""

    name = "local"

    def map(
        self,
        fn: Callable[[T], Any],
        units: Sequence[T],
        on_done: Callable[[Done[T]], None],
        *,
        concurrency: int,
        timeout: float | None,
    ) -> None:
        """See :meth:`Executor.map`."""
        execute(fn, units, on_done, concurrency, timeout)


__all__ = ["Done", "Executor", "LocalExecutor"]
