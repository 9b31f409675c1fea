"""Ctrl-C on a run: the run directory and the command that continues it, a header that says
``interrupted``, exit 130 (issue 32: it printed "terminate called without an active
exception", exited 134 and left the header at ``running``)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path

import plugins
from conftest import MNEMOMETER

from mnemometer.log import read_header, read_items


def test_ctrl_c_names_the_run_and_its_resume_and_the_header_says_interrupted(tmp_path: Path):
    site = plugins.install(tmp_path / "site")
    # A hang is shown, not just timed out: SIGABRT makes faulthandler print every thread.
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONFAULTHANDLER": "1"}
    fifo = tmp_path / "ready"
    os.mkfifo(fifo)
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [MNEMOMETER, "run", "retrieval", "-d", "demo-en", "-s", "waiting"]
        + ["-S", f"ready={fifo}", "--out", str(out), "--format", "none"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert _said(fifo, proc) == "searching\n"  # the third search began: two items are logged
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        raise AssertionError(f"no exit 60 s after Ctrl-C:\n{proc.communicate()[1]}") from None
    assert proc.returncode == 130, err
    assert (
        f"interrupted: run directory {out}; continue it with `mnemometer run --resume {out}`" in err
    )
    assert "terminate called" not in err and "Traceback" not in err
    assert read_header(out).status == "interrupted"
    assert len(read_items(out)) == 2
    # It resumes like any run (the store's options come from the header: no more waiting).
    header = json.loads((out / "header.json").read_text())
    header["system"]["options"]["ready"] = ""
    (out / "header.json").write_text(json.dumps(header))
    done = subprocess.run(
        [MNEMOMETER, "run", "--resume", str(out), "--format", "none"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert read_header(out).status == "finished" and len(read_items(out)) == 15


def _said(fifo: Path, proc: subprocess.Popen) -> str:
    """What the store writes to ``fifo``; fails (never hangs) if the run ends first."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader that does not wait for a writer
    try:
        while proc.poll() is None:  # woken by the store's write, or every second to check
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready and (data := os.read(fd, 100)):
                return data.decode()
        raise AssertionError(f"the run ended before the search: {proc.communicate()[1]}")
    finally:
        os.close(fd)
