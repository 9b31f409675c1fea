"""Memory evidence (did the agent really ask memory?) and token usage from agent output.

Under a memory condition the harness installs ``.memory-eval/query-memory`` into the
workspace: a small script that runs ``mnemometer query`` against the condition's store
(seeded with the suite's memories) and writes ``qN.json`` / ``qN.status.json``. A required
question counts as asked only when its artifact exists, exited 0, holds the exact question,
and lists the same memory ids the harness gets when it asks the store itself, so a
hand-written ``memory-evidence.md`` or a forged JSON file proves nothing.

Under ``no-memory`` nothing is installed and any evidence in the workspace fails the item.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.sandbox._workspace import read_workspace_file

HELPER_DIR = ".memory-eval"
HELPER = "query-memory"
EVIDENCE_NAMES = ("memory-evidence.md", "memory-evidence.json", HELPER_DIR)
"""Anything by these names in a ``no-memory`` workspace fails the item."""

_HELPER_SCRIPT = '''#!{python}
"""Ask memory one required question: query-memory QUESTION_ID QUESTION...

Written by mnemometer. Runs `mnemometer query` and keeps its output as evidence
(qN.json, qN.stderr.txt, qN.status.json) next to this script.
"""
import json, re, subprocess, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG = json.loads((HERE / "config.json").read_text())


def main(argv):
    if len(argv) < 2:
        print("usage: query-memory QUESTION_ID QUESTION...", file=sys.stderr)
        return 64
    qid, question = argv[0], " ".join(argv[1:])
    if not re.fullmatch(r"q[0-9]+", qid):
        print(f"query-memory: question id must look like q1, got {{qid!r}}", file=sys.stderr)
        return 64
    try:
        proc = subprocess.run(CONFIG["command"] + [question], capture_output=True, text=True,
                              timeout=CONFIG["timeout"])
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired:
        out, err, code = "", "query-memory: timed out", 124
    (HERE / f"{{qid}}.json").write_text(out)
    (HERE / f"{{qid}}.stderr.txt").write_text(err)
    status = {{"question_id": qid, "question": question, "exit_code": code,
              "output_file": f"{{qid}}.json"}}
    (HERE / f"{{qid}}.status.json").write_text(json.dumps(status))
    sys.stdout.write(out)
    sys.stderr.write(err)
    if code:
        return code
    return 0 if out.strip() else 65


sys.exit(main(sys.argv[1:]))
'''


def query_command(
    suite_dir: str, store: str, store_options: dict[str, Any], memories: str | None, top_k: int
) -> list[str]:
    """The ``mnemometer query`` argv (without the question) for a condition's store."""
    exe = Path(sys.executable).with_name("mnemometer")
    head = (
        [str(exe)]
        if exe.is_file()
        else [sys.executable, "-c", "from mnemometer.cli.main import main; main()"]
    )
    argv = [*head, "query", "--suite", suite_dir, "--store", store, "--top-k", str(top_k), "--json"]
    for k, v in store_options.items():
        argv += ["-S", f"{k}={json.dumps(v)}"]
    if memories:
        argv += ["--memories", memories]
    return argv


def install_helper(
    workspace: Path, questions: list[str], command: list[str], timeout: float
) -> Path:
    """Write ``.memory-eval/`` (helper, its config, the required questions) into a workspace.

    Any previous ``.memory-eval/`` is removed first (a sequence rewrites it per step).
    """
    d = workspace / HELPER_DIR
    if d.is_symlink() or d.is_file():
        d.unlink()
    elif d.exists():
        shutil.rmtree(d)
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"command": command, "timeout": timeout}))
    qs = [{"id": f"q{i}", "question": q} for i, q in enumerate(questions, 1)]
    (d / "required-questions.json").write_text(json.dumps(qs, indent=1, ensure_ascii=False))
    helper = d / HELPER
    helper.write_text(_HELPER_SCRIPT.format(python=sys.executable))
    helper.chmod(0o755)
    return helper


