"""A timed-out item stops: its abandoned work makes no more calls in the background."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from mnemometer import RunSettings, SystemSpec, deadline, run
from mnemometer.llm import LLMSettings
from mnemometer.log import read_items
from mnemometer.testing import FakeLLMServer


def _join_workers() -> None:
    """Wait for the run's worker threads (a retired one ends when its abandoned call does)."""
    from mnemometer.runner._pool import _Worker

    for t in threading.enumerate():
        if isinstance(t, _Worker):
            t.join(timeout=30)


def test_a_timed_out_scenario_sends_no_more_messages(tmp_path: Path):
    # Every reply takes 0.2 s; the scenario (53 turns) may take 53 x 0.02 s = 1.06 s.
    with FakeLLMServer(default="Noted.") as srv:
        srv.fail_next(100, kind="slow", delay=0.2)
        res = run(
            "scenarios",
            SystemSpec.agent("rag", store="bm25"),
            suite_options={"similarity": "none", "scenarios": ["memory_scalability"]},
            out=tmp_path / "r",
            settings=RunSettings(timeout=0.02, llm=LLMSettings(srv.base_url, srv.model)),
        )
        _join_workers()
        sent = len(srv.chat_requests())
    (item,) = read_items(res.path)
    assert item.status == "timeout" and item.success is False
    # Without deadlines the abandoned thread went on through all 53 turns.
    assert sent <= 8, f"{sent} chat requests after the item timed out"


def test_an_http_call_gets_only_the_time_the_item_has_left():
    d = deadline.Deadline.after(0.5)
    with deadline.bound(d):
        assert deadline.cap(60.0) <= 0.5
        d.cancel()
        with pytest.raises(deadline.Cancelled):
            deadline.check()
    assert deadline.cap(60.0) == 60.0  # outside any item: the call's own timeout
    deadline.check()  # and no deadline to break


def test_a_cancelled_http_request_is_never_sent():
    from mnemometer.http import HttpClient

    body = {"model": "fake-llm", "messages": [{"role": "user", "content": "hi"}]}
    with FakeLLMServer() as srv, HttpClient(srv.base_url) as client:
        d = deadline.Deadline.after(None)
        d.cancel()
        with deadline.bound(d), pytest.raises(deadline.Cancelled):
            client.request_json("POST", "/chat/completions", json=body)
        assert client.request_json("POST", "/chat/completions", json=body)["choices"]
        assert len(srv.chat_requests()) == 1


def test_deadlines_expire_on_their_own():
    d = deadline.Deadline.after(0.05)
    t0 = time.monotonic()
    while not d.cancelled:  # polling a monotonic clock, not synchronising threads
        assert time.monotonic() - t0 < 5
    with pytest.raises(deadline.Cancelled):
        d.check()
