"""Bounded-concurrency execution with a timeout on every call.

Workers hand each outcome straight to ``on_done`` (serialised by one lock), so a finished
item costs no thread hand-off. Python cannot kill a thread: a call that overruns its timeout
is reported as a timeout at once, its worker is retired and a fresh worker takes its place,
so concurrency never shrinks behind hung calls. Each call runs under a
:class:`~mnemometer.deadline.Deadline` that the timeout cancels, so the abandoned call stops
at its next check (an HTTP attempt, a scenario turn) instead of going on in the background;
its late result is dropped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mnemometer import deadline

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Done(Generic[T]):
    """One finished call: its result, or the exception, or a timeout.

    ``attempts`` counts the calls made: above 1 when an executor in other processes lost
    a worker mid-call and ran the unit again elsewhere; ``lost`` says why each retry was
    needed (recorded in the run header's notes).
    """

    item: T
    result: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    seconds: float = 0.0
    attempts: int = 1
    lost: tuple[str, ...] = ()


def execute(
    fn: Callable[[T], Any],
    items: Sequence[T],
    on_done: Callable[[Done[T]], None],
    concurrency: int = 1,
    timeout: float | None = None,
) -> None:
    """Run ``fn`` over ``items`` and call ``on_done`` once per item as it finishes.

    ``on_done`` calls never overlap. With ``concurrency == 1`` and no timeout, calls run
    inline in the caller's thread. Exceptions from ``fn`` are captured per item; an exception
    from ``on_done`` stops the run and is raised here.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    if concurrency == 1 and not timeout:
        for item in items:
            t0 = time.perf_counter()
            try:
                with deadline.bound(deadline.Deadline(label=_label(item))):
                    r = fn(item)
            except Exception as e:
                on_done(Done(item, error=e, seconds=time.perf_counter() - t0))
            else:
                on_done(Done(item, result=r, seconds=time.perf_counter() - t0))
        return
    if items:
        _Pool(fn, items, on_done, concurrency, timeout).run()


class _Worker(threading.Thread):
    def __init__(self, pool: _Pool) -> None:
        super().__init__(daemon=True)
        self.pool = pool
        self.retired = False
        # (item position, start time, the call's deadline)
        self.current: tuple[int, float, deadline.Deadline] | None = None

    def run(self) -> None:
        p = self.pool
        while True:
            with p.cond:
                if self.retired or p.failure or p.next >= len(p.items):
                    return
                pos = p.next
                p.next += 1
                t0 = time.perf_counter()
                limit = deadline.Deadline.after(p.timeout, _label(p.items[pos]))
                self.current = (pos, t0, limit)
            try:
                with deadline.bound(limit):
                    result = p.fn(p.items[pos])
                done = Done(p.items[pos], result=result, seconds=time.perf_counter() - t0)
            except Exception as e:
                done = Done(p.items[pos], error=e, seconds=time.perf_counter() - t0)
            with p.cond:
                self.current = None
                if self.retired:
                    return  # already reported as a timeout
                p.report(done)


class _Pool:
    def __init__(
        self,
        fn: Callable[[Any], Any],
        items: Sequence[Any],
        on_done: Callable[[Done[Any]], None],
        n: int,
        timeout: float | None,
    ) -> None:
        self.fn, self.items, self.on_done, self.timeout = fn, items, on_done, timeout
        self.cond = threading.Condition()
        self.next = 0
        self.remaining = len(items)
        self.failure: BaseException | None = None
        self.workers = [_Worker(self) for _ in range(min(n, len(items)))]

    def report(self, done: Done[Any]) -> None:
        """Hand one outcome to ``on_done``; the caller holds ``cond``."""
        if self.failure is None:
            try:
                self.on_done(done)
            except BaseException as e:  # surfaced in the caller's thread by run()
                self.failure = e
        self.remaining -= 1
        if self.remaining == 0 or self.failure is not None:
            self.cond.notify_all()

    def run(self) -> None:
        for w in self.workers:
            w.start()
        with self.cond:
            while self.remaining and self.failure is None:
                self.cond.wait(self._wait())
                if self.timeout:
                    self._expire()
        if self.failure is not None:
            raise self.failure

    def _wait(self) -> float | None:
        if not self.timeout:
            return None
        starts = [c[1] for w in self.workers if (c := w.current)]
        if not starts:
            return self.timeout
        return max(0.0, min(starts) + self.timeout - time.perf_counter()) + 0.001

    def _expire(self) -> None:
        assert self.timeout
        now = time.perf_counter()
        for i, w in enumerate(self.workers):
            cur = w.current
            if not cur or now - cur[1] < self.timeout:
                continue
            w.retired = True
            w.current = None
            cur[2].cancel()  # the abandoned call stops at its next check
            fresh = _Worker(self)
            self.workers[i] = fresh
            fresh.start()
            self.report(Done(self.items[cur[0]], timed_out=True, seconds=now - cur[1]))


def _label(item: Any) -> str:
    return f"item {getattr(item, 'id', item)!s:.60}"
