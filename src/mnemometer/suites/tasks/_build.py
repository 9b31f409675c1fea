"""Runners for ``command_task``, ``agent_build_task`` and ``agent_build_sequence``.

Layout of one agent build (``BUILD = RUN_ROOT/build-runs/<suite>-<item>-<condition>-rN``)::

    BUILD/workspace/            fresh copy of the fixture (a sequence keeps it across steps)
    BUILD/prompt.md             the item prompt plus the condition's memory block
    BUILD/setup-<i>.*           stdout.txt, stderr.txt, status.json of each setup command
    BUILD/agent.*               the agent command's output and status
    BUILD/score-<i>.*           each score command
    BUILD/summary.json          every score, the evidence and the token usage
    BUILD/steps/<NN>-<step>/    a sequence's step: prompt.md, agent.*, score-*, memory-eval/

Nothing is written outside ``BUILD``; the commands run in the workspace with a scrubbed
environment (see :mod:`mnemometer.sandbox`).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemometer.log._schema import ItemResult
from mnemometer.sandbox import (
    CommandError,
    CommandResult,
    FixtureError,
    check_fixture,
    copy_fixture,
    fresh_dir,
    render,
    run_command,
    task_env,
)
from mnemometer.sandbox import _evidence as ev
from mnemometer.scoring.tasks import (
    Scores,
    aggregate,
    check_workspace,
    metric,
    status,
    totals,
)
from mnemometer.suites.items._manifest import slugify
from mnemometer.suites.items._types import ItemType
from mnemometer.suites.tasks._checks import requires_shell, validate_item
from mnemometer.suites.tasks._models import (
    AgentBuildSequence,
    AgentBuildTask,
    BuildStep,
    CommandTask,
)

HELPER_TOP_K = 8


@dataclass
class _Env:
    """Everything one item's commands share: where, who, which condition."""

    ctx: Any
    item: Any
    build: Path
    memory: bool

    @property
    def suite(self) -> Any:
        return self.ctx.suite

    def values(
        self,
        workspace: Path,
        run_dir: Path,
        prompt: Path | None,
        step: str = "",
        helper: Path | None = None,
    ) -> dict[str, str]:
        return {
            "workspace": str(workspace),
            "run_dir": str(run_dir),
            "prompt_file": str(prompt) if prompt else "",
            "suite_dir": self.suite.suite_dir,
            "condition": self.suite.condition,
            "item": self.item.id,
            "step": step,
            "project": self.item.project or self.suite.loaded.manifest.project or "",
            "python": sys.executable,
            "memory_helper": str(helper) if helper else "",
        }

    def write_summary(self, detail: dict[str, Any]) -> None:
        """``summary.json`` in the build directory: the item, condition and sandbox, then ``detail``."""
        head = {
            "item": self.item.id,
            "eval_type": self.item.eval_type,
            "condition": self.suite.condition,
            "memory_enabled": self.memory,
            "sandbox": self.suite.sandbox.describe(),
        }
        (self.build / "summary.json").write_text(json.dumps(head | detail, indent=1) + "\n")

    def environ(
        self, workspace: Path, run_dir: Path, timeout: float, helper: Path | None
    ) -> dict[str, str]:
        extra = {
            "MEMORY_EVAL_WORKSPACE": str(workspace),
            "MEMORY_EVAL_RUN_DIR": str(run_dir),
            "MEMORY_EVAL_TIMEOUT_SECONDS": f"{timeout:g}",
            "MEMORY_EVAL_CONDITION": self.suite.condition,
            "MEMORY_EVAL_MEMORY_ENABLED": "1" if self.memory else "0",
            "TMPDIR": str(self.build / "tmp"),
        }
        if self.memory and helper is not None:
            extra["MEMORY_EVAL_MEMORY_COMMAND"] = str(helper)
        return task_env(allow=self.suite.pass_env, **extra)

    def run(
        self,
        template: str,
        prefix: Path,
        workspace: Path,
        run_dir: Path,
        timeout: float,
        prompt: Path | None = None,
        step: str = "",
        helper: Path | None = None,
    ) -> CommandResult:
        argv = render(template, self.values(workspace, run_dir, prompt, step, helper))
        with self.suite.sandbox.command(argv, workspace, [self.build]) as isolated:
            return run_command(
                isolated,
                cwd=workspace,
                env=self.environ(workspace, run_dir, timeout, helper),
                timeout=timeout,
                out_prefix=prefix,
            )


