"""Letta without a Letta server: every missing piece is one clear message before a run.

The live tests (tests/live/, marked live) run the real server; these check the messages
against what a broken or absent stack looks like over real HTTP: nothing listening, an old
server, an untested one, an unmigrated database, no install, no package index.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner
from conftest import needs

from mnemometer.agents import create_agent_factory
from mnemometer.cli.main import cli
from mnemometer.errors import MnemometerError
from mnemometer.stores import create_store

pytestmark = needs("letta_client", extras="[letta]")


class FakeLetta(BaseHTTPRequestHandler):
    """Just enough of a Letta server to be old, untested or unmigrated."""

    version = "0.16.8"
    agents_status = 200

    def log_message(self, *a):
        pass

    def _reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/v1/health"):
            self._reply(200, {"version": self.version, "status": "ok"})
        elif self.path.startswith("/v1/agents"):
            if self.agents_status == 200:
                self._reply(200, [])
            else:
                detail = 'relation "organizations" does not exist'
                self._reply(self.agents_status, {"detail": detail})
        elif self.path.startswith("/v1/models"):
            self._reply(200, [])
        else:
            self._reply(404, {"detail": "no route"})


@pytest.fixture
def fake_letta():
    def start(**attrs):
        handler = type("H", (FakeLetta,), attrs)
        srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    servers: list = []
    yield start
    for srv in servers:
        srv.shutdown()


def test_unreachable_server_names_the_command_that_starts_one():
    with pytest.raises(
        MnemometerError,
        match=r"cannot reach the Letta server at http://127\.0\.0\.1:9 .*`mnemometer serve letta`",
    ):
        create_agent_factory("letta", {"base_url": "http://127.0.0.1:9"})
    with pytest.raises(MnemometerError, match="cannot reach the Letta server"):
        create_store("letta", {"base_url": "http://127.0.0.1:9"})


def test_cli_refuses_before_the_run(tmp_path):
    args = "run retrieval -d demo-en --store letta -S base_url=http://127.0.0.1:9 --out".split()
    res = CliRunner().invoke(cli, [*args, str(tmp_path / "r")])
    assert isinstance(res.exception, MnemometerError) and "mnemometer serve letta" in str(
        res.exception
    )
    assert not (tmp_path / "r" / "items.jsonl").exists()


def test_old_untested_and_unmigrated_servers(fake_letta):
    with pytest.raises(
        MnemometerError, match=r"is 0\.11\.7; letta-client 1\.x needs 0\.16 or newer"
    ):
        create_store("letta", {"base_url": fake_letta(version="0.11.7")})
    with pytest.raises(MnemometerError, match=r"unmigrated database .*alembic upgrade head"):
        create_agent_factory("letta", {"base_url": fake_letta(agents_status=500)})
    # an untested newer server: a warning, then the next missing piece (no model offered)
    with pytest.warns(
        UserWarning, match=r"Letta server 0\.17\.0 .* is untested \(tested: 0\.16\.8\)"
    ):
        with pytest.raises(MnemometerError, match="choose the model with -A model=HANDLE"):
            create_agent_factory("letta", {"base_url": fake_letta(version="0.17.0")})


def test_bad_agent_type():
    with pytest.raises(
        MnemometerError, match="agent_type must be one of letta_v1_agent, memgpt_v2_agent"
    ):
        create_agent_factory("letta", {"agent_type": "memgpt_agent"})


def test_serve_refuses_an_untested_version_before_installing(tmp_path, monkeypatch):
    monkeypatch.setenv("MNEMOMETER_CACHE", str(tmp_path))
    res = CliRunner().invoke(cli, ["serve", "letta", "--letta-version", "0.11.7"])
    assert isinstance(res.exception, MnemometerError)
    assert "Letta 0.11.7 is untested (tested: 0.16.8)" in str(res.exception)
    assert "--allow-untested" in str(res.exception)
    assert list(tmp_path.iterdir()) == []  # nothing installed


def test_stack_without_an_install_says_how_to_prepare(tmp_path, monkeypatch):
    from mnemometer.services._letta_server import LettaStack

    monkeypatch.setenv("MNEMOMETER_CACHE", str(tmp_path))
    with pytest.raises(
        MnemometerError, match=r"not installed in .*`mnemometer serve letta --prepare`"
    ):
        LettaStack("http://127.0.0.1:9/v1").start()


@pytest.mark.slow
def test_first_install_without_a_package_index(tmp_path, monkeypatch):
    import subprocess
    import sys
    from pathlib import Path

    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "MNEMOMETER_CACHE": str(tmp_path / "cache"),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_EXTRA_INDEX_URL": "",
        "PIP_FIND_LINKS": "",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
    }
    exe = str(Path(sys.executable).with_name("mnemometer"))
    p = subprocess.run(
        [exe, "serve", "letta", "--prepare"], env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 2
    assert "the package index is not reachable (pip: No matching distribution found" in p.stderr
    assert "needs access to PyPI" in p.stderr and "Traceback" not in p.stderr


def test_head_revision_follows_the_migration_chain(tmp_path):
    from mnemometer.services._letta_install import LettaInstall, head_revision

    inst = LettaInstall.at(cache=tmp_path)
    versions = inst.migrations / "alembic" / "versions"
    versions.mkdir(parents=True)
    (versions / "a.py").write_text('revision = "aaa"\ndown_revision = None\n')
    (versions / "b.py").write_text(
        'revision: str = "bbb"\ndown_revision: Union[str, None] = "aaa"\n'
    )
    (versions / "c.py").write_text("revision = 'ccc'\ndown_revision = 'bbb'\n")
    assert head_revision(inst) == "ccc"
    (versions / "d.py").write_text("revision = 'ddd'\ndown_revision = 'bbb'\n")
    with pytest.raises(MnemometerError, match="cannot tell letta's migration head"):
        head_revision(inst)


def test_sweep_removes_only_work_directories_of_dead_processes(tmp_path):
    import os
    import subprocess

    from mnemometer.services._postgres import sweep, workdir

    dead = subprocess.Popen(["true"])
    dead.wait()
    mine, orphan, foreign = workdir(tmp_path), workdir(tmp_path), workdir(tmp_path)
    (orphan / ".owner").write_text(str(dead.pid))
    (foreign / ".owner").unlink()
    (kept := workdir(tmp_path) / "data").mkdir()
    (kept.parent / ".owner").write_text(str(dead.pid))  # dead, but holds a data directory
    assert sweep(tmp_path, keep=kept) == [orphan]
    assert mine.exists() and foreign.exists() and kept.exists() and not orphan.exists()
    assert (mine / ".owner").read_text() == str(os.getpid()) and oct(mine.stat().st_mode)[
        -3:
    ] == "711"
