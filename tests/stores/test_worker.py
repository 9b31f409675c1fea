"""A store's system in a worker process of its own (``stores/_worker.py``, cognee's path).

Fast and extra-free: the worker builds a standard-library object in a real spawned child;
cognee itself in workers is tested in tests/live/test_cognee_live.py (its own venv).
Checked: calls and their results cross the pipe; the object's error, a failure to build
it, a killed child and a closed worker are each one clear error, never a hang; the child
exits when the worker is closed and when its parent is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemometer.errors import MnemometerError
from mnemometer.stores._cognee_engine import BatchedEmbed
from mnemometer.stores._worker import ProcessWorker


def _gone(pid: int, within: float = 60.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie) within ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
        except (FileNotFoundError, IndexError, ProcessLookupError):
            return True
        if state in "ZX":
            return True
        time.sleep(0.05)  # polling an exit the test caused, bounded; not a synchronisation
    return False


def test_calls_run_in_the_child_and_errors_come_back_as_messages() -> None:
    w = ProcessWorker("collections:Counter", {"a": 2}, "counter")
    try:
        assert w.pid != os.getpid()
        w.call("update", ["b", "b", "b"])
        assert w.call("most_common", 1) == [("b", 3)]
        with pytest.raises(MnemometerError, match=r"pop failed: KeyError: 'zz'"):
            w.call("pop", "zz")
        assert w.call("total") == 5  # the error left the object as it was
    finally:
        w.close()
    assert _gone(w.pid)
    with pytest.raises(MnemometerError, match="counter: its worker process was closed"):
        w.call("total")


def test_an_object_that_cannot_be_built_answers_every_call_with_why() -> None:
    w = ProcessWorker("fractions:Fraction", {"nope": 1}, "broken")
    try:
        with pytest.raises(MnemometerError, match="could not start: TypeError"):
            w.call("total")
    finally:
        w.close()
    w = ProcessWorker("mnemometer.no_such_module:Thing", {}, "broken")
    try:
        with pytest.raises(MnemometerError, match="could not start: ModuleNotFoundError"):
            w.call("anything")
    finally:
        w.close()


def test_a_killed_child_is_a_clear_error_not_a_hang() -> None:
    w = ProcessWorker("collections:Counter", {}, "cognee")
    try:
        w.call("update", ["a"])
        os.kill(w.pid, signal.SIGKILL)
        with pytest.raises(MnemometerError, match=r"cognee: its worker process \(pid \d+\) died"):
            w.call("total")
        with pytest.raises(MnemometerError, match="closed"):
            w.call("total")
    finally:
        w.close()


def test_the_child_exits_when_its_parent_is_killed() -> None:
    code = (
        "import os, signal\n"
        "from mnemometer.stores._worker import ProcessWorker\n"
        "w = ProcessWorker('collections:Counter', {}, 't')\n"
        "w.call('total')\n"
        "print(w.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _gone(int(proc.stdout.split()[0]))


def test_batched_embed_embeds_each_distinct_text_once() -> None:
    seen: list[list[str]] = []

    def encode(texts: list[str]) -> list[list[float]]:
        seen.append(list(texts))
        return [[float(len(t)), 1.0] for t in texts]

    embed = BatchedEmbed(encode)
    assert embed(["bb", "a", "bb"]) == [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    assert embed(["a", "ccc"]) == [[1.0, 1.0], [3.0, 1.0]]
    assert seen == [["a", "bb"], ["ccc"]] and embed.model_calls == 2
