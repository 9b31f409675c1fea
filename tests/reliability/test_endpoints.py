"""A faulty or dead LLM endpoint (issue 30 §2 and §7): a reply the client refuses is never
cached, so a resume against a healthy server asks again for exactly what failed."""

from __future__ import annotations

from pathlib import Path

from benchmark_helpers import locomo_cli, small_locomo
from conftest import invoke_cli
from faultproxy import FaultProxy

from mnemometer.log import read_items
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
