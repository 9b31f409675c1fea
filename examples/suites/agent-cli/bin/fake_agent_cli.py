"""A scripted stand-in for the Codex and Claude Code CLIs, for tests and the example suite.

Usage (as ``mnemometer agent`` calls the real ones)::

    python fake_agent_cli.py codex exec --json ... --cd DIR --output-last-message FILE -
    python fake_agent_cli.py claude -p --output-format stream-json --verbose ...

It reads the prompt on stdin, prints the CLI's JSON events (with token usage) on stdout,
writes ``agent-report.json`` into its working directory with what it could see, and (Codex)
writes the final message file. Prompt lines steer it:

* ``FAKE_PROBE: PATH`` reports whether PATH exists;
* ``FAKE_WRITE: PATH`` tries to write PATH;
* ``FAKE_CONNECT: HOST:PORT`` tries a TCP connection;
* ``FAKE_AGENT: hang-after-final`` keeps running after the final message (the wrapper's
  watchdog must end it).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from pathlib import Path


def observe(prompt: str) -> dict[str, object]:
    """What this process can see and do, as the prompt asks."""
    home = Path(os.environ.get("HOME", "/nonexistent"))
    report: dict[str, object] = {
        "home": str(home),
        "home_tree": sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()),
        "probes": {p: os.path.exists(p) for p in re.findall(r"^FAKE_PROBE: (\S+)", prompt, re.M)},
        "writes": {},
        "connects": {},
    }
    for path in re.findall(r"^FAKE_WRITE: (\S+)", prompt, re.M):
        try:
            Path(path).write_text("written by the fake agent\n")
            report["writes"][path] = "ok"  # type: ignore[index]
        except OSError as e:
            report["writes"][path] = type(e).__name__  # type: ignore[index]
    for target in re.findall(r"^FAKE_CONNECT: (\S+)", prompt, re.M):
        host, port = target.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=2).close()
            report["connects"][target] = "ok"  # type: ignore[index]
        except OSError as e:
            report["connects"][target] = type(e).__name__  # type: ignore[index]
    return report


def emit(event: dict[str, object]) -> None:
    """One JSON event on stdout, as the CLIs stream them."""
    print(json.dumps(event), flush=True)


def main(argv: list[str]) -> int:
    """Act as ``argv[0]`` (codex or claude); the exit code."""
    kind, args = argv[0], argv[1:]
    prompt = sys.stdin.read()
    Path("agent-report.json").write_text(json.dumps(observe(prompt), indent=1))
    words = len(prompt.split())
    final = f"Done: wrote agent-report.json ({words} prompt words)."
    if kind == "codex":
        out = Path(args[args.index("--output-last-message") + 1])
        emit({"type": "thread.started", "thread_id": "fake"})
        for turn in (1, 2):
            emit({"type": "turn.started"})
            usage = {"input_tokens": words * turn, "cached_input_tokens": 0, "output_tokens": 5}
            emit({"type": "turn.completed", "usage": usage})
        emit({"type": "item.completed", "item": {"type": "agent_message", "text": final}})
        out.write_text(final)
    else:
        emit({"type": "system", "subtype": "init", "cwd": os.getcwd()})
        message = {"content": [{"type": "text", "text": final}]}
        message["usage"] = {"input_tokens": words, "output_tokens": 5}
        emit({"type": "assistant", "message": message})
        usage = {"input_tokens": words + 100, "output_tokens": 9}
        emit({"type": "result", "subtype": "success", "result": final, "usage": usage})
    if re.search(r"^FAKE_AGENT: hang-after-final", prompt, re.M):
        time.sleep(60)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