def keep_evidence(workspace: Path, dest: Path) -> None:
    """Copy the workspace's ``.memory-eval/`` to ``dest`` (the run's copy of the evidence).

    The agent wrote that directory: a link in it is copied as a link, never followed (it
    could name a file or a directory of the host), and a FIFO or device is left out.
    """
    src = workspace / HELPER_DIR
    if workspace.is_symlink() or src.is_symlink() or not src.is_dir():
        return

    def special(directory: str, names: list[str]) -> list[str]:
        kept = (stat.S_ISREG, stat.S_ISDIR, stat.S_ISLNK)
        modes = {n: os.lstat(os.path.join(directory, n)).st_mode for n in names}
        return [n for n, m in modes.items() if not any(ok(m) for ok in kept)]

    shutil.copytree(src, dest, symlinks=True, ignore=special, dirs_exist_ok=True)


def condition_block(memory_enabled: bool, questions: list[str]) -> str:
    """The text appended to an item's prompt: what the condition allows."""
    if not memory_enabled:
        return (
            "\n\n## Memory\n\nThis run has no memory. Do not query, read or use any memory "
            "system. Do not create memory-evidence.md, memory-evidence.json or "
            ".memory-eval. Work only from the repository and this prompt.\n"
        )
    lines = [
        "",
        "",
        "## Memory",
        "",
        "Use memory before implementing. Ask every required question below through the "
        f"helper ./{HELPER_DIR}/{HELPER} (it records what memory answered; evidence "
        "written by hand does not count). You may summarise what you learned in "
        "memory-evidence.md.",
    ]
    if questions:
        lines += ["", "Required questions:"]
        for i, q in enumerate(questions, 1):
            lines.append(f"- q{i}: {q}\n  `./{HELPER_DIR}/{HELPER} q{i} {json.dumps(q)}`")
    return "\n".join(lines) + "\n"


_ARTIFACTS = (".status.json", ".json")
"""What the helper writes per question: its status, then the memory's answer."""


@dataclass
class Evidence:
    """Memory evidence for one agent run (a task, or one step of a sequence)."""

    required: int
    verified: int
    ok: bool
    notes: list[str] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.split())


def verify(
    workspace: Path,
    questions: list[str],
    memory_enabled: bool,
    ask: Callable[[str], list[str]] | None,
) -> Evidence:
    """Check the evidence a run left in ``workspace``.

    Args:
        workspace: the agent's workspace.
        questions: the required memory questions, in order (``q1``...).
        memory_enabled: whether the condition has memory.
        ask: the harness's own query (question → memory ids in rank order), to check
            the recorded answers against; ``None`` skips that check.
    """
    if not memory_enabled:
        found = [
            n for n in EVIDENCE_NAMES if (workspace / n).exists() or (workspace / n).is_symlink()
        ]
        notes = [f"no-memory run left memory evidence: {', '.join(found)}"] if found else []
        return Evidence(len(questions), 0, not found, notes)
    ev = Evidence(len(questions), 0, True)
    for i, q in enumerate(questions, 1):
        qid = f"q{i}"
        why = _check_question(workspace, qid, q, ask)
        ev.questions.append({"id": qid, "question": q, "verified": why is None, "reason": why})
        if why is None:
            ev.verified += 1
        else:
            ev.notes.append(f"{qid} not verified: {why}")
    ev.ok = ev.verified == ev.required
    return ev


