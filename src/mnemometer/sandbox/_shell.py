"""The sandboxed command executor behind ``command_task`` and the agent build items.

Suites are code-execution inputs, so every command here is run the same careful way:

* an argv list, never a shell string: a template is split with :func:`shlex.split` first and
  placeholders are substituted inside each argument, so a value with spaces or quotes
  stays one argument and can never start a second command;
* its own process group (a new session), killed as a whole at its timeout (SIGTERM, a short
  grace, then SIGKILL), and cleaned up after a normal exit too (no stray background jobs);
* stdout and stderr drained to files, each capped (the rest is counted, not stored);
* a minimal environment plus allow-listed names (see :mod:`._confine`), and a task token
  by which processes that escaped the group (``setsid``, double fork) are found and killed.

A sandbox (bubblewrap, say) slots in as a wrapper of the argv before :func:`run_command`;
nothing here depends on it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from mnemometer.errors import MnemometerError
from mnemometer.sandbox._confine import TASK_ID_VAR, kill_stragglers, new_task_id

OUTPUT_CAP = 1 << 20
"""Bytes of stdout (and of stderr) kept per command; the rest is counted and dropped."""
KILL_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL for a command that overran its timeout."""

PLACEHOLDERS = (
    "workspace",
    "prompt_file",
    "run_dir",
    "suite_dir",
    "condition",
    "project",
    "item",
    "step",
    "python",
    "memory_helper",
)
"""Names a command template may use as ``{name}``."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class CommandError(MnemometerError):
    """A command template cannot be turned into an argv list (the message says why)."""


@dataclass(frozen=True)
class CommandResult:
    """What one command did; ``status.json`` next to its output files holds the same."""

    argv: list[str]
    exit_code: int | None
    """``None`` when it could not start or was killed; negative: killed by that signal."""
    timed_out: bool
    seconds: float
    stdout_path: str
    stderr_path: str
    stdout_bytes: int
    """Bytes the command wrote to stdout (the file holds at most :data:`OUTPUT_CAP`)."""
    stderr_bytes: int
    error: str | None = None
    """Why it could not start (missing program, missing working directory)."""

    @property
    def ok(self) -> bool:
        """Exited 0 in time."""
        return self.exit_code == 0 and not self.timed_out


def template_names(template: str) -> list[str]:
    """Placeholder names used in ``template``."""
    return _PLACEHOLDER.findall(template)


def split_template(template: str) -> list[str]:
    """Split a command template into argv words (placeholders untouched).

    Raises:
        CommandError: empty, unbalanced quotes, or an unknown placeholder.
    """
    try:
        words = shlex.split(template)
    except ValueError as e:
        raise CommandError(f"command {template!r}: {e}") from None
    if not words:
        raise CommandError("command is empty")
    unknown = sorted({n for n in template_names(template) if n not in PLACEHOLDERS})
    if unknown:
        raise CommandError(
            f"command {template!r}: unknown placeholder {{{unknown[0]}}}; "
            f"known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}"
        )
    return words


def render(template: str, values: Mapping[str, str]) -> list[str]:
    """The argv for ``template``: split first, then substitute inside each word.

    A value is never re-split or interpreted, so ``{prompt_file}`` holding
    ``a b; rm -rf x`` is still one argument.

    Raises:
        CommandError: see :func:`split_template`; or a placeholder has no value here.
    """
    words = split_template(template)

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            raise CommandError(f"command {template!r}: {{{name}}} has no value here")
        return str(values[name])

    return [_PLACEHOLDER.sub(sub, w) for w in words]


def _drain(stream: IO[bytes], path: Path, cap: int, counter: list[int]) -> None:
    with path.open("wb") as f:
        kept = 0
        while chunk := stream.read(65536):
            counter[0] += len(chunk)
            if kept < cap:
                part = chunk[: cap - kept]
                f.write(part)
                kept += len(part)
    stream.close()


def _kill_group(pgid: int, proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM the group, wait ``grace``, then SIGKILL whatever is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        if wait is not None:
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            # The leader is gone; a child that ignored SIGTERM may not be: SIGKILL anyway.


def run_command(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    out_prefix: Path,
    cap: int = OUTPUT_CAP,
    grace: float = KILL_GRACE,
) -> CommandResult:
    """Run ``argv`` in ``cwd`` with a hard timeout, its output and status written to files.

    The files are ``<prefix>.stdout.txt``, ``<prefix>.stderr.txt`` and
    ``<prefix>.status.json``.

    A command that cannot start (missing program or working directory) is a recorded
    failure, not an exception: the run goes on.

    Args:
        argv: program and arguments (see :func:`render`).
        cwd: working directory (a workspace, never the caller's directory).
        env: the full environment (see :func:`._confine.task_env`); a task token is added.
        timeout: seconds before the process group is killed.
        out_prefix: path prefix of the three output files.
        cap: bytes kept per stream.
        grace: seconds between SIGTERM and SIGKILL.
    """
    out_prefix.parent.mkdir(parents=True, exist_ok=True)
    stdout_path = out_prefix.with_name(out_prefix.name + ".stdout.txt")
    stderr_path = out_prefix.with_name(out_prefix.name + ".stderr.txt")
    counts = ([0], [0])
    task_id = new_task_id()
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, TASK_ID_VAR: task_id},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        stdout_path.write_bytes(b"")
        stderr_path.write_text(f"could not start: {e}\n")
        res = CommandResult(
            argv,
            None,
            False,
            0.0,
            str(stdout_path),
            str(stderr_path),
            0,
            0,
            error=f"could not start {argv[0]!r}: {e.strerror or e}",
        )
        _write_status(out_prefix, res)
        return res
    readers = [
        threading.Thread(target=_drain, args=(s, p, cap, c), daemon=True)
        for s, p, c in (
            (proc.stdout, stdout_path, counts[0]),
            (proc.stderr, stderr_path, counts[1]),
        )
    ]
    for r in readers:
        r.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid, proc, grace)
        proc.wait()
    else:
        # The leader exited; background children it left in its group go too.
        _kill_group(proc.pid, proc, 0.0)
    # Processes that left the group (setsid, double fork) still carry the token; they
    # would outlive the task and hold its output pipes open.
    kill_stragglers(task_id)
    for r in readers:
        r.join(timeout=5.0)
    code = None if timed_out else proc.returncode
    res = CommandResult(
        argv,
        code,
        timed_out,
        time.monotonic() - t0,
        str(stdout_path),
        str(stderr_path),
        counts[0][0],
        counts[1][0],
    )
    _write_status(out_prefix, res)
    return res


def _write_status(out_prefix: Path, res: CommandResult) -> None:
    path = out_prefix.with_name(out_prefix.name + ".status.json")
    path.write_text(json.dumps(asdict(res), indent=1) + "\n")
