"""A LongMemEval run SIGKILLed mid-question resumes per question (its own conversation).

LoCoMo's kill test is in ``tests/suites/test_benchmark_runs.py``. Here the LLM server holds every
reply about the third question until the run is killed, so the kill lands while that
question is asked, with the first two logged; no sleeping for a guessed time.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import MNEMOMETER, REPO

from mnemometer.log import read_log
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply

MINI = REPO / "tests" / "data" / "longmemeval_mini.json"
HELD = "houseplants"  # the third question's subject
FINISHED = ("paint my bike", "dentist visit")


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _key(run_dir: Path) -> list[tuple]:
    return [
        (
            r.step,
            r.output,
            r.success,
            [(m.key, m.value) for m in r.metrics if "latency" not in m.name],
        )
        for r in read_log(run_dir).items
    ]


@pytest.mark.slow
def test_longmemeval_resumes_per_question_after_sigkill(tmp_path: Path) -> None:
    held = threading.Event()
    release = threading.Event()
    armed = [True]

    def reply(body: dict[str, Any]) -> Any:
        if armed[0] and HELD in json.dumps(body):
            held.set()
            release.wait(60)
        return benchmark_reply(body)

    with FakeLLMServer(default=reply) as srv:
        args = [MNEMOMETER, "run", "longmemeval", "--dataset", str(MINI), "--store", "bm25"]
        args += ["--judge", "longmemeval", "-c", "1", "--format", "none"]
        args += ["--llm-base-url", srv.base_url, "--llm-model", srv.model]
        killed = tmp_path / "killed"
        proc = subprocess.Popen([*args, "--out", str(killed)], stderr=subprocess.DEVNULL)
        assert held.wait(120), "the run never reached the third question"
        end = time.monotonic() + 30
        while _lines(killed / "items.jsonl") < 2:  # the second question's line is on its way
            assert time.monotonic() < end and proc.poll() is None
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        armed[0] = False
        release.set()
        assert _lines(killed / "items.jsonl") == 2
        before = len(srv.chat_requests())
        r = subprocess.run(
            [MNEMOMETER, "run", "--resume", str(killed), "--format", "none"]
            + ["--llm-base-url", srv.base_url, "--llm-model", srv.model],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        asked = json.dumps(srv.chat_requests()[before:])
        assert HELD in asked
        assert not [q for q in FINISHED if q in asked], "a finished question was asked again"
        whole = tmp_path / "whole"
        subprocess.run([*args, "--out", str(whole)], check=True, capture_output=True)
    assert _key(killed) == _key(whole) and len(_key(killed)) == 4
    assert read_log(killed).header.resumes == 1