def memory_enabled(suite: Any) -> bool:
    """Whether the run's condition gives the agent a memory to ask."""
    store = getattr(suite, "memory_store", None)
    return suite.condition != "no-memory" and store not in (None, "none")


def build_dir(suite: Any, item_id: str) -> Path:
    """``RUN_ROOT/build-runs/<suite>-<item>-<condition>-rN`` for this run."""
    root = Path(suite.build_root or "runs")
    name = f"{suite.loaded.slug}-{slugify(item_id)}-{slugify(suite.condition or 'run')}-r{suite.repeat}"
    return root / "build-runs" / name


def _invalid(item: Any, problems: list[str], **extra: Any) -> ItemResult:
    return ItemResult(
        item_id=item.id,
        index=0,
        status="error",
        error="; ".join(problems),
        metrics=[metric("success", 0.0)],
        extra={"problems": problems, **extra},
    )


def _dry(item: Any, totals: dict[str, int]) -> ItemResult:
    return ItemResult(
        item_id=item.id,
        index=0,
        input=getattr(item, "prompt", "") or "",
        metrics=[metric("success", None)],
        extra={"dry_run": True, "note": "dry-run: validated, nothing executed", "totals": totals},
    )


# ---- command_task ----------------------------------------------------------------------


def run_command_task(it: CommandTask, ctx: Any) -> ItemResult:
    """Run the command in a fresh copy of the suite's fixture; success is its exit code."""
    suite = ctx.suite
    problems = validate_item(suite.loaded.root, it)
    fixture = _suite_fixture(suite)
    if problems:
        return _invalid(it, problems)
    if suite.dry_run:
        return _dry(it, {"commands": 1})
    build = build_dir(suite, it.id)
    fresh_dir(build, Path(suite.build_root or "runs"))
    ws = build / "workspace"
    if fixture is not None:
        copy_fixture(fixture, ws)
    else:
        ws.mkdir()
    (build / "tmp").mkdir()
    env = _Env(ctx, it, build, memory_enabled(suite))
    try:
        res = env.run(it.command, build / "command", ws, build, it.timeout_seconds)
    except CommandError as e:
        return _invalid(it, [str(e)])
    ok = res.exit_code == it.expected_exit_code and not res.timed_out
    env.write_summary(
        {"command": status(res), "expected_exit_code": it.expected_exit_code, "success": ok}
    )
    note = "timed out" if res.timed_out else (res.error or f"exit code {res.exit_code}")
    return ItemResult(
        item_id=it.id,
        index=0,
        input=it.command,
        output=note,
        latency_ms=res.seconds * 1000,
        metrics=[
            metric("success", float(ok)),
            metric("timed_out", float(res.timed_out), higher=False),
        ],
        extra={"exit_code": res.exit_code, "timed_out": res.timed_out, "build_dir": str(build)},
    )


def _suite_fixture(suite: Any) -> Path | None:
    """The manifest's fixture when it names a checked directory (else an empty workspace)."""
    rel = suite.loaded.manifest.fixture
    if not rel:
        return None
    try:
        return check_fixture(suite.loaded.root, rel)
    except FixtureError:
        return None  # Memory Layer uses `fixture` as a label; doctor says so


# ---- agent builds ----------------------------------------------------------------------


