"""Isolation for shell and agent commands: bubblewrap around the command line.

Memory Layer ran its Codex builds in containers with a sanitised agent home, because an
agent that reads the host's global instructions, config or plugins makes token and quality
claims invalid. Here the same isolation comes from bubblewrap (Debian's ``bubblewrap``):

* the system (``/usr``, ``/etc``, the Python that runs mnemometer) is mounted read-only;
* ``/tmp`` is empty and private; the build directory (workspace, prompt, outputs) is the
  only writable place;
* ``HOME`` is a fresh directory holding only an allow-list of the agent's bootstrap files
  (:data:`HOME_FILES`: for Codex ``auth.json``, ``installation_id``, ``version.json``;
  never global instructions, config, plugins, history, rules or sessions); it lives
  outside the run directory and is removed when the command ends, so credentials never
  land in a run's artifacts;
* the network is off (a private loopback only) unless the suite allows it;
* no capabilities, its own PID namespace (nothing outlives it), a new session.

:meth:`Sandbox.command` only rewrites the argv (``bwrap ... -- argv``, or ``env HOME=...
argv`` without bubblewrap), so it composes with whatever executes the argv.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError

ISOLATIONS = ("auto", "bwrap", "none")
"""``--sandbox`` values: ``auto`` is bubblewrap where it works, else none (recorded)."""
HOME_FILES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "codex": ("CODEX_HOME", ".codex", ("auth.json", "installation_id", "version.json")),
    "claude": ("CLAUDE_CONFIG_DIR", ".claude", (".credentials.json",)),
}
"""Agent kind → (variable naming its home, directory under ``~``, files copied)."""
AGENT_HOMES = ("none", *HOME_FILES)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")


class SandboxError(MnemometerError):
    """Bubblewrap was asked for and cannot run here (the message says why)."""


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate a command here (``None``: it can)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bwrap is not installed (Debian: apt-get install bubblewrap)"
    probe = [exe, "--ro-bind", "/", "/", "--unshare-all", "--cap-drop", "ALL", "true"]
    try:
        p = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap does not start: {e}"
    if p.returncode != 0:
        return f"bwrap cannot create namespaces here: {p.stderr.strip()[:200]}"
    return None


def resolve_isolation(requested: str) -> str:
    """``bwrap`` or ``none`` for a ``--sandbox`` value.

    Raises:
        SandboxError: ``bwrap`` was asked for and does not work here.
    """
    if requested not in ISOLATIONS:
        raise SandboxError(f"--sandbox must be one of {', '.join(ISOLATIONS)}, got {requested!r}")
    if requested == "none":
        return "none"
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    if requested == "bwrap":
        raise SandboxError(f"--sandbox bwrap: {problem}")
    return "none"


def agent_home_source(kind: str) -> Path:
    """Where the host keeps ``kind``'s home (its variable, else ``~/.<kind>``)."""
    var, sub, _ = HOME_FILES[kind]
    return Path(os.environ.get(var) or Path.home() / sub)


def _python_paths() -> list[Path]:
    """What running mnemometer's Python needs: its prefixes and its import path."""
    here = Path(__file__).parents[2]  # the directory mnemometer is imported from
    paths = [Path(sys.prefix), Path(sys.base_prefix), here]
    paths += [Path(p) for p in sys.path if p and os.path.isabs(p)]
    out: list[Path] = []
    for p in paths:
        for q in (p, p.resolve()) if p.exists() else ():
            if not _under(q, [Path(s) for s in _SYSTEM]) and q not in out:
                out.append(q)
    return out


SCRIPT_SUFFIXES = (".sh", ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".bash")
"""Suffixes of the scripts a command may name by absolute path (then shown read-only)."""


def _named_programs(argv: list[str]) -> list[str]:
    """The programs and scripts ``argv`` names by absolute path, to show read-only.

    The program itself (an executable file) and scripts it is given (an agent or check
    script, by suffix). Any other file a command names (``cat /home/me/.ssh/id_rsa``) stays
    hidden: naming a host file must not be a way through the sandbox. A path outside these
    rules needs ``--sandbox-ro PATH``.
    """
    named = []
    for i, a in enumerate(argv):
        if not (os.path.isabs(a) and os.path.isfile(a)):
            continue
        if (i == 0 and os.access(a, os.X_OK)) or a.endswith(SCRIPT_SUFFIXES):
            named.append(a)
    return named


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


