"""One writer per run or experiment directory; a lock left by a killed writer is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import plugins
import pytest
from conftest import MNEMOMETER

from mnemometer import run
from mnemometer.errors import MnemometerError, RunLogError
from mnemometer.log import read_header, read_items
from mnemometer.log._lock import LOCK_FILE, DirectoryLocked, DirLock, holder


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOMETER_")}
    env["PYTHONPATH"] = str(plugins.install(tmp / "plug"))
    return env


def _wait_for(cond, proc: subprocess.Popen, limit: float = 120) -> None:
    end = time.monotonic() + limit
    while not cond():
        assert proc.poll() is None, "the run ended before the test could catch it"
        assert time.monotonic() < end, "timed out waiting for the run"
        time.sleep(0.005)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_second_writer_is_refused_naming_the_holder_and_a_dead_ones_lock_is_taken_over(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    out = tmp_path / "r"
    cmd = [MNEMOMETER, "run", "retrieval", "-d", "demo-en", "-s", "slow", "-S", "delay=3"]
    first = subprocess.Popen(
        [*cmd, "--out", str(out), "--format", "none"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: _lines(out / "items.jsonl") >= 1, first)
        lock = json.loads((out / LOCK_FILE).read_text())
        assert lock["pid"] == first.pid and lock["host"] == socket.gethostname()
        for second in (
            [MNEMOMETER, "run", "--resume", str(out)],
            [*cmd, "--out", str(out)],
            [MNEMOMETER, "log", "summarize", str(out)],
        ):
            res = subprocess.run(second, env=env, capture_output=True, text=True)
            assert res.returncode == 2, res.stderr
            assert f"pid {first.pid} on {socket.gethostname()}" in res.stderr, res.stderr
            assert "Traceback" not in res.stderr
        assert holder(out) is not None and first.poll() is None  # the first one goes on
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    # The kill left the lock file behind, naming a process that is gone: stale.
    assert (out / LOCK_FILE).exists() and holder(out) is None
    done = subprocess.run(
        [MNEMOMETER, "run", "--resume", str(out), "--format", "none", "-c", "16"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"took over a stale lock of pid {first.pid}" in done.stderr
    assert read_header(out).status == "finished" and len(read_items(out)) == 15
    assert not (out / LOCK_FILE).exists()


def test_a_second_experiment_writer_is_refused(tmp_path: Path) -> None:
    env = _env(tmp_path)
    conditions = tmp_path / "c.toml"
    conditions.write_text('[slow]\nstore = "slow"\noptions = { delay = 1 }\n')
    out = tmp_path / "exp"
    suite = Path(__file__).resolve().parents[2] / "examples" / "suites" / "team-memory"
    first = subprocess.Popen(
        [MNEMOMETER, "run", str(suite), "--conditions", str(conditions), "--condition", "slow"]
        + ["--out", str(out), "--format", "none"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: _lines(out / "slow-r0" / "items.jsonl") >= 1, first)
        res = subprocess.run(
            [MNEMOMETER, "run", "--resume", str(out)], env=env, capture_output=True, text=True
        )
        assert res.returncode == 2 and f"pid {first.pid}" in res.stderr, res.stderr
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()


def test_the_lock_in_process(tmp_path: Path) -> None:
    with DirLock(tmp_path) as lock:
        assert f"pid {os.getpid()}" in (holder(tmp_path) or "")
        with lock:  # re-entrant
            pass
        assert (tmp_path / LOCK_FILE).exists()
        with pytest.raises(DirectoryLocked, match=f"pid {os.getpid()}"):
            DirLock(tmp_path).acquire()
        with pytest.raises(RunLogError, match="is being written by"):
            run("retrieval", "bm25", dataset="demo-en", out=tmp_path)
    assert not (tmp_path / LOCK_FILE).exists() and holder(tmp_path) is None


def test_a_run_killed_before_its_header_starts_again(tmp_path: Path) -> None:
    # What a kill while the store loaded leaves: a stale lock and the store's files.
    out = tmp_path / "r"
    (out / "store").mkdir(parents=True)
    (out / "store" / "index.bin").write_bytes(b"half")
    (out / LOCK_FILE).write_text(json.dumps({"pid": 999999, "host": "elsewhere"}))
    res = subprocess.run([MNEMOMETER, "run", "--resume", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and "killed before it started" in res.stderr, res.stderr
    again = run("retrieval", "bm25", dataset="demo-en", out=out)
    assert again.header.status == "finished" and not (out / "store" / "index.bin").exists()
    # Anything else in the directory is the user's: refused, not deleted.
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    (other / LOCK_FILE).write_text("{}")
    with pytest.raises(MnemometerError, match="already exists and is not empty"):
        run("retrieval", "bm25", dataset="demo-en", out=other)
    assert (other / "notes.txt").exists()


@pytest.mark.slow
def test_a_second_sweep_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    env = _env(tmp_path)
    spec = tmp_path / "sweep.toml"
    spec.write_text(
        'suite = "retrieval"\n\n[[systems]]\nstore = "slow"\noptions = { delay = 1 }\n\n'
        '[[datasets]]\npath = "demo-en"\n'
    )
    out = tmp_path / "sw"
    cmd = [MNEMOMETER, "sweep", str(spec), "--out", str(out), "--format", "none"]
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: any(_lines(p) >= 1 for p in out.glob("*/*/items.jsonl")), first)
        res = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert res.returncode == 2, res.stderr
        assert f"{out}: is being written by pid {first.pid}" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr and first.poll() is None
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
