"""Agent build tasks: executor, fixtures, trust boundary, memory evidence, tokens, examples."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from build_helpers import gone
from conftest import invoke_cli as cli

from mnemometer.comparison import compare
from mnemometer.errors import MnemometerError
from mnemometer.log import read_log
from mnemometer.sandbox import (
    CommandError,
    FixtureError,
    bad_relative,
    check_fixture,
    render,
    run_command,
    task_env,
)
from mnemometer.sandbox._evidence import parse_token_usage
from mnemometer.suites.items import load_suite
from mnemometer.suites.tasks._checks import build_checks
from mnemometer.workflows import run_suite

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "examples" / "suites" / "build-site"
AGENT = REPO / "examples" / "build-agents" / "fake_agent.py"
ML = REPO.parent / "shared" / "seed-data" / "memory-layer" / "evals" / "examples"


def ml(name: str) -> Path:
    path = ML / name
    if not path.exists():
        pytest.skip(f"seed data not found at {path} (expected ../shared beside the repo)")
    return path


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (to prove nothing changed)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def make_suite(tmp: Path, items: list[dict], name: str = "t") -> Path:
    """A suite directory in ``tmp`` with the example fixture and memories."""
    d = tmp / f"suite-{name}"
    shutil.copytree(SITE / "fixtures", d / "fixtures")
    shutil.copy(SITE / "memories.jsonl", d / "memories.jsonl")
    (d / "suite.toml").write_text(f'name = "{name}"\nmemories = "memories.jsonl"\n')
    (d / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    return d


def task(id_: str, prompt: str, **kw) -> dict:
    base = {
        "eval_type": "agent_build_task",
        "id": id_,
        "prompt": prompt,
        "fixture": "fixtures/site",
        "timeout_seconds": 20,
        "agent_command": f"{{python}} {AGENT} {{workspace}} {{prompt_file}}",
        "required_files": ["index.html"],
    }
    return {**base, **kw}


def results(run_dir: Path) -> dict[str, object]:
    return {r.item_id: r for r in read_log(run_dir).items}


def metric(r, name: str):
    return next(m.value for m in r.metrics if m.name == name)


# ---- executor ------------------------------------------------------------------------


def test_templates_substitute_inside_words_never_through_a_shell():
    argv = render(
        "{python} agent.py --prompt={prompt_file} '{workspace}/x y'",
        {"python": "py", "prompt_file": "a b; rm -rf /", "workspace": "/w"},
    )
    assert argv == ["py", "agent.py", "--prompt=a b; rm -rf /", "/w/x y"]
    with pytest.raises(CommandError, match=r"unknown placeholder \{worksapce\}"):
        render("run {worksapce}", {})
    with pytest.raises(CommandError, match="No closing quotation"):
        render("sh -c 'oops", {})
    with pytest.raises(CommandError, match="empty"):
        render("   ", {})


def test_a_hanging_command_and_its_children_are_killed_at_the_timeout(tmp_path):
    code = (
        "import subprocess, time; p = subprocess.Popen(['sleep', '60']); "
        "open('child.pid', 'w').write(str(p.pid)); print('started', flush=True); "
        "time.sleep(60)"
    )
    t0 = time.monotonic()
    res = run_command(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=task_env(),
        timeout=1.5,
        out_prefix=tmp_path / "out" / "hang",
        grace=0.2,
    )
    assert time.monotonic() - t0 < 10
    assert res.timed_out and res.exit_code is None and not res.ok
    status = json.loads((tmp_path / "out" / "hang.status.json").read_text())
    assert status["timed_out"] is True and status["exit_code"] is None
    assert (tmp_path / "out" / "hang.stdout.txt").read_text() == "started\n"
    child = int((tmp_path / "child.pid").read_text())
    assert gone(child), "the grandchild survived the kill"


def test_output_is_capped_and_counted_and_env_is_scrubbed(tmp_path):
    code = "import os, sys; sys.stdout.write('x' * 5000); print(os.environ.get('MEMORY_LAYER_API_TOKEN'), file=sys.stderr)"
    env = task_env(
        {
            "PATH": os.environ["PATH"],
            "MEMORY_LAYER_API_TOKEN": "secret",
            "MEMORY_BASE_URL": "http://x",
        },
        MEMORY_EVAL_CONDITION="no-memory",
    )
    assert "MEMORY_BASE_URL" not in env and env["MEMORY_EVAL_CONDITION"] == "no-memory"
    res = run_command(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        timeout=20,
        out_prefix=tmp_path / "cap",
        cap=1000,
    )
    assert res.ok and res.stdout_bytes == 5000
    assert len(Path(res.stdout_path).read_bytes()) == 1000
    assert Path(res.stderr_path).read_text() == "None\n"


def test_a_missing_program_is_a_recorded_failure(tmp_path):
    res = run_command(
        ["no-such-program-xyz"],
        cwd=tmp_path,
        env=task_env(),
        timeout=5,
        out_prefix=tmp_path / "p",
    )
    assert res.exit_code is None and not res.ok and "no-such-program-xyz" in (res.error or "")


# ---- fixtures and paths ----------------------------------------------------------------


def test_fixture_symlinks_and_escaping_paths_are_rejected(tmp_path):
    (tmp_path / "fx").mkdir()
    (tmp_path / "fx" / "ok.txt").write_text("x")
    assert check_fixture(tmp_path, "fx") == tmp_path / "fx"
    os.symlink("/etc/passwd", tmp_path / "fx" / "passwd")
    with pytest.raises(FixtureError, match="passwd is a symlink"):
        check_fixture(tmp_path, "fx")
    with pytest.raises(FixtureError, match="does not exist"):
        check_fixture(tmp_path, "missing")
    with pytest.raises(FixtureError, match="outside the evals root"):
        check_fixture(tmp_path, "../outside")
    assert "absolute" in bad_relative("/etc/passwd")
    assert bad_relative("src/app.py") is None


def test_bad_items_are_recorded_failures_and_the_run_goes_on(tmp_path):
    d = make_suite(
        tmp_path,
        [
            task("escape", "x", required_files=["../../etc/passwd"]),
            task("nofix", "x", fixture="fixtures/missing"),
            task("good", "STEP_MARKER: ok"),
        ],
    )
    os.symlink(d / "fixtures" / "site" / "index.html", d / "fixtures" / "linked")
    run = run_suite(
        d, conditions=["no-memory"], out=tmp_path / "out", suite_options={"allow_shell": True}
    )
    rs = results(run.runs[0].path)
    assert rs["escape"].status == "error" and "contains '..'" in rs["escape"].error
    assert rs["nofix"].status == "error" and "does not exist" in rs["nofix"].error
    assert metric(rs["good"], "success") == 1.0


# ---- trust boundary -------------------------------------------------------------------


def test_run_refuses_shell_items_without_allow_shell(tmp_path):
    r = cli("run", SITE, "--condition", "no-memory", "-o", tmp_path / "x")
    assert r.exit_code == 2
    assert "agent_build_task" in r.output and "--allow-shell" in r.output
    assert not (tmp_path / "x").exists()


def test_dry_run_validates_and_executes_nothing(tmp_path):
    canary = tmp_path / "canary"
    d = make_suite(
        tmp_path,
        [
            task(
                "t",
                "x",
                agent_command=f"touch {canary}",
                setup_commands=[f"touch {canary}"],
                score_commands=[f"touch {canary}"],
                memory_questions=["q?"],
            ),
            {"eval_type": "command_task", "id": "c", "command": f"touch {canary}"},
            task("bad", "x", fixture="../x"),
        ],
    )
    r = cli(
        "run",
        d,
        "--dry-run",
        "--condition",
        "no-memory",
        "--condition",
        "lexical",
        "-o",
        tmp_path / "out",
    )
    # The invalid item ("bad": fixture "../x") is recorded as an error: exit code 1.
    assert r.exit_code == 1 and "items failed" in r.output, r.output
    assert not canary.exists()
    assert not (tmp_path / "out" / "build-runs").exists()
    rs = results(tmp_path / "out" / "lexical-r0")
    assert rs["t"].extra["dry_run"] is True and metric(rs["t"], "success") is None
    assert rs["t"].extra["totals"]["memory_questions"] == 1
    assert rs["bad"].status == "error" and "outside the evals root" in rs["bad"].error


def test_hanging_agent_is_killed_and_deleting_agent_fails_and_nothing_outside_is_touched(tmp_path):
    d = make_suite(
        tmp_path,
        [
            task("hang", "FAKE_AGENT: hang", timeout_seconds=1),
            task(
                "rm", "FAKE_AGENT: delete-workspace", score_commands=["{python} scripts/check.py"]
            ),
            task("after", "STEP_MARKER: after"),
        ],
    )
    (tmp_path / "bystander.txt").write_text("keep me")
    before = tree(tmp_path)
    t0 = time.monotonic()
    run = run_suite(
        d, conditions=["no-memory"], out=tmp_path / "out", suite_options={"allow_shell": True}
    )
    assert time.monotonic() - t0 < 30
    rs = results(run.runs[0].path)
    assert metric(rs["hang"], "success") == 0.0 and metric(rs["hang"], "agent_timed_out") == 1.0
    assert "killed at its timeout" in rs["hang"].output
    assert metric(rs["rm"], "success") == 0.0 and "deleted the workspace" in rs["rm"].output
    assert rs["rm"].extra["scores"]["score_commands_passed"] == 0
    assert metric(rs["after"], "success") == 1.0  # the run went on
    after = {k: v for k, v in tree(tmp_path).items() if not k.startswith("out/")}
    assert after == before


def test_command_task_runs_in_a_fresh_workspace_not_the_callers_directory(tmp_path):
    d = make_suite(
        tmp_path,
        [
            {"eval_type": "command_task", "id": "ok", "command": "touch made.txt"},
            {
                "eval_type": "command_task",
                "id": "three",
                "command": "{python} -c 'raise SystemExit(3)'",
                "expected_exit_code": 3,
            },
            {
                "eval_type": "command_task",
                "id": "slow",
                "command": "sleep 60",
                "timeout_seconds": 1,
            },
        ],
    )
    run = run_suite(
        d, conditions=["no-memory"], out=tmp_path / "out", suite_options={"allow_shell": True}
    )
    rs = results(run.runs[0].path)
    assert metric(rs["ok"], "success") == 1.0 and metric(rs["three"], "success") == 1.0
    assert metric(rs["slow"], "success") == 0.0 and rs["slow"].extra["timed_out"] is True
    assert not (tmp_path / "made.txt").exists() and not (d / "made.txt").exists()
    assert (Path(rs["ok"].extra["build_dir"]) / "workspace" / "made.txt").is_file()


# ---- memory evidence and tokens ---------------------------------------------------------


def test_memory_evidence_must_come_from_the_helper(tmp_path):
    q = ["What is the brand accent colour?"]
    d = make_suite(
        tmp_path,
        [
            task("asked", "MEMORY_TARGET: styles.css", memory_questions=q),
            task("forged", "FAKE_AGENT: forge-evidence", memory_questions=q),
            task("note", "FAKE_AGENT: evidence-note"),
        ],
    )
    run = run_suite(
        d,
        conditions=["no-memory", "lexical"],
        out=tmp_path / "out",
        suite_options={"allow_shell": True},
    )
    base, mem = (results(r.path) for r in run.runs)
    assert metric(mem["asked"], "memory_evidence_ok") == 1.0
    assert mem["asked"].extra["scores"]["memory_queries_verified"] == 1
    build = Path(mem["asked"].extra["build_dir"])
    artifact = json.loads((build / "memory-eval" / "q1.json").read_text())
    assert artifact["results"][0]["id"] == "brand-accent"
    assert "#0f766e" in (build / "workspace" / "styles.css").read_text()
    assert metric(mem["forged"], "memory_evidence_ok") == 0.0
    assert "differ from what the store returns" in json.dumps(
        json.loads((Path(mem["forged"].extra["build_dir"]) / "summary.json").read_text())
    )
    # no-memory: nothing installed, the question unanswerable, a hand-made note fails
    assert metric(base["asked"], "memory_evidence_ok") == 1.0
    plain = Path(base["asked"].extra["build_dir"])
    assert "query-memory" not in (plain / "prompt.md").read_text()
    assert "This run has no memory" in (plain / "prompt.md").read_text()
    assert not (plain / "workspace" / ".memory-eval").exists()
    assert "#0f766e" not in (plain / "workspace" / "styles.css").read_text()
    assert metric(base["note"], "memory_evidence_ok") == 0.0
    assert metric(base["note"], "success") == 0.0


def test_token_usage_parsing():
    stream = "\n".join(
        [
            "not json",
            json.dumps({"type": "turn", "usage": {"input_tokens": 10, "output_tokens": 5}}),
            json.dumps(
                {"type": "turn", "data": {"usage": {"promptTokens": 7, "completionTokens": 3}}}
            ),
        ]
    )
    assert parse_token_usage(stream) == {"input": 17, "output": 8, "total": 25}
    cumulative = "\n".join(
        json.dumps({"msg": {"total_token_usage": {"input_tokens": n, "output_tokens": 1}}})
        for n in (5, 50, 20)
    )
    assert parse_token_usage(cumulative) == {"input": 50, "output": 1, "total": 51}
    assert parse_token_usage('{"usage": {"total_tokens": 9}}') == {
        "input": 0,
        "output": 0,
        "total": 9,
    }
    assert parse_token_usage("plain text\n{broken") is None


def test_required_token_usage_cannot_silently_disappear(tmp_path):
    d = make_suite(
        tmp_path,
        [
            task("silent", "FAKE_AGENT: no-usage", require_token_usage=True),
            task(
                "codex",
                "FAKE_AGENT: no-usage",
                agent_command=f"{{python}} {AGENT} {{workspace}} {{prompt_file}} --model codex",
            ),
            task("reported", "x", require_token_usage=True),
        ],
    )
    run = run_suite(
        d, conditions=["no-memory"], out=tmp_path / "out", suite_options={"allow_shell": True}
    )
    rs = results(run.runs[0].path)
    assert metric(rs["silent"], "token_usage_ok") == 0.0 and metric(rs["silent"], "success") == 0.0
    assert metric(rs["codex"], "token_usage_ok") == 0.0
    assert metric(rs["reported"], "success") == 1.0 and rs["reported"].tokens["total"] > 0


def test_query_command(tmp_path):
    r = cli("query", "--suite", SITE, "--json", "brand", "accent", "colour")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["schema_version"] == 1 and out["results"][0]["id"] == "brand-accent"
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "suite.toml").write_text('name = "bare"\n')
    (tmp_path / "bare" / "items.jsonl").write_text("")
    r = cli("query", "--suite", tmp_path / "bare", "anything")
    assert r.exit_code == 2 and "has no memories" in r.output


# ---- examples end to end, and Memory Layer's suites -------------------------------------


def test_example_suite_runs_and_compares_by_step(tmp_path):
    r = cli("run", SITE, "--allow-shell", "-o", tmp_path / "out", "--format", "json")
    assert r.exit_code == 0, r.output
    runs = {x["condition"]: x for x in json.loads(r.output[r.output.index("{") :])["runs"]}
    assert runs["no-memory"]["items"] == runs["lexical"]["items"] == 4  # 1 task + 3 steps
    assert runs["lexical"]["succeeded"] == 4 and runs["no-memory"]["succeeded"] == 0
    cmp = compare([tmp_path / "out" / "no-memory-r0"], [tmp_path / "out" / "lexical-r0"])
    assert cmp.pairs == 4 and cmp.clusters == 2
    assert cmp.headline.delta == pytest.approx(1.0)
    items = [
        r for r in read_log(tmp_path / "out" / "lexical-r0").items if r.item_id == "launch-page"
    ]
    assert [r.step for r in items] == ["hero", "features", "pricing"]
    assert items[-1].extra["sequence"]["success"] is True
    build = tmp_path / "out" / "build-runs" / "build-site-launch-page-lexical-r0"
    assert sorted(p.name for p in (build / "steps").iterdir()) == [
        "01-hero",
        "02-features",
        "03-pricing",
    ]
    html = (build / "workspace" / "index.html").read_text()
    assert all(f'id="{s}"' in html for s in ("hero", "features", "pricing"))
    assert json.loads((build / "summary.json").read_text())["steps_succeeded"] == 3
    r = cli("compare", tmp_path / "out", "--baseline", "no-memory", "--candidate", "lexical")
    assert r.exit_code == 0 and "4 items (4 paired observations)" in r.output, r.output


def test_memory_layer_app_build_suites_load_validate_and_say_scripts_are_missing(tmp_path):
    for name in ("app-build-smoke", "app-build-sequence-smoke"):
        loaded = load_suite(ml(name))
        checks = {c.name: c for c in build_checks(loaded.root, loaded.items)}
        assert not [c for c in checks.values() if c.status == "fail"]
        item = loaded.items[0].id
        assert "suite.memory_questions" not in checks
        assert checks[f"item.{item}"].status == "ok"
        missing = checks[f"item.{item}.scripts"]
        assert missing.status == "warn" and "not included" in missing.message
        assert "scripts/check.sh" in missing.message
        r = cli("doctor", ml(name))
        assert r.exit_code == 0, r.output
        assert "warn item." in r.output and "scripts/check.sh" in r.output
        assert "ship without their scripts" in r.output
        r = cli("run", ml(name), "--dry-run", "--condition", "no-memory", "-o", tmp_path / name)
        assert r.exit_code == 0, r.output
        assert not (tmp_path / name / "build-runs").exists()


def test_shell_gate_names_types_and_flags():
    from mnemometer.suites.items._suite import shell_gate

    items = load_suite(SITE).items
    with pytest.raises(MnemometerError, match="--allow-shell.*--dry-run.*--skip-unsupported"):
        shell_gate(items, False, False, False, "x")
    assert shell_gate(items, False, False, True, "x") == ([], ["launch-hero", "launch-page"])
    assert shell_gate(items, True, False, False, "x") == (items, [])


def test_doctor_checks_fail_bad_build_items_and_warn_on_unanswerable_questions(tmp_path):
    d = make_suite(
        tmp_path,
        [
            task("esc", "x", forbidden_files=["/etc/passwd"]),
            task("tpl", "x", agent_command="agent {nope}"),
            task("asks", "x", memory_questions=["What colour?"]),
        ],
    )
    loaded = load_suite(d)
    checks = {c.name: c for c in build_checks(loaded.root, loaded.items, has_memories=False)}
    assert checks["item.esc"].status == "fail" and "absolute" in checks["item.esc"].message
    assert checks["item.tpl"].status == "fail" and "{nope}" in checks["item.tpl"].message
    assert checks["item.asks"].status == "ok"
    assert checks["suite.memory_questions"].status == "warn"


def test_setup_commands_and_a_sequence_whose_workspace_is_deleted(tmp_path):
    seq = {
        "eval_type": "agent_build_sequence",
        "id": "seq",
        "fixture": "fixtures/site",
        "agent_command": f"{{python}} {AGENT} {{workspace}} {{prompt_file}}",
        "timeout_seconds": 20,
        "setup_commands": ["touch seeded.txt"],
        "steps": [
            {"id": "wipe", "prompt": "FAKE_AGENT: delete-workspace"},
            {"id": "next", "prompt": "STEP_MARKER: next", "required_files": ["index.html"]},
        ],
    }
    d = make_suite(
        tmp_path,
        [
            task(
                "setup-ok", "x", setup_commands=["touch seeded.txt"], required_files=["seeded.txt"]
            ),
            task("setup-bad", "x", setup_commands=["false"]),
            seq,
            {
                **seq,
                "id": "slow",
                "setup_commands": [],
                "steps": [
                    {"id": "hang", "prompt": "FAKE_AGENT: hang", "timeout_seconds": 1},
                    {
                        "id": "then",
                        "prompt": "STEP_MARKER: then",
                        "required_content": [{"file": "index.html", "contains": "then"}],
                    },
                ],
            },
        ],
    )
    run = run_suite(
        d, conditions=["no-memory"], out=tmp_path / "out", suite_options={"allow_shell": True}
    )
    items = read_log(run.runs[0].path).items
    rs = {(r.item_id, r.step or ""): r for r in items}
    assert metric(rs[("setup-ok", "")], "success") == 1.0
    bad = rs[("setup-bad", "")]
    assert metric(bad, "success") == 0.0 and bad.extra["scores"]["setup_commands_passed"] == 0
    assert metric(rs[("seq", "wipe")], "success") == 0.0
    nxt = rs[("seq", "next")]
    assert metric(nxt, "success") == 0.0 and "the workspace is gone" in nxt.output
    assert nxt.extra["sequence"]["steps_succeeded"] == 0
    hang, then = rs[("slow", "hang")], rs[("slow", "then")]
    assert metric(hang, "agent_timed_out") == 1.0 and metric(hang, "success") == 0.0
    assert hang.latency_ms < 10_000  # the step's 1 s, not the item's 20 s
    assert metric(then, "success") == 1.0 and then.extra["sequence"]["steps_succeeded"] == 1


def test_an_agent_that_cannot_start_is_named_by_the_item_the_summary_and_the_run(tmp_path):
    """0/4 with exit 0 and the reason only in agent.stderr.txt: the audit's build-site run."""
    suite = tmp_path / "site"
    shutil.copytree(SITE, suite)
    items = suite / "items.jsonl"
    items.write_text(
        items.read_text().replace(
            "{suite_dir}/../../build-agents/fake_agent.py", "{suite_dir}/gone.py"
        )
    )
    r = cli("run", suite, "--allow-shell", "-o", tmp_path / "out", "--condition", "lexical")
    assert "the agent failed in 4 of 4 item(s)" in r.output and "gone.py" in r.output, r.output
    log = read_log(tmp_path / "out" / "lexical-r0")
    assert all(i.output.startswith("the agent exited 2: ") for i in log.items)
    assert any("the agent failed in 4 of 4" in n for n in log.summary.notes)
