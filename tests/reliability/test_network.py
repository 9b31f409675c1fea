"""Nothing leaves the machine (issue 20 §5).

The whole test session runs under the network guard (``tests/conftest.py``): these tests
check that the guard is really there, in this process and in child processes, and that a
user's run, by the command line or the library, sets every switch that keeps a memory
system's libraries from reporting to their vendors, without overriding the user's own.
"""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import sys
from pathlib import Path

import netguard
import pytest
from conftest import REPO, invoke_cli

import mnemometer
from mnemometer.datasets import load_dataset
from mnemometer.envfile import QUIET

TEST_NET = "192.0.2.1"
"""An address reserved for documentation (RFC 5737): nothing answers there."""


def test_the_session_guard_refuses_and_records_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "attempts.log"
    monkeypatch.setenv(netguard.LOG_VAR, str(log))  # this test's attempts, not the session's
    done: list[str] = []

    def connect_from_a_thread() -> None:  # a telemetry client's own thread
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.connect((TEST_NET, 443))
        except OSError as e:
            done.append(str(e))
        finally:
            sock.close()

    import threading

    t = threading.Thread(target=connect_from_a_thread)
    t.start()
    t.join()
    with pytest.raises(OSError):
        socket.getaddrinfo("telemetry.example.com", 443)
    with pytest.raises(OSError):
        socket.gethostbyname("us.i.posthog.com")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, pytest.raises(OSError):
        udp.sendto(b"x", (TEST_NET, 53))
    assert done and "netguard" in done[0]
    recorded = [line.split("\t")[2] for line in netguard.read_log(log)]
    assert recorded == [
        f"connect ('{TEST_NET}', 443)",
        "dns telemetry.example.com",
        "dns us.i.posthog.com",
        f"connect ('{TEST_NET}', 53)",
    ]
    # Loopback stays open.
    assert socket.getaddrinfo("localhost", 80) and socket.getaddrinfo("127.0.0.1", 80)


def test_a_child_process_is_guarded_too(tmp_path: Path) -> None:
    log = tmp_path / "attempts.log"
    env = {**os.environ, netguard.LOG_VAR: str(log)}
    code = f"import socket; socket.create_connection(({TEST_NET!r}, 443), timeout=5)"
    child = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert child.returncode != 0 and "netguard" in child.stderr
    # create_connection resolves the address first: refused there, before any packet.
    assert [line.split("\t")[2] for line in netguard.read_log(log)] == [f"dns {TEST_NET}"]


def _unset_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in QUIET:
        monkeypatch.delenv(key, raising=False)


def test_a_users_run_sets_every_switch_and_keeps_the_users_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _unset_switches(monkeypatch)
    monkeypatch.setenv("MEM0_TELEMETRY", "True")  # the user opted in: that stays
    result = invoke_cli("run", "--dataset", "demo-en", "--store", "keyword", "--out", "runs/a")
    assert result.exit_code == 0, result.output
    expected = {**QUIET, "MEM0_TELEMETRY": "True"}
    assert {k: os.environ.get(k) for k in QUIET} == expected


def test_a_library_run_sets_every_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    _unset_switches(monkeypatch)
    mnemometer.run("retrieval", store="keyword", dataset=load_dataset("demo-en"), out="runs/b")
    assert {k: os.environ.get(k) for k in QUIET} == QUIET


def test_the_switches_cover_every_library_that_phones_home() -> None:
    # The vendors' own names for "off": a new adapter's library must add its switch here.
    assert {
        "MEM0_TELEMETRY",
        "ANONYMIZED_TELEMETRY",
        "GRAPHITI_TELEMETRY_ENABLED",
        "COGNEE_TELEMETRY_DISABLED",
        "LANGSMITH_TRACING",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "RAY_USAGE_STATS_ENABLED",
        "DO_NOT_TRACK",
    } <= set(QUIET)


_THIRD_PARTY = {
    "mem0",
    "chromadb",
    "qdrant_client",
    "lancedb",
    "graphiti_core",
    "cognee",
    "langmem",
    "langchain_openai",
    "letta_client",
    "sentence_transformers",
    "transformers",
}


def _requires(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "require"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in _THIRD_PARTY
    ]


def test_each_adapter_quiets_its_library_before_importing_it() -> None:
    # Each function that imports a system's library (through ``require``) first calls
    # quiet_libraries(), directly or through embeddings.offline_env() (which calls it).
    missing = []
    for path in sorted((REPO / "src" / "mnemometer").rglob("*.py")):
        text = path.read_text("utf-8")
        if "require(" not in text:
            continue
        tree = ast.parse(text)
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            calls = _requires(fn)
            if not calls:
                continue
            first = min(c.lineno for c in calls)
            quiet = [
                n.lineno
                for n in ast.walk(fn)
                if isinstance(n, ast.Call)
                and getattr(n.func, "id", None) in ("quiet_libraries", "offline_env")
            ]
            if not any(line < first for line in quiet):
                missing.append(f"{path.relative_to(REPO)}:{fn.lineno} {fn.name}")
    assert missing == []
