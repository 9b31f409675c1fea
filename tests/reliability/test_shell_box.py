"""Shell tasks stay in their box: floods, SIGTERM, escaped grandchildren, fixtures, env.

Every command here is a real subprocess. Synchronisation is by files the commands write
(pids) and by the executor returning, never by sleeping for a guessed time.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

import pytest
from build_helpers import gone
from conftest import invoke_cli as cli
from conftest import seed_file

from mnemometer.log import read_log
from mnemometer.sandbox import (
    HOME_FILES,
    FixtureError,
    bwrap_problem,
    check_fixture,
    evals_root,
    run_command,
    task_env,
)

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "examples" / "suites" / "build-site"


def _run(tmp: Path, code: str, name: str, **kw):
    return run_command(
        [sys.executable, "-c", code],
        cwd=tmp,
        env=task_env(),
        out_prefix=tmp / "out" / name,
        **{"timeout": 20.0, **kw},
    )


def test_an_output_flood_is_capped_in_bounded_memory(tmp_path):
    flood = 256 << 20  # 256 MiB to each stream, unbuffered
    code = (
        "import os\nb = b'x' * (1 << 20)\n"
        f"for _ in range({flood >> 20}):\n    os.write(1, b)\n    os.write(2, b)\n"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    res = _run(tmp_path, code, "flood", cap=4096)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert res.ok
    assert res.stdout_bytes == flood and res.stderr_bytes == flood
    assert Path(res.stdout_path).stat().st_size == 4096
    assert Path(res.stderr_path).stat().st_size == 4096
    assert grown_mib < 64, f"the executor held {grown_mib:.0f} MiB of a 512 MiB flood"


def test_a_command_ignoring_sigterm_is_killed_at_its_timeout_and_after_its_exit(tmp_path):
    # The leader ignores SIGTERM and never exits: killed at its timeout.
    stubborn = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    pidfile = tmp_path / "leader.pid"
    code = stubborn + f"import os\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
    code += "while True: time.sleep(1)\n"
    t0 = time.monotonic()
    res = _run(tmp_path, code, "stubborn", timeout=1.0, grace=0.2)
    assert res.timed_out and time.monotonic() - t0 < 10
    assert gone(int(pidfile.read_text()))
    # The leader exits at once, leaving a child in its group that ignores SIGTERM.
    child = tmp_path / "child.pid"
    code = (
        "import subprocess, sys\n"
        f"p = subprocess.Popen([sys.executable, '-c', {stubborn + 'time.sleep(600)'!r}])\n"
        f"open({str(child)!r}, 'w').write(str(p.pid))\n"
    )
    res = _run(tmp_path, code, "leaves-child", grace=0.2)
    assert res.exit_code == 0
    assert gone(int(child.read_text())), "a child ignoring SIGTERM outlived its task"


def test_a_double_forked_grandchild_does_not_outlive_its_task(tmp_path):
    # fork, setsid (a new session: out of the task's process group), fork again; the
    # grandchild keeps stdout open and ignores SIGTERM. The leader exits once it knows
    # the grandchild's pid (read from a pipe, so no sleep decides the order).
    pidfile = tmp_path / "grandchild.pid"
    code = f"""
import os, signal, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.write(w, str(os.getpid()).encode())
        os.close(w)
        while True:
            print("still here", flush=True)
            time.sleep(0.5)
    os._exit(0)