def _agent_turn(
    env: _Env,
    ws: Path,
    run_dir: Path,
    prompt_text: str,
    questions: list[str],
    score_cmds: list[str],
    checks: Any,
    timeout: float,
    step: str = "",
) -> Scores:
    """Prompt, helper, agent, score commands, checks, evidence, tokens: one agent run."""
    sc = Scores(
        tokens_required=env.item.require_token_usage or ev.wants_token_usage(env.item.agent_command)
    )
    prompt = run_dir / "prompt.md"
    prompt.write_text(prompt_text + ev.condition_block(env.memory, questions), "utf-8")
    helper = None
    if ws.is_dir() and env.memory:
        command = ev.query_command(
            env.suite.suite_dir,
            env.suite.memory_store,
            env.suite.memory_store_options or {},
            env.suite.memories,
            HELPER_TOP_K,
        )
        helper = ev.install_helper(ws, questions, command, min(timeout, 120.0))
    if not ws.is_dir():
        sc.notes.append("the workspace is gone (deleted by an earlier command); agent not run")
    else:
        sc.agent = env.run(
            env.item.agent_command, run_dir / "agent", ws, run_dir, timeout, prompt, step, helper
        )
        if sc.agent.timed_out:
            sc.notes.append(f"agent killed at its timeout ({timeout:g} s)")
        elif not sc.agent.ok:
            sc.notes.append(_agent_failure(sc.agent))
        if not ws.is_dir():
            sc.notes.append("the agent deleted the workspace")
    sc.workspace_present = ws.is_dir()
    for i, cmd in enumerate(score_cmds):
        if ws.is_dir():
            r = env.run(cmd, run_dir / f"score-{i}", ws, run_dir, timeout, prompt, step, helper)
            sc.score.append((cmd, r.ok))
        else:
            sc.score.append((cmd, False))
    check_workspace(ws, checks, sc)
    ask = None
    if env.memory:

        def ask(q: str) -> list[str]:
            return [h.memory_id for h in env.ctx.search(q, HELPER_TOP_K)[0]]

    sc.evidence = ev.verify(ws, questions, env.memory, ask)
    if env.memory:  # keep the evidence with the run
        ev.keep_evidence(ws, run_dir / "memory-eval")
    if sc.agent is not None:
        sc.tokens, source = ev.read_token_usage(run_dir, Path(sc.agent.stdout_path))
        if sc.tokens is None and sc.tokens_required:
            sc.notes.append("token usage required but the agent reported none")
        elif source:
            sc.notes.append(f"token usage from {source}")
    return sc


def _agent_failure(agent: CommandResult) -> str:
    """Why the agent failed, in one line: its exit code and the last line of its stderr."""
    if agent.exit_code is None:
        return f"the agent could not start: {agent.error or 'no exit code'}"
    try:
        tail = Path(agent.stderr_path).read_text("utf-8", errors="replace").strip()
    except OSError:
        tail = ""
    last = tail.splitlines()[-1].strip() if tail else "(nothing on stderr)"
    return f"the agent exited {agent.exit_code}: {last[:300]}"


def _start(it: Any, ctx: Any) -> ItemResult | tuple[_Env, Path, list[CommandResult]]:
    """Validate, then (unless a dry run) copy the fixture and run the setup commands.

    Returns:
        A finished result (invalid item, dry run), or ``(env, workspace, setup results)``.
    """
    suite = ctx.suite
    problems = validate_item(suite.loaded.root, it)
    if problems:
        return _invalid(it, problems)
    if suite.dry_run:
        return _dry(it, totals(it))
    env = _Env(ctx, it, build_dir(suite, it.id), memory_enabled(suite))
    fresh_dir(env.build, Path(suite.build_root or "runs"))
    (env.build / "tmp").mkdir()
    ws = env.build / "workspace"
    try:
        copy_fixture(check_fixture(suite.loaded.root, it.fixture), ws)
    except FixtureError as e:
        return _invalid(it, [str(e)])
    setup: list[CommandResult] = []
    for i, cmd in enumerate(it.setup_commands):
        if ws.is_dir():
            setup.append(env.run(cmd, env.build / f"setup-{i}", ws, env.build, it.timeout_seconds))
    return env, ws, setup


def _tokens(u: dict[str, int] | None) -> dict[str, int]:
    return dict(u) if u else {}


def run_agent_build_task(it: AgentBuildTask, ctx: Any) -> ItemResult:
    """Copy the fixture, prompt the agent, score the workspace."""
    started = _start(it, ctx)
    if isinstance(started, ItemResult):
        return started
    env, ws, setup = started
    sc = _agent_turn(
        env,
        ws,
        env.build,
        it.prompt,
        it.memory_questions,
        it.score_commands,
        it,
        it.timeout_seconds,
    )
    sc.setup = setup
    env.write_summary(sc.detail())
    return ItemResult(
        item_id=it.id,
        index=0,
        input=it.prompt,
        output="; ".join(sc.notes) or None,
        metrics=sc.metrics(),
        tokens=_tokens(sc.tokens),
        latency_ms=sc.agent.seconds * 1000 if sc.agent else None,
        extra={"scores": sc.counts(), "build_dir": str(env.build), "notes": sc.notes},
    )