@dataclass
class Sandbox:
    """How commands of one run are isolated.

    Args:
        isolation: ``bwrap`` or ``none`` (see :func:`resolve_isolation`).
        network: keep the host network (otherwise only a private loopback).
        agent_home: ``codex``, ``claude`` or ``none``: whose bootstrap files the private
            ``HOME`` receives.
        read_only: more paths visible read-only (the suite, its memories, an agent CLI
            installed outside the system directories).
        writable: more paths visible read-write (a database's socket directory).
        env: variables set inside (a database URL).
    """

    isolation: str = "none"
    network: bool = False
    agent_home: str = "none"
    read_only: list[Path] = field(default_factory=list)
    writable: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    database: Any = None
    """The run's :class:`~mnemometer.services._pgvector.MemoryDatabase`, while it runs."""

    def start_database(self) -> None:
        """A fresh PostgreSQL + pgvector for the run's commands.

        Its URL goes in ``MEMORY_EVAL_DATABASE_URL`` and its socket directory is bound in, so
        commands reach it with the network off.
        """
        from mnemometer.services._pgvector import MemoryDatabase

        self.stop_database()
        self.database = MemoryDatabase()
        self.env["MEMORY_EVAL_DATABASE_URL"] = self.database.start()
        self.writable = [self.database.socket_dir]

    def stop_database(self) -> None:
        """Stop and remove the run's database (nothing when there is none)."""
        if self.database is not None:
            self.database.stop()
            self.database = None
            self.env.pop("MEMORY_EVAL_DATABASE_URL", None)
            self.writable = []

    def describe(self) -> dict[str, object]:
        """What the run log records (never a file's content)."""
        return {
            "isolation": self.isolation,
            "network": self.network or self.isolation == "none",
            "agent_home": self.agent_home,
            "home_files": list(HOME_FILES[self.agent_home][2]) if self.agent_home != "none" else [],
        }

    @contextmanager
    def command(self, argv: list[str], cwd: Path, writable: list[Path]) -> Iterator[list[str]]:
        """The argv to run instead of ``argv``, with a private ``HOME`` while it runs.

        Args:
            argv: the command.
            cwd: its working directory (inside ``writable``).
            writable: directories it may write (the build directory).
        """
        home = Path(tempfile.mkdtemp(prefix="mnemometer-home-"))
        try:
            home.chmod(0o700)
            env = {**self._home(home), **self.env}
            if self.isolation == "bwrap":
                yield self._bwrap(argv, cwd, [*writable, *self.writable], home, env)
            else:
                yield [shutil.which("env") or "env", *(f"{k}={v}" for k, v in env.items()), *argv]
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def _home(self, home: Path) -> dict[str, str]:
        """Fill ``home`` from the allow-list; the variables that point agents at it."""
        env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
        for kind, (var, sub, _) in HOME_FILES.items():
            env[var] = str(home / sub)
            (home / sub).mkdir()
            if kind == self.agent_home:
                src = agent_home_source(kind)
                for name in HOME_FILES[kind][2]:
                    f = src / name
                    if f.is_file() and not f.is_symlink():
                        shutil.copy2(f, home / sub / name)
        return env

    def _bwrap(
        self, argv: list[str], cwd: Path, writable: list[Path], home: Path, env: dict[str, str]
    ) -> list[str]:
        out = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--new-session"]
        out += ["--unshare-all", "--cap-drop", "ALL"]
        if self.network:
            out.append("--share-net")
        for d in _SYSTEM:
            if os.path.islink(d):
                out += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                out += ["--ro-bind", d, d]
        out += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        rw = [Path(w).resolve() for w in writable]
        ro = [*_python_paths(), *(Path(p).resolve() for p in self.read_only)]
        # The programs and scripts the command names (an agent script, a check script),
        # normalised: `{suite_dir}/../../agent.py` is not under the suite directory.
        ro += [Path(os.path.normpath(a)) for a in _named_programs(argv)]
        shown: list[Path] = [Path(d) for d in _SYSTEM]
        for p in sorted(dict.fromkeys(ro), key=lambda p: len(p.parts)):
            if p.exists() and not _under(p, rw) and not _under(p, shown):
                out += ["--ro-bind", str(p.resolve()), str(p)]
                shown.append(p)
        for p in dict.fromkeys(rw):
            out += ["--bind", str(p), str(p)]
        out += ["--bind", str(home), str(home)]
        for k, v in env.items():
            out += ["--setenv", k, v]
        return [*out, "--chdir", str(cwd), "--", *argv]
