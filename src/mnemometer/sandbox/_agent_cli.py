"""Reference wrappers for real agent CLIs: Codex (``codex exec``) and Claude Code (``claude -p``).

An ``agent_command`` such as::

    mnemometer agent codex --workspace {workspace} --prompt-file {prompt_file} --run-dir {run_dir}

runs the CLI non-interactively in the workspace and leaves the artifacts Memory Layer's
``run-codex.sh`` left, which the harness reads:

* ``<agent>-final.md``: the agent's final message;
* ``<agent>-events.jsonl``: the CLI's raw JSON events (its stdout);
* ``<agent>-token-usage.json``: token totals (``input_tokens``, ``output_tokens``,
  ``total_tokens``), when the events report any.

The prompt gets a short isolation block (work only in this directory); git discovery stops
at the workspace's parent (``GIT_CEILING_DIRECTORIES``), so the parent repository is never
read. A watchdog ends an agent whose final message has not changed for ``settle`` seconds
(a finished agent must not hold the run open) and one still running at ``deadline``.
Isolation itself (HOME, network, file system) is the sandbox's job, around this command.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError
from mnemometer.sandbox._evidence import parse_token_usage
from mnemometer.sandbox._shell import _kill_group

ISOLATION_NOTE = (
    "\n\n## Workspace\n\nWork only inside the current directory ({workspace}). Do not read "
    "or change anything outside it, and do not look for instructions elsewhere.\n"
)


def _codex_argv(binary: list[str], workspace: Path, final: Path, model: str | None) -> list[str]:
    argv = [*binary, "exec", "--json", "--skip-git-repo-check", "--cd", str(workspace)]
    argv += ["--output-last-message", str(final)]
    sandbox = os.environ.get("MEMORY_EVAL_CODEX_SANDBOX", "danger-full-access")
    if sandbox == "danger-full-access":
        # The outer sandbox confines it; Codex's own would also block the memory helper.
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        argv += ["--sandbox", sandbox]
    if model:
        argv += ["--model", model]
    return [*argv, "-"]  # the prompt on stdin


def _claude_argv(binary: list[str], workspace: Path, final: Path, model: str | None) -> list[str]:
    del workspace, final  # Claude Code works in its cwd and reports the final text as an event
    argv = [*binary, "-p", "--output-format", "stream-json", "--verbose"]
    argv += ["--permission-mode", os.environ.get("MEMORY_EVAL_CLAUDE_PERMISSIONS", "acceptEdits")]
    if model:
        argv += ["--model", model]
    return argv


def _events(path: Path) -> list[dict[str, Any]]:
    return _parse_events(path.read_bytes())


def _parse_events(data: bytes) -> list[dict[str, Any]]:
    out = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict):
            out.append(doc)
    return out


class EventTail:
    """The events a CLI has written so far, read as the file grows.

    Each :meth:`new` parses only the complete lines added since the last call (a line still
    being written waits for its newline), so watching a long session costs the size of its
    file once, not once per poll.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""

    def new(self) -> list[dict[str, Any]]:
        """The events in the lines completed since the last call."""
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        data, _, self._partial = (self._partial + data).rpartition(b"\n")
        return _parse_events(data)


def _codex_final(events: list[dict[str, Any]]) -> str | None:
    texts = [
        str(e["item"].get("text", ""))
        for e in events
        if e.get("type") == "item.completed"
        and isinstance(e.get("item"), dict)
        and e["item"].get("type") in ("agent_message", "assistant_message")
    ]
    return texts[-1] if texts else None


def _claude_final(events: list[dict[str, Any]]) -> str | None:
    results = [e for e in events if e.get("type") == "result"]
    return str(results[-1].get("result", "")) if results else None


def _codex_usage(events: list[dict[str, Any]]) -> dict[str, int] | None:
    # One usage per turn (turn.completed): summed.
    return parse_token_usage("\n".join(json.dumps(e) for e in events))


def _claude_usage(events: list[dict[str, Any]]) -> dict[str, int] | None:
    # Assistant messages repeat their usage; the final result event holds the totals.
    results = [e for e in events if e.get("type") == "result"]
    return parse_token_usage(json.dumps(results[-1])) if results else None


@dataclass(frozen=True)
class AgentCli:
    """How one agent CLI is run and read."""

    name: str
    binary: str
    """The command on PATH (``--bin`` overrides it)."""
    npm: str
    """The npm package a user installs it from."""
    argv: Callable[[list[str], Path, Path, str | None], list[str]]
    final: Callable[[list[dict[str, Any]]], str | None]
    usage: Callable[[list[dict[str, Any]]], dict[str, int] | None]
    model_env: str


