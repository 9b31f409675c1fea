"""What a suite command may see and how long it may live: its environment and its stragglers.

Two layers of the box around every shell task (the fixture layer is in :mod:`._workspace`):

* **environment**: the child starts from a minimal environment (``PATH``, ``HOME``, the
  locale, ...), plus the variables the suite (``pass_env`` in ``suite.toml``) or the user
  (``--pass-env``) allow-lists, plus what the harness sets. Everything else the parent
  holds (keys, tokens, passwords) stays out, and memory variables are always removed so a
  ``no-memory`` command cannot find a memory service by accident;
* **stragglers**: every command gets a unique ``MNEMOMETER_TASK_ID``. A process that left
  the task's process group (``setsid`` plus a double fork) still carries it, so after the
  task ends the processes holding it are found in ``/proc`` and killed. A process that
  rewrites its own environment can still escape; a sandbox (bubblewrap) closes that.
"""

from __future__ import annotations

import fnmatch
import os
import signal
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

MEMORY_ENV_PREFIXES = ("MEMORY_", "MNEMOMETER_QUERY_")
"""Environment variables removed before every command; the harness sets its own."""

MINIMAL_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ")
"""Names (``*`` patterns) a command always inherits: enough to find programs and a locale."""

TASK_ID_VAR = "MNEMOMETER_TASK_ID"
"""Set to a fresh token for every command; marks its processes, wherever they go."""

_ROUNDS = 20
"""Sweeps for stragglers: one may fork while the previous sweep kills."""


def allowed(name: str, patterns: Iterable[str]) -> bool:
    """Whether ``name`` matches one of ``patterns`` (exact names or ``*`` globs)."""
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def task_env(
    base: Mapping[str, str] | None = None, allow: Iterable[str] = (), **set_vars: str
) -> dict[str, str]:
    """The environment of one command: minimal names plus ``allow``, then ``set_vars``.

    Args:
        base: the parent environment (default: this process's).
        allow: names or ``*`` patterns the suite or the user lets through (an agent's
            credentials, say). Memory variables are removed even when listed.
        set_vars: what the harness sets; added last.
    """
    patterns = (*MINIMAL_ENV, *allow)
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if allowed(k, patterns) and not k.startswith(MEMORY_ENV_PREFIXES)
    }
    env.update({k: str(v) for k, v in set_vars.items()})
    return env


def new_task_id() -> str:
    """A fresh token for :data:`TASK_ID_VAR`."""
    return uuid.uuid4().hex


def _holders(token: bytes) -> list[int]:
    """Pids of this user's processes whose environment carries ``token``."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if token in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or another user's process
            continue
    return found


def kill_stragglers(task_id: str) -> int:
    """SIGKILL every process still marked with ``task_id``; the number killed.

    Called after the task's own process group is gone, so whatever is found escaped it.
    Where there is no ``/proc`` (not Linux) nothing is found.
    """
    token = f"{TASK_ID_VAR}={task_id}".encode()
    killed: set[int] = set()
    for _ in range(_ROUNDS):
        pids = [p for p in _holders(token) if not _is_zombie(p)]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
    return len(killed)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")
