"""A faulty or dead LLM endpoint (issue 30 §2 and §7): a reply the client refuses is never
cached, so a resume against a healthy server asks again for exactly what failed."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_helpers import locomo_cli, small_locomo
from conftest import invoke_cli
from faultproxy import FaultProxy

from mnemometer.log import read_header, read_items
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


def _errors(run: Path) -> list[str]:
    return [r.step or r.item_id for r in read_items(run) if r.status != "ok"]


def test_a_faulty_proxy_then_a_healthy_server_the_resume_asks_again_for_what_failed(
    tmp_path: Path,
) -> None:
    data = small_locomo(tmp_path / "locomo.json")  # 3 conversations x 10 questions
    run = tmp_path / "run"
    with (
        FakeLLMServer(default=benchmark_reply) as srv,
        FaultProxy(srv.base_url, share=0.1, faults=("empty", "nomessage"), seed=3) as proxy,
    ):
        first = invoke_cli(*locomo_cli(data, proxy.url + "/v1", run))
        assert first.exit_code == 1, first.output
        failed = _errors(run)
        assert proxy.faulted and len(failed) == proxy.faulted  # each refused reply: one question
        asked = len(srv.chat_requests())
        proxy.share = 0.0  # the proxy is fixed; the run resumes against a healthy server
        endpoint = ["--llm-base-url", proxy.url + "/v1", "--llm-model", srv.model]
        again = invoke_cli("run", "--resume", run, *endpoint, "--format", "none")
        assert again.exit_code == 0, again.output
        # Only what failed is asked again: every other reply comes from the cache.
        assert len(srv.chat_requests()) - asked == len(failed)
    items = read_items(run)
    assert len(items) == 30 and all(r.status == "ok" and r.output for r in items)


def test_a_dead_llm_endpoint_stops_the_run_and_a_resume_finishes_it(tmp_path: Path) -> None:
    """Issue 30 §7: the LLM server dies after five answers of a LoCoMo run (4 conversations x
    3 questions). The run stops asking it after a few connection failures, says so in one
    line, exits 75, records the rest as not attempted, and a resume finishes the run."""
    data = small_locomo(tmp_path / "locomo.json", conversations=4, questions=3)
    run = tmp_path / "run"
    answered = []

    def reader(body: dict) -> str:
        answered.append(1)
        if len(answered) == 5:  # this answer gets out; every request after it is reset
            proxy.down = True
        return benchmark_reply(body)

    with FakeLLMServer(default=reader) as srv, FaultProxy(srv.base_url) as proxy:
        r = invoke_cli(*locomo_cli(data, proxy.url + "/v1", run))
        assert r.exit_code == 75, r.output
        stops = [ln for ln in r.output.splitlines() if ln.startswith("stopped: ")]
        assert len(stops) == 1 and f"{proxy.url}/v1 is down (5 connection failures" in stops[0]
        assert proxy.counts["down"] == 5  # asked no more after the verdict: counted, not timed
        header = read_header(run)
        summary = json.loads((run / "summary.json").read_text())
        items = read_items(run)
        # The first conversation finished; the second met the dead server; two never began.
        assert header.status == "running" and any(n.startswith("stopped: ") for n in header.notes)
        assert {r.item_id for r in items} == {"conv-26"} and all(r.status == "ok" for r in items)
        assert summary["counts"]["not_attempted"] == 3
        assert summary["counts"].get("errors", 0) == 0 and "3 of 4 items not attempted" in stops[0]
        proxy.down = False  # the server is back
        endpoint = ["--llm-base-url", proxy.url + "/v1", "--llm-model", srv.model]
        again = invoke_cli("run", "--resume", run, *endpoint, "--format", "none")
        assert again.exit_code == 0, again.output
        assert len(srv.chat_requests()) == 12  # each question answered once, none twice
    items = read_items(run)
    assert len(items) == 12 and all(r.status == "ok" and r.output for r in items)
    header = read_header(run)
    assert header.status == "finished" and not any("stopped" in n for n in header.notes)
