"""A suite cannot turn on the shell for itself (issue 30 §1).

Consent to run a suite's code (``--allow-shell``), the sandbox (``--sandbox`` and the other
sandbox flags) and what environment reaches the commands (``--pass-env``) are the user's:
from the command line or an explicit API argument, never from ``MNEMOMETER_RUN_*``, a
``.env`` file (the command line loads the nearest one, so a suite directory may ship one)
or a sweep file. The run header records where each came from.

The attack runs the real command line in a child process from inside the suite
directory, as a user would after downloading it; every key and secret here is fake.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import MNEMOMETER, invoke_cli

from mnemometer.log import read_header, read_log
from mnemometer.sandbox import bwrap_problem

FAKE_KEY = "sk-fake-consent-0a1b2c3d4e5f"
SECRET = "fake-ssh-key-consent-canary"
CANARY = "fake-canary-request-91e4"
DOTENV = "MNEMOMETER_RUN_ALLOW_SHELL=1\nMNEMOMETER_RUN_SANDBOX=none\nMNEMOMETER_RUN_PASS_ENV=*\n"
GRANTS = ("MNEMOMETER_RUN_ALLOW_SHELL", "MNEMOMETER_RUN_SANDBOX", "MNEMOMETER_RUN_PASS_ENV")


def _hostile_suite(tmp: Path) -> tuple[Path, Path, Path]:
    """A suite directory whose ``.env`` grants itself the shell, and whose command steals.

    Its ``command_task`` writes ``OPENAI_API_KEY`` and a file from the caller's home
    directory to a file outside its workspace. Returns ``(suite, the secret, the loot)``.
    """
    home = tmp / "home"
    home.mkdir()
    secret = home / "id_ed25519"
    secret.write_text(SECRET + "\n")
    loot = tmp / "loot.txt"
    suite = tmp / "innocent-suite"
    suite.mkdir()
    (suite / ".env").write_text(DOTENV)
    (suite / "suite.toml").write_text('name = "innocent"\n')
    steal = (
        f"import os; open({str(loot)!r}, 'w').write("
        f"str(os.environ.get('OPENAI_API_KEY')) + ' ' + open({str(secret)!r}).read())"
    )
    item = {
        "eval_type": "command_task",
        "id": "setup",
        "command": "{python} -c " + json.dumps(steal),
    }
    (suite / "items.jsonl").write_text(json.dumps(item) + "\n")
    return suite, secret, loot


def _cli_from(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """The command line as the user runs it: the ``.env`` of ``cwd`` loads, a key is set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOMETER_")}
    env["OPENAI_API_KEY"] = FAKE_KEY
    env["CANARY_VAR"] = CANARY
    return subprocess.run(
        [MNEMOMETER, *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_a_suite_env_file_cannot_turn_on_the_shell(tmp_path: Path) -> None:
    # Before: exit 0, the command ran unsandboxed and wrote the key and the home file out.
    suite, _, loot = _hostile_suite(tmp_path)
    p = _cli_from(suite, "run", ".", "--condition", "no-memory", "-o", tmp_path / "run")
    assert not loot.exists(), f"the suite ran its command and took: {loot.read_text()}"
    assert p.returncode == 2, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "pass --allow-shell" in errors[0], p.stderr
    for var in GRANTS:  # each variable that tried: one line naming it and its file
        (line,) = [w for w in p.stderr.splitlines() if w.startswith(f"warning: {var} ")]
        assert f"set in {suite / '.env'}" in line and "command line only" in line, line
    assert "Traceback" not in p.stderr


def test_consent_on_the_command_line_keeps_the_sandbox_and_the_secrets(tmp_path: Path) -> None:
    # The user consents to run the suite; its .env still chooses neither the sandbox nor
    # what the command sees: the key stays out, and bubblewrap (where it works) keeps the
    # home directory out too.
    suite, _, loot = _hostile_suite(tmp_path)
    out = tmp_path / "run"
    p = _cli_from(suite, "run", ".", "--allow-shell", "--condition", "no-memory", "-o", out)
    assert p.returncode in (0, 1), p.stderr
    assert FAKE_KEY not in (loot.read_text() if loot.exists() else ""), "the key reached it"
    header = read_header(out / "no-memory-r0")
    sandboxed = bwrap_problem() is None
    assert header.suite_options["isolation"] == ("bwrap" if sandboxed else "none")
    if sandboxed:
        assert not loot.exists(), "the sandboxed command wrote outside its build directory"
    assert "pass_env" not in header.suite_options  # no name given on the command line
    assert header.suite_inputs["origins"] == {
        "allow_shell": "command line",
        "isolation": "default",
        "pass_env": "default",
        "agent_home": "default",
        "sandbox_ro": "default",
        "sandbox_network": "default",
    }
    assert sum(f"warning: {var} " in p.stderr for var in GRANTS) == 3


def test_suite_options_from_the_environment_grant_nothing(tmp_path: Path) -> None:
    # -O read from MNEMOMETER_RUN_SUITE_OPTS (which a .env may set) is not the command line.
    suite, _, loot = _hostile_suite(tmp_path)
    (suite / ".env").write_text("MNEMOMETER_RUN_SUITE_OPTS=allow_shell=true\n")
    p = _cli_from(suite, "run", ".", "--condition", "no-memory", "-o", tmp_path / "run")
    assert not loot.exists()
    assert p.returncode == 2 and "pass --allow-shell" in p.stderr, p.stderr
    assert "warning: MNEMOMETER_RUN_SUITE_OPTS (set in" in p.stderr, p.stderr


def test_the_header_records_where_each_grant_came_from(tmp_path: Path) -> None:
    from mnemometer.workflows import run_suite

    suite, _, _ = _hostile_suite(tmp_path)
    (suite / ".env").unlink()
    (suite / "items.jsonl").write_text(
        json.dumps({"eval_type": "command_task", "id": "ok", "command": "{python} -c 0"}) + "\n"
    )
    flags = ["--allow-shell", "--sandbox", "none", "--pass-env", "LANG"]
    out = tmp_path / "cli"
    r = invoke_cli("run", suite, *flags, "--condition", "no-memory", "-o", out)
    assert r.exit_code == 0, r.output
    origins = read_header(out / "no-memory-r0").suite_inputs["origins"]
    assert {k: origins[k] for k in ("allow_shell", "isolation", "pass_env")} == dict.fromkeys(
        ("allow_shell", "isolation", "pass_env"), "command line"
    )
    api = run_suite(
        suite,
        conditions=["no-memory"],
        out=tmp_path / "api",
        suite_options={"allow_shell": True, "isolation": "none"},
    )
    origins = api.runs[0].header.suite_inputs["origins"]
    assert origins["allow_shell"] == origins["isolation"] == "API argument"
    assert origins["pass_env"] == "default"


def test_the_header_names_what_the_suite_toml_asked_for_too(tmp_path: Path) -> None:
    # suite.toml may list pass_env and a [sandbox] table (the suite's documented needs):
    # requests, which the command line grants; the header says who asked and who granted.
    suite, _, _ = _hostile_suite(tmp_path)
    (suite / ".env").unlink()
    (suite / "suite.toml").write_text(
        'name = "innocent"\npass_env = ["LANG"]\n[sandbox]\nnetwork = true\nagent_home = "codex"\n'
    )
    (suite / "items.jsonl").write_text(
        json.dumps({"eval_type": "command_task", "id": "ok", "command": "{python} -c 0"}) + "\n"
    )
    # LANG is in every command's minimal environment and --sandbox none keeps the
    # network: what is left to grant is codex's credentials.
    flags = ["--allow-shell", "--sandbox", "none", "--pass-env", "LC_ALL"]
    r = invoke_cli("run", suite, *flags, "--condition", "no-memory", "-o", tmp_path / "no")
    assert r.exit_code == 2, r.output
    assert r.output.strip().endswith(
        f"{suite / 'suite.toml'} asks for its commands to receive codex's bootstrap files in "
        "their HOME (auth.json, installation_id, version.json): run with --agent-home codex "
        "to grant it"
    ), r.output
    assert not (tmp_path / "no").exists()
    out = tmp_path / "cli"
    r = invoke_cli(
        "run", suite, *flags, "--agent-home", "codex", "--condition", "no-memory", "-o", out
    )
    assert r.exit_code == 0, r.output
    origins = read_header(out / "no-memory-r0").suite_inputs["origins"]
    assert origins["pass_env"] == origins["agent_home"] == "command line, requested by suite.toml"
    assert origins["sandbox_network"] == "command line (--sandbox none), requested by suite.toml"
    assert origins["allow_shell"] == origins["isolation"] == "command line"
    out = tmp_path / "replaced"
    r = invoke_cli(
        "run", suite, *flags, "--agent-home", "none", "--condition", "no-memory", "-o", out
    )
    assert r.exit_code == 0, r.output  # the flag replaces the suite's agent_home
    assert read_header(out / "no-memory-r0").suite_inputs["origins"]["agent_home"] == "command line"


# A suite's own suite.toml asks; it never grants (issue 30 §1). Before: with --allow-shell
# alone, `pass_env = ["*"]` handed the command every variable of the caller and
# `network = true` the network.

GREEDY = 'name = "greedy"\npass_env = ["*"]\n[sandbox]\nnetwork = true\n'


def _greedy_suite(tmp: Path, port: int) -> tuple[Path, Path]:
    """A suite whose ``suite.toml`` asks for every variable and the network.

    Its command writes what it got (``OPENAI_API_KEY``, ``CANARY_VAR``, whether it reached
    the host's 127.0.0.1:``port``) to ``got.txt`` in its workspace and to a file outside it
    (which bubblewrap prevents). Returns ``(suite, loot)``.
    """
    suite, _, loot = _hostile_suite(tmp)
    (suite / ".env").unlink()
    (suite / "suite.toml").write_text(GREEDY)
    steal = (
        "import os, socket; s = socket.socket(); s.settimeout(5); "
        f"net = 'net' if s.connect_ex(('127.0.0.1', {port})) == 0 else 'no-net'; "
        "got = ' '.join([str(os.environ.get('OPENAI_API_KEY')), "
        "str(os.environ.get('CANARY_VAR')), net]); open('got.txt', 'w').write(got); "
        f"os.access(os.path.dirname({str(loot)!r}), os.W_OK) and "
        f"open({str(loot)!r}, 'w').write(got)"
    )
    item = {
        "eval_type": "command_task",
        "id": "setup",
        "command": "{python} -c " + json.dumps(steal),
    }
    (suite / "items.jsonl").write_text(json.dumps(item) + "\n")
    return suite, loot


@pytest.fixture
def listener():
    """A TCP server on the host's 127.0.0.1 (reachable only with the network)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield s.getsockname()[1]
    s.close()


def test_a_suite_toml_cannot_widen_the_sandbox_for_itself(tmp_path: Path, listener: int) -> None:
    from mnemometer.errors import ConsentError
    from mnemometer.workflows import run_suite

    suite, loot = _greedy_suite(tmp_path, listener)
    out = tmp_path / "run"
    p = _cli_from(suite, "run", ".", "--allow-shell", "--condition", "no-memory", "-o", out)
    assert not loot.exists(), f"the suite's command ran and got: {loot.read_text()}"
    assert p.returncode == 2, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {suite / 'suite.toml'} asks for its commands to receive * and the network: "
        "run with --pass-env '*' --sandbox-network to grant it"
    ], p.stderr
    assert "Traceback" not in p.stderr and not out.exists()
    # A narrower grant is not the one asked for; the API refuses as the command line does.
    narrow = ["--allow-shell", "--pass-env", "OPENAI_*", "--condition", "no-memory"]
    p = _cli_from(suite, "run", ".", *narrow, "-o", out)
    assert p.returncode == 2 and "run with --pass-env '*' --sandbox-network" in p.stderr
    with pytest.raises(ConsentError, match="asks for its commands to receive"):
        run_suite(suite, conditions=["no-memory"], out=out, suite_options={"allow_shell": True})
    assert not loot.exists() and not out.exists()
    # A dry run executes nothing: nothing to grant.
    r = invoke_cli("run", suite, "--dry-run", "--condition", "no-memory", "-o", tmp_path / "dry")
    assert r.exit_code == 0, r.output


def test_the_user_grants_what_the_suite_toml_asks(tmp_path: Path, listener: int) -> None:
    suite, loot = _greedy_suite(tmp_path, listener)
    out = tmp_path / "run"
    grant = ["--allow-shell", "--pass-env", "*", "--sandbox-network"]
    p = _cli_from(suite, "run", ".", *grant, "--condition", "no-memory", "-o", out)
    assert p.returncode in (0, 1), p.stderr
    (res,) = read_log(out / "no-memory-r0").items
    got = (Path(res.extra["build_dir"]) / "workspace" / "got.txt").read_text()
    assert got == f"{FAKE_KEY} {CANARY} net"  # what the user granted, and only then
    origins = read_header(out / "no-memory-r0").suite_inputs["origins"]
    assert (
        origins["pass_env"]
        == origins["sandbox_network"]
        == ("command line, requested by suite.toml")
    )


@pytest.mark.parametrize(
    ("asked", "given", "ok"),
    [
        ("OPENAI_API_KEY", "OPENAI_API_KEY", True),
        ("OPENAI_API_KEY", "OPENAI_*", True),
        ("OPENAI_*", "OPENAI_*", True),
        ("OPENAI_*", "*", True),
        ("OPENAI_*", "OPENAI_API_KEY", False),
        ("OPENAI_*", "OPENAI_?*", False),
        ("*", "A*", False),
        ("LC_ALL", "", True),  # the minimal environment every command has
    ],
)
def test_which_pass_env_grants_cover_a_request(asked: str, given: str, ok: bool) -> None:
    from types import SimpleNamespace

    from mnemometer.errors import ConsentError
    from mnemometer.suites.items._flags import check_requests

    sandbox = SimpleNamespace(network=False, agent_home="none")
    manifest = SimpleNamespace(pass_env=[asked], sandbox=sandbox)
    grants = [given] if given else []
    if ok:
        check_requests(manifest, "suite.toml", grants, "auto", None, False)
    else:
        with pytest.raises(ConsentError, match="to receive"):
            check_requests(manifest, "suite.toml", grants, "auto", None, False)


def test_a_sweep_file_cannot_grant_the_shell(tmp_path: Path) -> None:
    suite, _, loot = _hostile_suite(tmp_path)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        'suite = "items"\n'
        f"suite_options = {{ suite_dir = {json.dumps(str(suite))}, allow_shell = true }}\n"
        'conditions = ["no-memory"]\n[[datasets]]\npath = "demo-en"\n'
    )
    r = invoke_cli("sweep", sweep, "-o", tmp_path / "out")
    assert r.exit_code == 2, r.output
    assert "suite_options.allow_shell: --allow-shell is taken from the command line" in r.output
    assert not loot.exists()


def test_the_run_help_says_which_flags_only_the_command_line_gives() -> None:
    r = invoke_cli("run", "--help")
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    for flag in ("--allow-shell", "--sandbox", "--pass-env"):
        start = text.index(flag + " ")
        assert "Command line only" in text[start : start + 400], flag


# A resume is not a new grant: the run header (and experiment.json) is a file anyone may
# have written, so it records consent and the sandbox but never gives them.

RESUME_LINE = (
    "this run executes the suite's commands: resume it with --allow-shell (and the sandbox "
    "flags you want)"
)


def _archived_run(tmp: Path, *flags: str, manifest: str = "") -> tuple[Path, Path]:
    """A run made by someone else with ``flags``, cut after its first item, as shared.

    Its suite's second item steals (see :func:`_hostile_suite`). Returns ``(the
    experiment directory, the loot file)``; the loot of the first run is gone.
    """
    suite, _, loot = _hostile_suite(tmp)
    (suite / ".env").unlink()
    if manifest:
        (suite / "suite.toml").write_text(manifest)
    first = {"eval_type": "command_task", "id": "first", "command": "{python} -c 0"}
    with (suite / "items.jsonl").open("r+") as f:
        steal = f.read()
        f.seek(0)
        f.write(json.dumps(first) + "\n" + steal)
    exp = tmp / "archive"
    r = invoke_cli("run", suite, *flags, "--condition", "no-memory", "-o", exp, "--format", "none")
    assert r.exit_code in (0, 1), r.output
    loot.unlink(missing_ok=True)
    run_dir = exp / "no-memory-r0"
    kept = [x for x in (run_dir / "items.jsonl").read_text().splitlines(keepends=True)]
    (run_dir / "items.jsonl").write_text("".join(x for x in kept if '"first"' in x))
    header = json.loads((run_dir / "header.json").read_text())
    (run_dir / "header.json").write_text(json.dumps({**header, "status": "running"}))
    (run_dir / "summary.json").unlink()
    return exp, loot


WIDE = ("--allow-shell", "--sandbox", "none", "--pass-env", "*")


@pytest.mark.parametrize("what", ["run", "experiment", "experiment.json"])
def test_a_resume_takes_no_consent_from_the_run_it_resumes(tmp_path: Path, what: str) -> None:
    # Before: the resume ran the stealing command unsandboxed with every variable (the
    # header said allow_shell, isolation none, pass_env *), exit 0, with no flag given.
    exp, loot = _archived_run(tmp_path, *WIDE)
    run_dir = exp / "no-memory-r0"
    assert read_header(run_dir).suite_options["allow_shell"] is True
    before = (run_dir / "items.jsonl").read_bytes()
    if what == "experiment.json":  # only the plan is left: it would start the run anew
        shutil.rmtree(run_dir)
    p = _cli_from(tmp_path, "run", "--resume", run_dir if what == "run" else exp)
    assert not loot.exists(), f"the resume ran the suite's command: {loot.read_text()}"
    assert p.returncode == 2, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].endswith(RESUME_LINE), p.stderr
    assert "Traceback" not in p.stderr
    if what != "experiment.json":  # nothing written: the run is as it was
        assert (run_dir / "items.jsonl").read_bytes() == before
        assert read_header(run_dir).status == "running"
    else:
        assert not run_dir.exists()


def test_a_resume_with_allow_shell_finishes_in_the_sandbox_it_gives(tmp_path: Path) -> None:
    # The user reads the suite and consents; the sandbox and the environment are theirs
    # again too: the run's recorded `--sandbox none --pass-env *` does not come back.
    exp, loot = _archived_run(tmp_path, *WIDE)
    p = _cli_from(tmp_path, "run", "--resume", exp, "--allow-shell", "--format", "none")
    assert p.returncode in (0, 1), p.stderr
    assert FAKE_KEY not in (loot.read_text() if loot.exists() else ""), "the key reached it"
    header = read_header(exp / "no-memory-r0")
    assert header.status == "finished" and header.resumes == 1
    isolation = "bwrap" if bwrap_problem() is None else "none"
    (note,) = [n for n in header.notes if n.startswith("resume 1 ")]
    assert "allow_shell=true (command line)" in note, note
    assert f"isolation={isolation} (default)" in note and "pass_env (default)" in note, note
    assert header.suite_inputs["origins"]["allow_shell"] == "command line"  # the start's


def test_a_user_resumes_their_own_run_with_the_flags_they_started_it_with(
    tmp_path: Path,
) -> None:
    # The documented flow: the same flags again. Flags that shape the run are refused.
    exp, _ = _archived_run(tmp_path, "--allow-shell", "--sandbox", "none", "--pass-env", "LANG")
    r = invoke_cli("run", "--resume", exp, "--dry-run")
    assert r.exit_code == 2 and "--dry-run does not apply with --resume" in r.output, r.output
    r = invoke_cli(
        "run", "--resume", exp, "--allow-shell", "--sandbox", "none", "--pass-env", "LANG"
    )
    assert r.exit_code == 0, r.output
    header = read_header(exp / "no-memory-r0")
    (note,) = [n for n in header.notes if n.startswith("resume 1 ")]
    for part in ("allow_shell=true", "isolation=none", "pass_env=LANG"):
        assert f"{part} (command line)" in note, note


def test_the_python_resume_takes_consent_as_run_does(tmp_path: Path) -> None:
    from mnemometer.errors import ConsentError, MnemometerError
    from mnemometer.runner import resume

    exp, _ = _archived_run(tmp_path, *WIDE)
    run_dir = exp / "no-memory-r0"
    with pytest.raises(ConsentError, match="resume it with --allow-shell"):
        resume(run_dir)
    with pytest.raises(MnemometerError, match="'min_support' does not apply to a resume"):
        resume(run_dir, suite_options={"allow_shell": True, "min_support": 0.1})
    done = resume(run_dir, suite_options={"allow_shell": True, "isolation": "none"})
    assert done.header.status == "finished"
    (note,) = [n for n in done.header.notes if n.startswith("resume 1 ")]
    assert "allow_shell=true (API argument)" in note and "isolation=none (API argument)" in note


@pytest.mark.parametrize("what", ["run", "experiment"])
def test_a_resume_grants_what_the_suite_toml_asks_only_from_its_command_line(
    tmp_path: Path, what: str
) -> None:
    # The run started with the key granted; a resume with --allow-shell alone does not
    # grant it again (the header is no grant), nor does the suite.toml that asks.
    asks = 'name = "innocent"\npass_env = ["OPENAI_API_KEY"]\n'
    granted = ("--allow-shell", "--sandbox", "none", "--pass-env", "OPENAI_API_KEY")
    exp, loot = _archived_run(tmp_path, *granted, manifest=asks)
    run_dir = exp / "no-memory-r0"
    before = (run_dir / "items.jsonl").read_bytes()
    target = run_dir if what == "run" else exp
    p = _cli_from(tmp_path, "run", "--resume", target, "--allow-shell", "--sandbox", "none")
    assert not loot.exists(), f"the resume ran the suite's command: {loot.read_text()}"
    assert p.returncode == 2, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].endswith(
        "suite.toml asks for its commands to receive OPENAI_API_KEY: run with --pass-env "
        "OPENAI_API_KEY to grant it"
    ), p.stderr
    assert (run_dir / "items.jsonl").read_bytes() == before
    assert read_header(run_dir).status == "running"
    p = _cli_from(tmp_path, "run", "--resume", target, *granted, "--format", "none")
    assert p.returncode in (0, 1), p.stderr
    assert loot.read_text().startswith(FAKE_KEY)  # granted again, by the resuming user
    (note,) = [n for n in read_header(run_dir).notes if n.startswith("resume 1 ")]
    assert "pass_env=OPENAI_API_KEY (command line, requested by suite.toml)" in note, note


def test_a_resume_keeps_the_bwrap_sandbox_the_run_recorded(tmp_path: Path) -> None:
    if (problem := bwrap_problem()) is not None:
        pytest.skip(f"bubblewrap does not work here: {problem}")
    exp, _ = _archived_run(tmp_path, "--allow-shell", "--sandbox", "bwrap")
    r = invoke_cli("run", "--resume", exp, "--allow-shell", "--format", "none")
    assert r.exit_code in (0, 1), r.output
    (note,) = [n for n in read_header(exp / "no-memory-r0").notes if n.startswith("resume 1 ")]
    assert "isolation=bwrap (run header)" in note, note
