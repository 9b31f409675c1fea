"""One writer per directory: a lock on a run or experiment directory while it is written.

``LOCK_FILE`` in the directory holds the writer's pid, host, start time and command, and
the writer holds an exclusive ``flock`` on it. The operating system drops the ``flock`` when
the process ends, however it ends (SIGKILL included), so a lock left behind by a killed
writer is stale by construction: the next writer finds the file unlocked, says whose it was,
and takes it over. A second writer while the first is alive is refused with a message naming
the holder. Readers (``report``, ``compare``) never take the lock.

Where ``fcntl`` is missing (Windows), the file is created exclusively and a lock whose pid
no longer runs on this host is taken over. :func:`out_dir` checks a directory about to be
written (``--out``) first: one that exists as a file is refused with the fix.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from mnemometer.errors import MnemometerError, RunLogError

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_log = logging.getLogger("mnemometer.lock")

LOCK_FILE = ".mnemometer.lock"
"""The lock file a writer keeps in the directory it writes (removed when it is done)."""


class DirectoryLocked(RunLogError):
    """Another live process is writing the directory."""


def _holder_text(info: dict[str, Any]) -> str:
    pid = info.get("pid", "?")
    host = info.get("host", "?")
    since = info.get("started_at", "?")
    cmd = info.get("command")
    return f"pid {pid} on {host} since {since}" + (f" ({cmd})" if cmd else "")


def _read_info(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def _command() -> str:
    argv = [os.path.basename(sys.argv[0] or "python"), *sys.argv[1:]]
    return " ".join(argv)[:200]


class DirLock:
    """An exclusive, process-lifetime lock on a directory being written.

    Use as a context manager or call :meth:`acquire` / :meth:`release`. Re-entrant within
    one object: nested ``with`` blocks of the same lock are fine.

    Attributes:
        taken_over: the holder of the stale lock this one replaced (``pid ... on host``),
            ``None`` when the directory was free.
    """

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        self.path = self.dir / LOCK_FILE
        self._f: IO[str] | None = None
        self._depth = 0
        self.taken_over: str | None = None

    def acquire(self) -> DirLock:
        """Take the lock.

        Raises:
            DirectoryLocked: another live process holds it (the message names it).
        """
        if self._f is not None:
            self._depth += 1
            return self
        self.dir.mkdir(parents=True, exist_ok=True)
        if fcntl is None:  # pragma: no cover - Windows
            self._acquire_exclusive()
        else:
            self._acquire_flock()
        self._depth = 1
        if self.taken_over:
            _log.warning(
                "%s: took over a stale lock of %s (that writer is gone)", self.dir, self.taken_over
            )
        return self

    def _acquire_flock(self) -> None:
        assert fcntl is not None
        for _ in range(20):  # a holder removing the file between our open and flock: retry
            f = open(self.path, "a+", encoding="utf-8")
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                raise DirectoryLocked(self._refusal(_read_info(self.path))) from None
            except OSError as e:  # a filesystem without locks: say so, don't pretend
                f.close()
                raise RunLogError(f"{self.path}: cannot lock ({e.strerror})") from None
            try:
                same = os.path.samestat(os.fstat(f.fileno()), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if not same:  # we locked a file its holder had just removed
                f.close()
                continue
            previous = _read_info(self.path)
            if previous:
                self.taken_over = _holder_text(previous)
            self._write(f)
            self._f = f
            return
        raise RunLogError(f"{self.path}: could not take the lock (it keeps changing)")

    def _acquire_exclusive(self) -> None:  # pragma: no cover - Windows
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR)
            except FileExistsError:
                info = _read_info(self.path)
                if info.get("host") == socket.gethostname() and not _alive(info.get("pid")):
                    self.taken_over = _holder_text(info)
                    self.path.unlink(missing_ok=True)
                    continue
                raise DirectoryLocked(self._refusal(info)) from None
            f = os.fdopen(fd, "w+", encoding="utf-8")
            self._write(f)
            self._f = f
            return
        raise DirectoryLocked(self._refusal(_read_info(self.path)))

    def _write(self, f: IO[str]) -> None:
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": _command(),
        }
        f.seek(0)
        f.truncate()
        f.write(json.dumps(info) + "\n")
        f.flush()

    def _refusal(self, info: dict[str, Any]) -> str:
        who = _holder_text(info) if info else "another process"
        return (
            f"{self.dir}: is being written by {who}; wait for it to finish or stop it "
            f"(a lock left by a process that died is taken over by the next writer)"
        )

    def release(self) -> None:
        """Give the lock up (the file is removed)."""
        if self._f is None:
            return
        self._depth -= 1
        if self._depth > 0:
            return
        f, self._f = self._f, None
        try:
            self.path.unlink(missing_ok=True)
        finally:
            f.close()  # closing drops the flock

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(directory: str | Path) -> str | None:
    """Who is writing ``directory`` now (``pid ... on host``), or ``None`` when nobody is."""
    path = Path(directory) / LOCK_FILE
    if not path.exists():
        return None
    if fcntl is None:  # pragma: no cover - Windows
        info = _read_info(path)
        if info.get("host") == socket.gethostname() and not _alive(info.get("pid")):
            return None
        return _holder_text(info)
    try:
        with open(path, encoding="utf-8") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _holder_text(_read_info(path))
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
            return None
    except FileNotFoundError:
        return None


def _alive(pid: Any) -> bool:  # pragma: no cover - Windows
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def out_dir(path: str | Path, what: str) -> Path:
    """``path`` as a directory to create or continue: refused when it exists as a file.

    Args:
        path: the ``--out`` directory.
        what: what it holds, for the message (``run directory``, ``sweep directory``).

    Raises:
        MnemometerError: ``path`` (or a parent) exists and is not a directory.
    """
    p = Path(path)
    for d in (p, *p.parents):
        if d.exists() or d.is_symlink():
            if not d.is_dir():
                which = "exists" if d == p else f"has a parent that is not a directory ({d})"
                raise MnemometerError(
                    f"{p}: {which} and is not a directory; --out names the {what} to "
                    "create: choose another path"
                )
            break
    return p
