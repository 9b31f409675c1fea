"""The Ray executor: work units on a Ray cluster, every outcome back to the driver.

Ray is an extra (``pip install 'mnemometer[distributed]'``), imported only when a
:class:`RayExecutor` first connects. Two shapes of work (see ``_remote.py``):

- a :class:`~mnemometer.runner.WorkerFn` (the item unit) goes to a pool of **actors**, one
  per slot: each runs ``setup`` once (it builds the suite and the system), then units;
- a plain picklable function (the run unit) goes to **tasks**, one per unit.

Faults: a unit whose worker died (SIGKILL, a lost node) is sent again to another worker, at
most ``max_retries`` times, and the retry is reported with the outcome (``Done.attempts``,
``Done.lost``), so the run header records it; the driver reports each unit exactly once, so
nothing is lost or written twice. A unit that overruns ``timeout`` is reported as timed out
at once and its worker is killed and replaced (a fresh actor runs ``setup`` again).
"""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MissingExtraError, MnemometerError
from mnemometer.runner._executor import WorkerFn
from mnemometer.runner._pool import Done

T = TypeVar("T")

INSTALL = "pip install 'mnemometer[distributed]'"
SETUP_TIMEOUT = 600.0
"""Seconds the workers may take to start and run ``setup`` before the run gives up."""


def import_ray() -> Any:
    """Import Ray, or raise the install command.

    On one machine Ray stays on the loopback interface: unless the caller chose otherwise,
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` makes Ray resolve its node address to 127.0.0.1
    (read when Ray is imported), and usage statistics are off.
    """
    quiet_libraries()
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise MissingExtraError("--executor ray", "distributed", "ray") from None
    return ray


def check_reachable(address: str, seconds: float = 3.0) -> None:
    """Fail at once, with the fix, when nothing listens at a cluster address.

    Raises:
        MnemometerError: a malformed address, or no answer at ``host:port``.
    """
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise MnemometerError(
            f"--ray-address {address!r} is not HOST:PORT (e.g. 127.0.0.1:6379, the address "
            "`ray start --head` prints)"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=seconds):
            pass
    except OSError as e:
        raise MnemometerError(
            f"cannot reach a Ray cluster at {address} ({e.strerror or e}): start one with "
            "`ray start --head --port PORT` there, or fix --ray-address (leave it out to "
            "start a local cluster on this machine)"
        ) from None