os.close(w)
open({str(pidfile)!r}, "w").write(os.read(r, 32).decode())
"""
    t0 = time.monotonic()
    res = _run(tmp_path, code, "escape")
    took = time.monotonic() - t0
    pid = int(pidfile.read_text())
    assert gone(pid), "the double-forked grandchild outlived its task"
    assert res.exit_code == 0
    assert took < 5, f"the executor waited {took:.1f} s on the escaped grandchild's pipe"


# ---- fixtures -----------------------------------------------------------------------


def _evals(tmp: Path) -> tuple[Path, Path]:
    """``tmp/evals`` with ``fixtures/site`` and a suite at ``suites/s``."""
    evals = tmp / "evals"
    shutil.copytree(SITE / "fixtures" / "site", evals / "fixtures" / "site")
    (evals / "suites" / "s").mkdir(parents=True)
    return evals, evals / "suites" / "s"


def test_a_fixture_shared_inside_the_evals_root_works_and_one_outside_is_refused(tmp_path):
    evals, suite = _evals(tmp_path)
    assert evals_root(suite) == evals.resolve()
    # Memory Layer's follow-up suite starts from a fixture two levels up.
    assert check_fixture(suite, "../../fixtures/site") == (evals / "fixtures" / "site").resolve()
    (tmp_path / "outside" / "site").mkdir(parents=True)
    (tmp_path / "outside" / "site" / "secret.txt").write_text("x")
    with pytest.raises(FixtureError, match="outside the evals root"):
        check_fixture(suite, "../../../outside/site")
    # A symlinked directory on the way out is refused the same way.
    os.symlink(tmp_path / "outside", evals / "fixtures" / "link")
    with pytest.raises(FixtureError, match="outside the evals root"):
        check_fixture(suite, "../../fixtures/link/site")
    # Without an enclosing evals/ directory, the suite directory is the root.
    lone = tmp_path / "lone"
    shutil.copytree(SITE, lone)
    assert evals_root(lone) == lone.resolve()
    assert check_fixture(lone, "fixtures/site").is_dir()
    with pytest.raises(FixtureError, match="outside the evals root"):
        check_fixture(lone, "../outside")


def test_the_memory_layer_follow_up_suite_fixture_resolves(tmp_path):
    seed = seed_file("memory-layer", "evals")
    suite = seed_file(
        "memory-layer", "evals", "suites", "app-build-functionality-sequence-codex-v1"
    )
    line = (suite / "items.jsonl").read_text().splitlines()[0]
    fixture = json.loads(line)["fixture"]
    assert fixture.startswith("../../fixtures/")
    assert check_fixture(suite, fixture).is_relative_to(seed.resolve())


# ---- environment ----------------------------------------------------------------------


def test_the_child_gets_a_minimal_env_plus_allow_listed_names(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_PASSWORD", "canary-db-8d1f")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "canary-aws-77c2")
    monkeypatch.setenv("OPENAI_API_KEY", "agent-key-5e0a")
    monkeypatch.setenv("AGENT_REGION", "eu-west")
    evals, suite = _evals(tmp_path)
    (suite / "suite.toml").write_text(
        'name = "s"\nfixture = "../../fixtures/site"\npass_env = ["AGENT_REGION"]\n'
    )
    dump = "import json, os, sys; json.dump(dict(os.environ), open('env.json', 'w'))"
    item = {
        "eval_type": "command_task",
        "id": "env",
        "command": f"{{python}} -c {json.dumps(dump)}",
    }
    (suite / "items.jsonl").write_text(json.dumps(item) + "\n")
    out = tmp_path / "run"
    # The environment layer alone (--sandbox none): bubblewrap's private HOME is its own test.
    flags = ["--allow-shell", "--condition", "no-memory", "--sandbox", "none"]
    r = cli("run", str(suite), *flags, "-o", str(out), "--pass-env", "OPENAI_API_KEY")
    # suite.toml's pass_env asks; only the user's --pass-env grants (issue 30 §1).
    assert r.exit_code == 2, r.output
    assert r.output.strip().endswith(
        f"{suite / 'suite.toml'} asks for its commands to receive AGENT_REGION: "
        "run with --pass-env AGENT_REGION to grant it"
    ), r.output
    assert not out.exists() and not (suite / "env.json").exists()
    granted = ["--pass-env", "OPENAI_API_KEY", "--pass-env", "AGENT_REGION"]
    r = cli("run", str(suite), *flags, "-o", str(out), *granted)
    assert r.exit_code == 0, r.output
    (res,) = read_log(out / "no-memory-r0").items
    env = json.loads((Path(res.extra["build_dir"]) / "workspace" / "env.json").read_text())
    assert env["OPENAI_API_KEY"] == "agent-key-5e0a"  # the user allow-listed it
    assert env["AGENT_REGION"] == "eu-west"  # the suite asked, the user granted
    assert "DATABASE_PASSWORD" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["PATH"] == os.environ["PATH"]
    # every command gets a private HOME (the agent-home allow-list), never the parent's
    assert env["HOME"] != os.environ["HOME"] and "mnemometer-home-" in env["HOME"]
    assert env["MEMORY_EVAL_CONDITION"] == "no-memory"
    minimal = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ"}
    homes = {var for var, _, _ in HOME_FILES.values()} | {"XDG_CONFIG_HOME"}
    harness = {"TMPDIR", "MNEMOMETER_TASK_ID", "OPENAI_API_KEY", "AGENT_REGION", *homes}
    rest = {
        k for k in env if k not in minimal | harness and not k.startswith(("LC_", "MEMORY_EVAL_"))
    }
    assert not rest, f"the child saw parent variables nobody allow-listed: {sorted(rest)}"


# ---- what the harness reads for the agent (issue 30 §1) --------------------------------

HOST_SECRET = "fake-host-secret-7f3c"


def _host_file(tmp: Path) -> Path:
    """A file in a stand-in for the caller's home: no command may get its content out."""
    home = tmp / "host-home"
    home.mkdir()
    (home / "notes.txt").write_text(HOST_SECRET + "\n")
    return home / "notes.txt"


