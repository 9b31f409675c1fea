"""One Letta stack for these tests, started by `mnemometer serve letta` (marked live).

The test LLM runs in this process, so each test scripts what Letta's model does (tool
calls that edit memory blocks, replies); the stack itself is the real command in a
subprocess, stopped with SIGTERM at the end, and checked for orphans.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mnemometer.testing import memory_llm, recall, remember

MNEMOMETER = str(Path(sys.executable).with_name("mnemometer"))
TIMINGS: dict[str, float] = {}


@dataclass
class Stack:
    url: str
    llm: object
    logs: Path
    pids: list[int] = field(default_factory=list)


def _read_lines(stream, out: queue.Queue) -> None:
    for line in stream:
        out.put(line)
    out.put(None)


@pytest.fixture(scope="session")
def letta_llm():
    """The session's test LLM: keeps the human block and answers from it, by default."""
    with memory_llm() as srv:
        yield srv


@pytest.fixture
def llm(letta_llm):
    """The test LLM with its default behaviour restored after each test."""
    yield letta_llm
    letta_llm.rules.clear()
    letta_llm.tool_rules[:] = [remember("human")]
    letta_llm.default = recall("human")


@pytest.fixture(scope="package")
def letta(letta_llm, tmp_path_factory) -> Stack:
    """`mnemometer serve letta --port 0` against the session's test LLM (stopped after the
    last test of this package, so it does not sit beside the other live groups)."""
    logs = tmp_path_factory.mktemp("letta-logs")
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [MNEMOMETER, "serve", "letta", "--port", "0", "--llm-base-url", letta_llm.base_url]
        + ["--log-dir", str(logs)],
        stdout=subprocess.PIPE,
        stderr=(logs / "serve.err").open("w"),
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
    try:
        url = lines.get(timeout=600)
    except queue.Empty:
        url = None
    if not url:
        proc.terminate()
        proc.wait(60)
        pytest.fail(f"mnemometer serve letta did not come up:\n{(logs / 'serve.err').read_text()}")
    TIMINGS["stack up (s)"] = time.monotonic() - t0
    err = (logs / "serve.err").read_text()
    pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", err)]
    t1 = time.monotonic()
    yield Stack(url.strip(), letta_llm, logs, pids)
    TIMINGS["stack in use by the tests (s)"] = time.monotonic() - t1
    t2 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(90)
    TIMINGS["stack down (s)"] = time.monotonic() - t2
    assert code == 0, (logs / "serve.err").read_text()
    for pid in pids:  # letta and postgres are gone with it: no orphans
        assert not Path(f"/proc/{pid}").exists() or "zombie" in _state(pid), pid


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def pytest_terminal_summary(terminalreporter) -> None:
    if TIMINGS:
        terminalreporter.write_sep("-", "letta stack")
        for name, value in TIMINGS.items():
            terminalreporter.write_line(f"{name}: {value:.1f}")