AGENTS = {
    "codex": AgentCli(
        "codex",
        "codex",
        "@openai/codex",
        _codex_argv,
        _codex_final,
        _codex_usage,
        "MEMORY_EVAL_CODEX_MODEL",
    ),
    "claude": AgentCli(
        "claude",
        "claude",
        "@anthropic-ai/claude-code",
        _claude_argv,
        _claude_final,
        _claude_usage,
        "MEMORY_EVAL_CLAUDE_MODEL",
    ),
}


def _stable(path: Path, since: dict[str, Any], now: float) -> float:
    """Seconds ``path`` has been non-empty and unchanged (0 while missing or changing)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return 0.0
    key = (st.st_size, st.st_mtime_ns)
    if st.st_size == 0 or since.get("key") != key:
        since.update(key=key, t=now)
        return 0.0
    return now - float(since["t"])


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Stop the agent's whole process group (SIGTERM, then SIGKILL) and reap its leader."""
    _kill_group(proc.pid, proc, 2.0)
    proc.wait()


def run_agent(
    kind: str,
    workspace: Path,
    prompt_file: Path,
    run_dir: Path,
    *,
    binary: str | None = None,
    model: str | None = None,
    settle: float = 8.0,
    deadline: float | None = None,
    poll: float = 0.2,
) -> int:
    """Run agent ``kind`` once; write its artifacts into ``run_dir``; its exit code.

    Args:
        kind: ``codex`` or ``claude``.
        workspace: where it works (its cwd).
        prompt_file: the harness's prompt.
        run_dir: where the artifacts go.
        binary: the command line of the CLI (default: ``codex`` / ``claude`` on PATH).
        model: the model (default: ``MEMORY_EVAL_CODEX_MODEL`` / ``MEMORY_EVAL_CLAUDE_MODEL``).
        settle: end the agent once its final message is unchanged this long (seconds).
        deadline: end it after this many seconds (default: the harness's timeout less 30 s).
        poll: seconds between watchdog checks.

    Returns:
        The CLI's exit code; 0 when the watchdog ended it after a stable final message;
        124 when the deadline ended it first; 127 when the CLI is not installed.
    """
    cli = AGENTS[kind]
    run_dir.mkdir(parents=True, exist_ok=True)
    final = run_dir / f"{kind}-final.md"
    events_path = run_dir / f"{kind}-events.jsonl"
    for stale in (final, events_path, run_dir / f"{kind}-token-usage.json"):
        stale.unlink(missing_ok=True)
    if deadline is None:
        budget = float(os.environ.get("MEMORY_EVAL_TIMEOUT_SECONDS") or 390)
        deadline = max(10.0, budget - 30.0)
    prompt = prompt_file.read_text("utf-8") + ISOLATION_NOTE.format(workspace=workspace)
    argv = cli.argv(
        shlex.split(binary) if binary else [cli.binary],
        workspace,
        final,
        model or os.environ.get(cli.model_env),
    )
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(workspace).resolve().parent)}
    try:
        with events_path.open("wb") as out:
            proc = subprocess.Popen(
                argv,
                cwd=workspace,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                start_new_session=True,
            )
            assert proc.stdin is not None
            with proc.stdin:
                proc.stdin.write(prompt.encode())
            code = _watch(proc, cli, final, events_path, settle, deadline, poll)
    except FileNotFoundError:
        raise MnemometerError(
            f"{argv[0]}: not found; install it with `npm install -g {cli.npm}` "
            "(and show its directory to the sandbox with --sandbox-ro)"
        ) from None
    events = _events(events_path)
    if not final.is_file() and (text := cli.final(events)) is not None:
        final.write_text(text, "utf-8")
    usage = cli.usage(events)
    if usage is not None:
        totals = {
            "input_tokens": usage["input"],
            "output_tokens": usage["output"],
            "total_tokens": usage["total"],
        }
        (run_dir / f"{kind}-token-usage.json").write_text(json.dumps(totals, indent=1) + "\n")
    return code


def _watch(
    proc: subprocess.Popen[bytes],
    cli: AgentCli,
    final: Path,
    events_path: Path,
    settle: float,
    deadline: float,
    poll: float,
) -> int:
    """Wait for the agent: its exit, a settled final message, or the deadline."""
    t0 = time.monotonic()
    since: dict[str, Any] = {}
    # Codex writes the final message file itself; Claude Code's is its result event.
    watched = final if cli.name == "codex" else events_path
    tail, done = EventTail(events_path), cli.name == "codex"
    while True:
        try:
            return proc.wait(timeout=poll)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        done = done or cli.final(tail.new()) is not None
        if done and _stable(watched, since, now) >= settle:
            _kill(proc)
            return 0
        if now - t0 >= deadline:
            _kill(proc)
            return 124
