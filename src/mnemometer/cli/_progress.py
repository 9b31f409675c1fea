"""Progress by phase for long commands: bars on a terminal, a line now and then elsewhere.

On a terminal every phase (``index``, ``ingest``, ``items``, ``judge``, ...) gets a bar with
its count and an ETA. Off a terminal (CI, logs, notebooks) one line goes to stderr when a
phase starts, at most every ``every`` seconds while it runs, and when it ends, so a log
shows the run advancing without flooding it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import click


class PhaseProgress:
    """A ``(phase, done, total)`` callback that renders itself; a context manager.

    Args:
        label: what runs (shown first on every line).
        every: seconds between lines off a terminal.
        terminal: force terminal rendering on or off (default: stderr is a terminal).
        clock: seconds from any origin (default :func:`time.monotonic`; tests pass their own).
    """

    def __init__(
        self,
        label: str,
        every: float = 10.0,
        terminal: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.every = every
        self.clock = clock
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._started: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._done: set[str] = set()
        self._count: dict[str, int] = {}
        self._total: dict[str, int | None] = {}

    def __enter__(self) -> PhaseProgress:
        if self.terminal:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
                get_time=self.clock,
            )
            self._bar.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, phase: str, done: int, total: int | None = None) -> None:
        now = self.clock()
        # A phase counting from the start again (the next run of an experiment, a resume)
        # is a new phase: its elapsed time and ETA start over.
        again = phase in self._started and (
            done < self._count.get(phase, 0) or total != self._total.get(phase)
        )
        first = phase not in self._started or again
        if first:
            self._started[phase] = now
            self._last[phase] = now
            self._done.discard(phase)
        self._count[phase], self._total[phase] = done, total
        if self._bar is not None:
            if phase not in self._tasks:
                self._tasks[phase] = self._bar.add_task(f"{self.label} · {phase}", total=total)
            elif again:  # its clock and ETA start over too
                self._bar.reset(self._tasks[phase], total=total, completed=done)
            self._bar.update(self._tasks[phase], completed=done, total=total)
            return
        finished = total is not None and done >= total
        if finished and phase in self._done:
            return
        if first or finished or now - self._last[phase] >= self.every:
            self._last[phase] = now
            if finished:
                self._done.add(phase)
            click.echo(self.line(phase, done, total, now - self._started[phase]), err=True)

    def line(self, phase: str, done: int, total: int | None, elapsed: float) -> str:
        """One progress line: ``label · phase 120/1986 (6%) · 12 s · ETA 3 min``."""
        text = f"{self.label} · {phase} {done}" + (f"/{total}" if total is not None else "")
        if total:
            text += f" ({100 * done / total:.0f}%)"
        text += f" · {_duration(elapsed)}"
        if total and 0 < done < total:
            text += f" · ETA {_duration(elapsed / done * (total - done))}"
        return text


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
