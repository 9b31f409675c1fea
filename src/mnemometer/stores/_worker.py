"""An object built and driven in a child process of its own, one method call at a time.

For a system whose configuration is process-wide (cognee: its directories and LLM
endpoint), one instance per process is the only way two of them work at once: each
conversation's store then runs in a worker process, and the threads that fill the
conversations (:func:`mnemometer.suites._ingest.fill_each`) overlap naturally.

The child is started with the ``spawn`` method (a fresh interpreter: never a fork of a
process that holds threads and torch), builds the object from its ``module:attr`` name
and keyword arguments, and answers calls sent over a pipe. What it measures (a store's
ledger of LLM calls, tokens and seconds) comes back as the method's return value, so the
figures are the child's own, exact. Faults are errors, never hangs:

- the child dies (killed, out of memory): the pipe closes, and the call waiting on it
  raises :class:`~mnemometer.errors.MnemometerError` naming the process and its exit code;
- the object raises: the call raises a ``MnemometerError`` with the child's message
  (a failure to build the object is the answer to every call);
- the parent dies: the child notices within a second and exits; on a normal exit or
  when the worker is garbage-collected, the child is stopped; Ctrl-C is the parent's to
  handle (the child ignores SIGINT).
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import threading
import time
import weakref
from typing import Any

from mnemometer.errors import MnemometerError

_CLOSE = "__close__"


class ProcessWorker:
    """Build ``factory(**kwargs)`` in a child process and call its methods there.

    Args:
        factory: ``"package.module:Class"``, importable in a fresh interpreter.
        kwargs: its keyword arguments (picklable).
        name: what errors call the worker (``"cognee"``).
    """

    def __init__(self, factory: str, kwargs: dict[str, Any], name: str) -> None:
        self.name = name
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(
            target=_serve,
            args=(child, factory, kwargs, os.getpid()),
            daemon=True,  # stopped by multiprocessing when this process exits normally
            name=f"mnemometer-{name}",
        )
        self._proc.start()
        child.close()  # else the parent's copy keeps the pipe open after the child dies
        self._lock = threading.Lock()  # one request and its reply at a time
        self._stop = weakref.finalize(self, _stop, self._proc, self._conn)

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        return self._proc.pid

    def call(self, method: str, *args: Any) -> Any:
        """Call ``method(*args)`` on the child's object and return what it returns.

        Raises:
            MnemometerError: the object raised (its message), the child died, or the
                worker was closed.
        """
        with self._lock:
            if not self._stop.alive:
                raise MnemometerError(f"{self.name}: its worker process was closed")
            try:
                self._conn.send((method, args))
                ok, value = self._conn.recv()
            except (EOFError, OSError) as e:
                self._proc.join(timeout=5)
                code = self._proc.exitcode
                how = f"exit code {code}" if code is not None else type(e).__name__
                self._stop()
                raise MnemometerError(
                    f"{self.name}: its worker process (pid {self._proc.pid}) died ({how}) "
                    f"during {method}; what it held is lost"
                ) from None
        if ok:
            return value
        raise MnemometerError(value)

    def close(self) -> None:
        """Close the object and stop the child (it is killed if it does not stop)."""
        with self._lock:
            self._stop()


def _stop(proc: Any, conn: Any) -> None:
    """Ask the child to close its object and exit; kill it if it does not."""
    try:
        if proc.is_alive():
            conn.send((_CLOSE, ()))
            if conn.poll(30):
                conn.recv()
    except (EOFError, OSError):
        pass
    conn.close()
    proc.join(timeout=10)
    if proc.is_alive():
        proc.kill()
        proc.join(timeout=10)


def _serve(conn: Any, factory: str, kwargs: dict[str, Any], parent: int) -> None:
    """The child: build the object, then answer calls until closed or orphaned."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    # The parent stops this process when it exits (the daemon flag, kept there); here the
    # object may start processes of its own (cognee does), which a daemon may not.
    multiprocessing.current_process().daemon = False
    threading.Thread(target=_orphan_watch, args=(parent,), daemon=True).start()
    obj: Any = None
    broken: str | None = None
    try:
        module, _, attr = factory.partition(":")
        obj = getattr(importlib.import_module(module), attr)(**kwargs)
    except Exception as e:  # noqa: BLE001 - every call answers with it
        broken = _message(e, "could not start")
    while True:
        try:
            method, args = conn.recv()
        except (EOFError, OSError):
            break
        if method == _CLOSE:
            if obj is not None and hasattr(obj, "close"):
                obj.close()
            conn.send((True, None))
            break
        if broken is not None:
            conn.send((False, broken))
            continue
        try:
            reply = (True, getattr(obj, method)(*args))
        except Exception as e:  # noqa: BLE001 - raised in the parent
            reply = (False, _message(e, f"{method} failed"))
        try:
            conn.send(reply)
        except Exception as e:  # noqa: BLE001 - a reply that cannot be pickled
            conn.send((False, _message(e, f"could not send what {method} returned")))
    conn.close()


def _message(e: BaseException, what: str) -> str:
    if isinstance(e, MnemometerError):
        return str(e)
    return f"worker process (pid {os.getpid()}) {what}: {type(e).__name__}: {str(e)[:500]}"


def _orphan_watch(parent: int) -> None:
    """Exit when the parent is gone (it was killed: nobody will ask for anything again)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    for child in multiprocessing.active_children():  # cognee's database processes
        child.kill()
    os._exit(1)
