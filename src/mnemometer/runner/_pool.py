"""Bounded-concurrency execution with a timeout on every call.

Python cannot kill a thread, so a call that overruns its timeout is recorded as a timeout at
once, its worker is retired (it exits when the call finally returns and its late result is
dropped), and a fresh worker takes its place: concurrency never shrinks behind hung calls.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Done(Generic[T]):
    """One finished call: its result, or the exception, or a timeout."""

    item: T
    result: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    seconds: float = 0.0


def execute(
    fn: Callable[[T], R],
    items: Sequence[T],
    concurrency: int = 1,
    timeout: float | None = None,
) -> Iterator[Done[T]]:
    """Run ``fn`` over ``items``; yield each outcome as it finishes (completion order).

    With ``concurrency == 1`` and no timeout the calls run inline in the caller's thread
    (no hand-off cost). Exceptions are captured per item, never raised.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    if concurrency == 1 and not timeout:
        for item in items:
            t0 = time.perf_counter()
            try:
                r = fn(item)
            except Exception as e:
                yield Done(item, error=e, seconds=time.perf_counter() - t0)
            else:
                yield Done(item, result=r, seconds=time.perf_counter() - t0)
        return
    yield from _Pool(fn, items, concurrency, timeout).run()


class _Worker(threading.Thread):
    def __init__(self, pool: _Pool) -> None:
        super().__init__(daemon=True)
        self.pool = pool
        self.retired = False
        self.current: tuple[int, float] | None = None  # (item position, start time)

    def run(self) -> None:
        p = self.pool
        while not self.retired:
            try:
                pos = p.todo.get_nowait()
            except queue.Empty:
                return
            t0 = time.perf_counter()
            self.current = (pos, t0)
            try:
                r = p.fn(p.items[pos])
                out = (pos, self, r, None, time.perf_counter() - t0)
            except Exception as e:
                out = (pos, self, None, e, time.perf_counter() - t0)
            self.current = None
            p.done.put(out)


class _Pool:
    def __init__(self, fn: Callable[[Any], Any], items: Sequence[Any], n: int, timeout: float | None):
        self.fn, self.items, self.timeout = fn, items, timeout
        self.todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for pos in range(len(items)):
            self.todo.put(pos)
        self.done: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self.workers = [_Worker(self) for _ in range(min(n, len(items)))]
        self.lock = threading.Lock()

    def run(self) -> Iterator[Done[Any]]:
        reported: set[int] = set()
        for w in self.workers:
            w.start()
        remaining = len(self.items)
        while remaining:
            try:
                pos, worker, r, e, secs = self.done.get(timeout=self._wait())
            except queue.Empty:
                for timed in self._expire(reported):
                    remaining -= 1
                    yield timed
                continue
            if pos in reported or worker.retired:
                continue  # the late result of a call already reported as a timeout
            reported.add(pos)
            remaining -= 1
            yield Done(self.items[pos], result=r, error=e, seconds=secs)

    def _wait(self) -> float | None:
        if not self.timeout:
            return None
        now = time.perf_counter()
        starts = [c[1] for w in self.workers if not w.retired and (c := w.current)]
        if not starts:
            return self.timeout
        return max(0.0, min(starts) + self.timeout - now) + 0.001

    def _expire(self, reported: set[int]) -> Iterator[Done[Any]]:
        now = time.perf_counter()
        assert self.timeout
        for i, w in enumerate(self.workers):
            cur = w.current
            if w.retired or not cur or now - cur[1] < self.timeout or cur[0] in reported:
                continue
            w.retired = True
            reported.add(cur[0])
            fresh = _Worker(self)
            self.workers[i] = fresh
            fresh.start()
            yield Done(self.items[cur[0]], timed_out=True, seconds=now - cur[1])
