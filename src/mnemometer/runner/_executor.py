"""Where work runs: the ``Executor`` protocol and the local one (a bounded thread pool).

An executor calls a function on every work unit and hands each outcome to one callback, in
the driver's process, as it arrives; the driver is the only writer of the run log, so a
log is the same whatever ran the items, and ``--resume`` works across executors.

An executor whose workers are other processes (``remote = True``: Ray) cannot be handed the
live system under test, which is not picklable. It is given a :class:`WorkerFn` instead: a
picklable recipe that builds what it needs once per worker (``setup``) and then runs units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from mnemometer.runner._pool import Done, execute

T = TypeVar("T")


@runtime_checkable
class Executor(Protocol):
    """Runs work units and reports each outcome to the driver.

    An executor whose workers are other processes also sets ``remote = True`` and has
    ``preflight(systems, paths)``: it is then given a :class:`WorkerFn` for items, and
    picklable functions for whole runs (``RayExecutor``); without the attribute an
    executor is taken to run calls in this process.
    """

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


@runtime_checkable
class WorkerFn(Protocol):
    """A picklable work function with per-worker state, for executors in other processes.

    The executor ships it to each worker once, calls ``setup`` there (build the suite and
    the system, e.g. store every memory), then ``__call__`` per unit, and ``teardown`` at
    the end. ``record_setup`` is called in the driver with each worker's setup timings.
    """

    def setup(self) -> dict[str, float]:
        """Prepare this worker; return phase timings in seconds."""
        ...

    def __call__(self, unit: Any) -> Any:
        """Run one unit."""
        ...

    def teardown(self) -> None:
        """Release what ``setup`` made."""
        ...

    def record_setup(self, timings: dict[str, float]) -> None:
        """In the driver: one worker finished its setup."""
        ...


class LocalExecutor:
    """Threads in this process, ``concurrency`` at a time, a timeout on every call."""

    name = "local"
    remote = False
    """Calls run in this process, on the driver's live system."""

    map = staticmethod(execute)
    """See :meth:`Executor.map` (the bounded thread pool of ``runner/_pool.py``)."""


__all__ = ["Done", "Executor", "LocalExecutor", "WorkerFn"]