def _check_question(
    workspace: Path, qid: str, question: str, ask: Callable[[str], list[str]] | None
) -> str | None:
    # Read only files inside the workspace: a link the agent left must not lead out of it.
    raw = [read_workspace_file(workspace, f"{HELPER_DIR}/{qid}{ext}") for ext in _ARTIFACTS]
    if raw[0] is None or raw[1] is None:
        return "never asked through the helper (no artifact file in the workspace)"
    try:
        status, out = (json.loads(r) for r in raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        return f"unreadable artifact ({e})"
    if not isinstance(status, dict) or status.get("exit_code") != 0:
        return f"helper exit code {status.get('exit_code') if isinstance(status, dict) else '?'}"
    if _norm(str(status.get("question", ""))) != _norm(question):
        return f"asked {status.get('question')!r}, not the required question"
    results = out.get("results") if isinstance(out, dict) else None
    if not isinstance(results, list) or not results:
        return "memory returned no results"
    ids = [str(r.get("id")) for r in results if isinstance(r, dict)]
    if ask is not None:
        expected = ask(question)[: len(ids)]
        if ids != expected:
            return "recorded results differ from what the store returns for the question"
    return None


# ---- token usage ---------------------------------------------------------------------

_USAGE_KEYS = (
    "usage",
    "token_usage",
    "tokenUsage",
    "total_token_usage",
    "totalTokenUsage",
    "last_token_usage",
    "lastTokenUsage",
)
_CUMULATIVE = ("total_token_usage", "totalTokenUsage")
_IN = ("input_tokens", "inputTokens", "prompt_tokens", "promptTokens")
_OUT = ("output_tokens", "outputTokens", "completion_tokens", "completionTokens")
_TOTAL = ("total_tokens", "totalTokens")


def _first_int(d: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for k in keys:
        v = d.get(k)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return int(v)
    return None


def _as_usage(d: Any) -> dict[str, int] | None:
    if not isinstance(d, dict):
        return None
    i, o, t = _first_int(d, _IN), _first_int(d, _OUT), _first_int(d, _TOTAL)
    if i is None and o is None and t is None:
        return None
    i, o = i or 0, o or 0
    return {"input": i, "output": o, "total": t if t is not None else i + o}


def _walk(obj: Any) -> Iterator[tuple[str, dict[str, int]]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in _USAGE_KEYS and (u := _as_usage(v)) is not None and u["total"] > 0:
                yield k, u
            else:
                yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)


def _json_docs(text: str) -> Iterator[Any]:
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            yield json.loads(stripped)
            return
        except json.JSONDecodeError:
            pass
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def parse_token_usage(text: str) -> dict[str, int] | None:
    """Token usage reported in an agent's output (a JSON document or a JSON-lines stream).

    Usage objects (``usage``, ``token_usage``, ``total_token_usage``... with snake_case or
    camelCase counts) are found at any depth. Cumulative ones (``total_token_usage``): the
    largest wins; per-call ones (``usage``) are summed. ``None`` when nothing is reported.
    """
    cumulative: list[dict[str, int]] = []
    per_call: list[dict[str, int]] = []
    for doc in _json_docs(text):
        for key, u in _walk(doc):
            (cumulative if key in _CUMULATIVE else per_call).append(u)
    if cumulative:
        return max(cumulative, key=lambda u: u["total"])
    if per_call:
        return {k: sum(u[k] for u in per_call) for k in ("input", "output", "total")}
    return None


USAGE_FILES = ("token-usage.json", "codex-token-usage.json", "claude-token-usage.json")
"""Token totals an agent wrapper writes into the run directory, in order of preference."""


def read_token_usage(run_dir: Path, stdout_path: Path) -> tuple[dict[str, int] | None, str]:
    """Usage from a wrapper's file in ``run_dir`` (:data:`USAGE_FILES`), else stdout.

    Files the agent could write are read only inside their directory, never through a
    link out of it (:func:`~mnemometer.sandbox.read_workspace_file`).
    """
    for name in USAGE_FILES:
        raw = read_workspace_file(run_dir, name)
        if raw is None:
            continue
        try:
            u = _as_usage(json.loads(raw))
        except (json.JSONDecodeError, UnicodeDecodeError):
            u = None
        if u is not None:
            return u, name
    raw = read_workspace_file(stdout_path.parent, stdout_path.name)
    if raw is None:
        return None, ""
    u = parse_token_usage(raw.decode("utf-8", errors="replace"))
    return u, ("agent stdout" if u else "")


def wants_token_usage(command: str) -> bool:
    """Memory Layer's rule: a Codex-backed agent must report token usage."""
    return bool(re.search(r"\bcodex\b|run-codex", command))