def test_a_link_out_of_the_workspace_satisfies_no_check(tmp_path):
    # Before: `leak.txt` -> a host file passed `required_content` (the harness read it for
    # an agent the sandbox had kept from it), and `.memory-eval/` links were copied whole.
    secret = _host_file(tmp_path)
    evals, suite = _evals(tmp_path)
    (suite / "suite.toml").write_text('name = "s"\nfixture = "../../fixtures/site"\n')
    agent = (
        "import os, sys; os.chdir(sys.argv[1])\n"
        f"os.symlink({str(secret)!r}, 'leak.txt')\n"
        f"os.symlink({str(secret.parent)!r}, 'host')\n"
        f"open('inside.txt', 'w').write({HOST_SECRET!r})\n"
        "os.symlink('inside.txt', 'alias.txt')\n"
        "os.makedirs('.memory-eval', exist_ok=True)\n"
        f"os.symlink({str(secret)!r}, '.memory-eval/stolen.txt')\n"
    )
    (suite / "agent.py").write_text(agent)
    content = [{"file": f, "contains": HOST_SECRET} for f in ("leak.txt", "host/notes.txt")]
    item = {
        "eval_type": "agent_build_task",
        "id": "links",
        "fixture": "../../fixtures/site",
        "prompt": "Leave some links.",
        "agent_command": "{python} {suite_dir}/agent.py {workspace}",
        "timeout_seconds": 60,
        "required_files": ["leak.txt", "host/notes.txt", "alias.txt"],
        "required_content": [*content, {"file": "alias.txt", "contains": HOST_SECRET}],
    }
    (suite / "items.jsonl").write_text(json.dumps(item) + "\n")
    out = tmp_path / "run"
    r = cli("run", str(suite), "--allow-shell", "--condition", "lexical", "-o", str(out))
    assert r.exit_code in (0, 1), r.output
    (res,) = read_log(out / "lexical-r0").items
    build = Path(res.extra["build_dir"])
    detail = json.loads((build / "summary.json").read_text())
    assert detail["required_files"] == {
        "leak.txt": False,
        "host/notes.txt": False,
        "alias.txt": True,
    }
    assert [c["ok"] for c in detail["required_content"]] == [False, False, True]
    kept = build / "memory-eval" / "stolen.txt"  # the evidence copy keeps a link a link
    assert kept.is_symlink() or not kept.exists()


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}")
def test_naming_a_host_file_does_not_show_it_to_the_sandbox(tmp_path):
    # Before: every absolute path a command named was bound into the sandbox, so `cp
    # /home/me/notes.txt {workspace}` copied the caller's file out. Only the program and
    # scripts by suffix are shown now; anything else needs --sandbox-ro.
    secret = _host_file(tmp_path)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.toml").write_text('name = "s"\n')
    cmd = f"cp {secret} {{workspace}}/stolen.txt"
    (suite / "items.jsonl").write_text(
        json.dumps({"eval_type": "command_task", "id": "cp", "command": cmd}) + "\n"
    )
    out = tmp_path / "run"
    r = cli("run", str(suite), "--allow-shell", "--condition", "no-memory", "-o", str(out))
    assert r.exit_code in (0, 1), r.output
    (res,) = read_log(out / "no-memory-r0").items
    stolen = Path(res.extra["build_dir"]) / "workspace" / "stolen.txt"
    assert not stolen.exists(), stolen.read_text()
    assert res.success is False