class RayExecutor:
    """Work units on a Ray cluster; outcomes come back to the driver as they finish.

    Args:
        address: a running cluster (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``);
            ``None`` starts a local cluster in this process for the executor's lifetime.
        num_cpus: CPUs each worker reserves (fractions pack several I/O-bound workers onto
            one CPU, e.g. 0.25 for LLM-bound items).
        max_retries: times a unit whose worker died is sent again before it counts as failed.
        init_options: more keyword arguments for ``ray.init`` (``runtime_env``, ...).
    """

    name = "ray"
    remote = True
    """Units run in other processes: give it a :class:`WorkerFn` or a picklable function."""

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: float = 1.0,
        max_retries: int = 2,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if num_cpus <= 0:
            raise MnemometerError(f"num_cpus must be above 0, got {num_cpus}")
        if max_retries < 0:
            raise MnemometerError(f"max_retries must be at least 0, got {max_retries}")
        self.address = address
        self.num_cpus = float(num_cpus)
        self.max_retries = max_retries
        self.init_options = dict(init_options or {})
        self._ray: Any = None
        self._owned = False
        self.worker_pids: list[int] = []
        """Process ids of the live workers of the current map (tests kill one)."""

    # ------------------------------------------------------------------ connection
    def connect(self) -> Any:
        """Connect to the cluster (or start a local one) once; return the ``ray`` module.

        Raises:
            MissingExtraError: Ray is not installed.
            MnemometerError: the cluster cannot be reached.
        """
        if self._ray is not None:
            return self._ray
        if self.address is not None:
            check_reachable(self.address)
        ray = import_ray()
        if not ray.is_initialized():
            options = {"include_dashboard": False, "log_to_driver": False, **self.init_options}
            try:
                ray.init(address=self.address, **options)
            except Exception as e:  # Ray raises ConnectionError, RuntimeError, ...
                where = self.address or "a local cluster"
                raise MnemometerError(
                    f"cannot connect to Ray ({where}): {type(e).__name__}: {e}"
                ) from None
            self._owned = True
        self._ray = ray
        return ray

    def close(self) -> None:
        """Disconnect (and stop the local cluster this executor started)."""
        if self._ray is not None and self._owned:
            self._ray.shutdown()
        self._ray, self._owned = None, False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def slots(self) -> int:
        """Workers the cluster can run at once at ``num_cpus`` each (at least 1)."""
        cpus = float(self.connect().cluster_resources().get("CPU", 1.0))
        return max(1, int(cpus // self.num_cpus))

    def preflight(self, systems: Sequence[tuple[str, str]], paths: Sequence[str] = ()) -> None:
        """Before any work: every alive node can build these systems and read these paths.

        Raises:
            MnemometerError: one message naming the node, the problem and the fix.
        """
        ray = self.connect()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from mnemometer.runner._remote import node_problems

        check = ray.remote(num_cpus=0, max_retries=1)(_node_check)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        refs = [
            check.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
            ).remote(node_problems, list(systems), list(paths))
            for n in nodes
        ]
        try:
            answers = ray.get(refs, timeout=SETUP_TIMEOUT)
        except Exception as e:
            raise MnemometerError(
                _worker_error("checking the Ray workers", e) + f". {_FIX}"
            ) from None
        for node, (_pid, problems) in zip(nodes, answers, strict=True):
            if problems:
                raise MnemometerError(
                    f"Ray node {node.get('NodeManagerAddress')} cannot run this: "
                    f"{problems[0]}. {_FIX}"
                )

    # ------------------------------------------------------------------ map
    def map(
        self,
        fn: Callable[[T], Any],
        units: Sequence[T],
        on_done: Callable[[Done[T]], None],
        *,
        concurrency: int,
        timeout: float | None,
    ) -> None:
        """See :meth:`Executor.map`; ``fn`` must be picklable (a ``WorkerFn`` or a function)."""
        if not units:
            return
        n = max(1, min(concurrency, len(units), self.slots()))
        slots: Any = _Actors(self, fn, n) if isinstance(fn, WorkerFn) else _Tasks(self, fn, n)
        try:
            _Dispatch(self, slots, units, on_done, timeout).run()
        finally:
            slots.close()
            self.worker_pids = []


_FIX = (
    "Install mnemometer and every plug-in the run uses on each node (pip install "
    "'mnemometer[distributed]' plus the plug-in's package), or ship them with "
    "RayExecutor(init_options={'runtime_env': ...}); inputs must be readable at the same "
    "path on every node"
)


def _node_check(fn: Callable[..., list[str]], *args: Any) -> tuple[int, list[str]]:
    return os.getpid(), fn(*args)


def _call(fn: Callable[[Any], Any], unit: Any, timeout: float | None) -> tuple[Any, float, int]:
    """Run one unit on a worker under its deadline (calls it makes cap their waits to it)."""
    from mnemometer import deadline

    t0 = time.perf_counter()
    with deadline.bound(deadline.Deadline.after(timeout, "unit")):
        out = fn(unit)
    return out, time.perf_counter() - t0, os.getpid()


class _Worker:
    """An actor holding one ``WorkerFn``'s state."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def setup(self) -> tuple[dict[str, float], int]:
        return self.fn.setup(), os.getpid()

    def run(self, unit: Any, timeout: float | None) -> tuple[Any, float, int]:
        return _call(self.fn, unit, timeout)

    def teardown(self) -> None:
        self.fn.teardown()


def _worker_error(what: str, e: BaseException) -> str:
    cause = getattr(e, "cause", None)
    if isinstance(cause, MnemometerError):
        return f"{what}: {cause}"
    if cause is not None:
        return f"{what}: {type(cause).__name__}: {cause}"
    return f"{what}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    ex = ray.exceptions
    names = ("RayActorError", "WorkerCrashedError", "NodeDiedError", "ObjectLostError")
    return tuple(getattr(ex, n) for n in names if hasattr(ex, n))


@dataclass
class _Slot:
    handle: Any  # an actor handle, or None for a task slot
    pid: int = 0


class _Tasks:
    """Slots for stateless tasks: a slot is a place in the cluster, not a process."""

    def __init__(self, ex: RayExecutor, fn: Callable[[Any], Any], n: int) -> None:
        ray = ex.connect()
        self.ray, self.fn_ref = ray, ray.put(fn)
        self.remote = ray.remote(num_cpus=ex.num_cpus, max_retries=0)(_call)
        self.free = [_Slot(None) for _ in range(n)]

    def submit(self, slot: _Slot, unit: Any, timeout: float | None) -> Any:
        return self.remote.remote(self.fn_ref, unit, timeout)

    def replace(self, slot: _Slot, ref: Any, kill: bool) -> _Slot:
        if kill:
            self.ray.cancel(ref, force=True)  # kills the worker process running it
        return slot

    def close(self) -> None:
        """Nothing to release."""


class _Actors:
    """Slots for a ``WorkerFn``: one actor each, set up before any unit is sent."""

    def __init__(self, ex: RayExecutor, fn: Any, n: int) -> None:
        ray = ex.connect()
        self.ex, self.ray, self.fn = ex, ray, fn
        self.fn_ref = ray.put(fn)
        self.cls = ray.remote(num_cpus=ex.num_cpus, max_restarts=0, max_task_retries=0)(_Worker)
        self.actors: list[_Slot] = []
        self.free = self._start(n)

    def _start(self, n: int) -> list[_Slot]:
        handles = [self.cls.remote(self.fn_ref) for _ in range(n)]
        try:
            answers = self.ray.get([h.setup.remote() for h in handles], timeout=SETUP_TIMEOUT)
        except Exception as e:
            for h in handles:
                self.ray.kill(h)
            if isinstance(e, self.ray.exceptions.GetTimeoutError):
                raise MnemometerError(
                    f"Ray workers did not finish setup within {SETUP_TIMEOUT:g} s: the "
                    "cluster may have no free CPUs (lower num_cpus or --concurrency)"
                ) from None
            raise MnemometerError(_worker_error("setting up a Ray worker", e)) from None
        slots = []
        for h, (timings, pid) in zip(handles, answers, strict=True):
            self.fn.record_setup(timings)
            slots.append(_Slot(h, pid))
            self.ex.worker_pids.append(pid)
        self.actors.extend(slots)
        return slots

    def submit(self, slot: _Slot, unit: Any, timeout: float | None) -> Any:
        return slot.handle.run.remote(unit, timeout)

    def replace(self, slot: _Slot, ref: Any, kill: bool) -> _Slot:
        del ref
        self.ray.kill(slot.handle)  # dead already, or overran: a fresh actor takes its place
        self.actors.remove(slot)
        if slot.pid in self.ex.worker_pids:
            self.ex.worker_pids.remove(slot.pid)
        return self._start(1)[0]

    def close(self) -> None:
        refs = [s.handle.teardown.remote() for s in self.actors]
        try:
            self.ray.get(refs, timeout=60)
        except Exception:  # a dead or stuck actor: it is killed below all the same
            pass
        for s in self.actors:
            self.ray.kill(s.handle)
        self.actors = []


class _Dispatch:
    """The driver's loop: send units to free slots, report outcomes one at a time."""

    def __init__(
        self,
        ex: RayExecutor,
        slots: Any,
        units: Sequence[Any],
        on_done: Callable[[Done[Any]], None],
        timeout: float | None,
    ) -> None:
        self.ex, self.slots, self.on_done, self.timeout = ex, slots, on_done, timeout
        self.ray = ex.connect()
        self.lost_types = _lost_errors(self.ray)
        # (unit, attempt, reasons the earlier attempts were lost)
        self.queue: deque[tuple[Any, int, tuple[str, ...]]] = deque((u, 1, ()) for u in units)
        self.inflight: dict[Any, tuple[_Slot, Any, int, tuple[str, ...], float]] = {}

    def run(self) -> None:
        while self.queue or self.inflight:
            while self.queue and self.slots.free:
                unit, attempt, lost = self.queue.popleft()
                slot = self.slots.free.pop()
                ref = self.slots.submit(slot, unit, self.timeout)
                self.inflight[ref] = (slot, unit, attempt, lost, time.perf_counter())
            ready, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=self._wait())
            for ref in ready:
                self._finish(ref)
            if self.timeout:
                self._expire()

    def _wait(self) -> float | None:
        if not self.timeout:
            return None
        oldest = min(v[4] for v in self.inflight.values())
        return max(0.0, oldest + self.timeout - time.perf_counter()) + 0.001

    def _finish(self, ref: Any) -> None:
        slot, unit, attempt, lost, t0 = self.inflight.pop(ref)
        try:
            result, seconds, _ = self.ray.get(ref)
        except self.lost_types as e:
            reason = _worker_error("worker lost", e)
            self.slots.free.append(self.slots.replace(slot, ref, kill=False))
            if attempt <= self.ex.max_retries:
                self.queue.appendleft((unit, attempt + 1, (*lost, reason)))
                return
            err = MnemometerError(f"{reason} ({attempt} attempts; max_retries exhausted)")
            self._report(Done(unit, error=err, attempts=attempt, lost=(*lost, reason)))
            return
        except self.ray.exceptions.RayTaskError as e:
            self.slots.free.append(slot)
            cause = e.cause if isinstance(e.cause, Exception) else RuntimeError(str(e))
            seconds = time.perf_counter() - t0
            self._report(Done(unit, error=cause, seconds=seconds, attempts=attempt, lost=lost))
            return
        self.slots.free.append(slot)
        self._report(Done(unit, result=result, seconds=seconds, attempts=attempt, lost=lost))

    def _expire(self) -> None:
        assert self.timeout
        now = time.perf_counter()
        for ref, (slot, unit, attempt, lost, t0) in list(self.inflight.items()):
            if now - t0 < self.timeout:
                continue
            del self.inflight[ref]  # a late result is never reported
            self.slots.free.append(self.slots.replace(slot, ref, kill=True))
            self._report(Done(unit, timed_out=True, seconds=now - t0, attempts=attempt, lost=lost))

    def _report(self, done: Done[Any]) -> None:
        try:
            self.on_done(done)
        except BaseException:
            if isinstance(self.slots, _Tasks):  # actors are killed when the slots close
                for ref in self.inflight:
                    self.ray.cancel(ref, force=True)
            raise