def run_agent_build_sequence(it: AgentBuildSequence, ctx: Any) -> ItemResult | list[ItemResult]:
    """One workspace, the steps in order; one logged result per step.

    Every step is logged under the sequence's id with its ``step`` (so a comparison pairs
    step with step); the aggregate (every step succeeded, summed counts and tokens) is
    ``summary.json`` in the build directory and ``extra.sequence`` on the last step.
    """
    started = _start(it, ctx)
    if isinstance(started, ItemResult):
        return started
    env, ws, setup = started
    suite = ctx.suite
    setup_ok = all(r.ok for r in setup) and len(setup) == len(it.setup_commands)
    steps: list[tuple[BuildStep, Scores]] = []
    subs: list[ItemResult] = []
    for n, step in enumerate(it.steps, 1):
        run_dir = env.build / "steps" / f"{n:02d}-{slugify(step.id)}"
        run_dir.mkdir(parents=True)
        if ws.is_dir() and (ws / ev.HELPER_DIR).exists() and env.memory:
            shutil.rmtree(ws / ev.HELPER_DIR)  # each step gets its own helper and evidence
        sc = _agent_turn(
            env,
            ws,
            run_dir,
            step.prompt,
            step.memory_questions,
            step.score_commands,
            step,
            step.timeout_seconds or it.timeout_seconds,
            step.id,
        )
        ok = sc.success() and setup_ok
        if not setup_ok:
            sc.notes.append("a setup command failed")
        (run_dir / "summary.json").write_text(
            json.dumps(
                {
                    "item": it.id,
                    "step": step.id,
                    "condition": suite.condition,
                    **sc.detail(),
                    "success": ok,
                },
                indent=1,
            )
            + "\n"
        )
        steps.append((step, sc))
        groups = {"eval_type": "agent_build_sequence_step"}
        groups.update(
            {
                f: v
                for f in ("reasoning_mode", "memory_capability", "difficulty")
                if (v := getattr(step, f) or getattr(it, f))
            }
        )
        subs.append(
            ItemResult(
                item_id=it.id,
                index=0,
                step=step.id,
                input=step.prompt,
                output="; ".join(sc.notes) or None,
                groups=groups,
                metrics=sc.metrics(ok),
                tokens=_tokens(sc.tokens),
                latency_ms=sc.agent.seconds * 1000 if sc.agent else None,
                extra={
                    "step_index": n,
                    "scores": sc.counts(),
                    "run_dir": str(run_dir),
                    "notes": sc.notes,
                },
            )
        )
    total = aggregate([sc for _, sc in steps], setup)
    oks = [any(m.name == "success" and m.value == 1.0 for m in r.metrics) for r in subs]
    usage = [sc.tokens for _, sc in steps if sc.tokens]
    tokens = {k: sum(u[k] for u in usage) for k in ("input", "output", "total")} if usage else {}
    detail = {
        "counts": total,
        "success": all(oks),
        "steps_succeeded": sum(oks),
        "steps": len(subs),
        "setup": [status(r) for r in setup],
        "token_usage": tokens or None,
        "per_step": [
            {"step": s.id, "success": ok, "counts": sc.counts()}
            for (s, sc), ok in zip(steps, oks, strict=True)
        ],
    }
    env.write_summary(detail)
    # The steps are the logged observations (compare pairs them by step); the
    # aggregate rides on the last step, so nothing is counted twice.
    subs[-1].extra["sequence"] = {
        k: detail[k] for k in ("success", "steps_succeeded", "steps", "counts", "token_usage")
    }
    subs[0].extra["build_dir"] = str(env.build)
    return subs


def timeout_budget(it: Any) -> float:
    """Seconds one item may take at most (every command at its own timeout, plus slack)."""
    t = float(getattr(it, "timeout_seconds", 0) or 0)
    cmds = len(getattr(it, "setup_commands", []) or []) + 1
    if steps := getattr(it, "steps", None):
        per = [s.timeout_seconds or t for s in steps]
        total = cmds * t + sum(
            p * (1 + len(s.score_commands)) for p, s in zip(per, steps, strict=True)
        )
    else:
        total = t * (cmds + len(getattr(it, "score_commands", []) or []))
    return total + 30.0 if total else 0.0


COMMAND_TASK = ItemType(
    "command_task", CommandTask, run_command_task, requires_shell, timeout_budget
)
AGENT_BUILD_TASK = ItemType(
    "agent_build_task", AgentBuildTask, run_agent_build_task, requires_shell, timeout_budget
)
AGENT_BUILD_SEQUENCE = ItemType(
    "agent_build_sequence",
    AgentBuildSequence,
    run_agent_build_sequence,
    requires_shell,
    timeout_budget,
)
