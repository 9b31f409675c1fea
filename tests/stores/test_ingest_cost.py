"""What a memory costs to store: the metering relay, the ledger, the report table, LLM context.

Fast and extra-free: the relay and ledger run against the real test LLM server; a small
in-process store with the ``ingest_costs`` capability stands in for Graphiti and friends
in a real retrieval run (the real systems are in test_extracting_stores.py).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from conftest import invoke_cli
from netguard import loopback_only

import mnemometer
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMSettings
from mnemometer.stores import IngestCost, capabilities, create_store, register_store
from mnemometer.stores import unregister_store as unregister
from mnemometer.stores._extracting import Ledger, llm_settings, reference_time
from mnemometer.stores._llm_relay import LLMRelay
from mnemometer.suites._ingest import IngestTally
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._extraction import extraction_llm, text_entities


def _chat(url: str, text: str, **extra: Any) -> httpx.Response:
    body = {"model": "fake-llm", "messages": [{"role": "user", "content": text}], **extra}
    return httpx.post(f"{url}/chat/completions", json=body, timeout=10)


def test_relay_forwards_and_counts_calls_tokens_and_failures() -> None:
    with FakeLLMServer(default="Hello there") as llm:
        relay = LLMRelay(llm.base_url)
        try:
            before = relay.snapshot()
            r = _chat(relay.base_url, "hi")
            assert (
                r.status_code == 200
                and r.json()["choices"][0]["message"]["content"] == "Hello there"
            )
            llm.fail_next(1, status=500)
            assert _chat(relay.base_url, "again").status_code == 500
            streamed = _chat(
                relay.base_url, "s", stream=True, stream_options={"include_usage": True}
            )
            assert "data: [DONE]" in streamed.text
            used = relay.snapshot() - before
            assert used.llm_calls == 3 and used.failed_calls == 1
            assert used.prompt_tokens == 2 and used.completion_tokens == 4  # JSON + SSE usage
            assert len(llm.chat_requests()) == 3  # forwarded, never retried by the relay
            models = httpx.get(f"{relay.base_url}/models", timeout=10).json()
            assert models["data"][0]["id"] == "fake-llm"
        finally:
            relay.close()


def test_relay_answers_embeddings_locally_and_reports_an_unreachable_endpoint() -> None:
    relay = LLMRelay("http://127.0.0.1:9/v1", embed=lambda texts: [[1.0, 0.0]] * len(texts))
    try:
        out = httpx.post(
            f"{relay.base_url}/embeddings", json={"model": "m", "input": ["a", "b"]}, timeout=10
        ).json()
        assert [d["embedding"] for d in out["data"]] == [[1.0, 0.0], [1.0, 0.0]]
        assert _chat(relay.base_url, "x").status_code == 502
        snap = relay.snapshot()
        assert (snap.embed_calls, snap.unreachable, snap.llm_calls) == (1, 1, 1)
        ledger = Ledger(relay, "sys", "http://127.0.0.1:9/v1")

        def call() -> int:
            _chat(relay.base_url, "y").raise_for_status()
            return 1

        with pytest.raises(MnemometerError, match="cannot reach the LLM at http://127.0.0.1:9"):
            ledger.run(["m1"], call)
    finally:
        relay.close()


def test_ledger_records_a_failed_memory_and_goes_on() -> None:
    with FakeLLMServer(rules=[("CORRUPT", "{not json")], default="{}") as llm:
        relay = LLMRelay(llm.base_url)
        ledger = Ledger(relay, "sys", llm.base_url)

        def ingest(text: str) -> int:
            return len(
                json.loads(_chat(relay.base_url, text).json()["choices"][0]["message"]["content"])
            )

        ok1, _ = ledger.run(["m1"], lambda: ingest("fine"))
        ok2, bad = ledger.run(["m2"], lambda: ingest("CORRUPT reply"))
        relay.close()
    assert ok1 and not ok2
    assert bad.error is not None and bad.error.startswith("JSONDecodeError")
    assert bad.llm_calls == 1 and bad.memory_ids == ("m2",)
    assert [c.extracted for c in ledger.costs()] == [0, None]


def test_llm_settings_prefer_store_options_over_the_run_then_name_the_flags(monkeypatch) -> None:
    run = LLMSettings(base_url="http://127.0.0.1:1/v1", model="run-model")
    s = llm_settings(run, None, "mine", None, "the x store")
    assert (s.base_url, s.model) == ("http://127.0.0.1:1/v1", "mine")
    with pytest.raises(MnemometerError, match="--llm-base-url.*-S base_url="):
        llm_settings(None, None, None, None, "the x store")
    assert reference_time("2024-03-01T10:00:00").tzinfo is not None


class _Costed:
    """A store that 'extracts' one item per memory and fails on texts containing FAIL."""

    abstains = False

    def __init__(self, llm: Any = None, empty: bool = False, llm_model: str | None = None) -> None:
        self.llm = llm
        self.empty = empty
        self.docs: dict[str, str] = {}
        self.costs: list[IngestCost] = []

    def reset(self) -> None:
        self.docs.clear()
        self.costs.clear()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        mid = metadata["memory_id"]
        if "FAIL" in text:
            self.costs.append(IngestCost((mid,), 0.01, 2, 10, 0, 0.005, None, "ValueError: bad"))
            return
        self.docs[mid] = text
        self.costs.append(IngestCost((mid,), 0.02, 3, 90, 10, 0.01, 0 if self.empty else 1))

    def search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        if self.empty:
            return []
        words = set(query.lower().split())
        ranked = sorted(self.docs, key=lambda m: -len(words & set(self.docs[m].lower().split())))
        return [{"memory_id": m, "score": 1.0 / (i + 1)} for i, m in enumerate(ranked[:top_k])]

    def ingest_costs(self) -> list[IngestCost]:
        return list(self.costs)


def _dataset(texts: list[str]) -> Any:
    from mnemometer.datasets._models import Dataset

    return Dataset.model_validate(
        {
            "info": {"name": "tiny", "language": "en"},
            "memories": [{"id": f"m{i}", "text": t} for i, t in enumerate(texts)],
            "queries": [{"id": "q0", "text": "beagle Biscuit", "relevant_ids": ["m0"]}],
        }
    )


def test_run_reports_cost_per_memory_failures_and_an_empty_extraction(tmp_path) -> None:
    run_llm = LLMSettings(base_url="http://127.0.0.1:1/v1", model="run-model")
    register_store("costed-test", _Costed)
    try:
        store = create_store("costed-test", llm=run_llm)
        assert store.llm is run_llm  # offered as context to factories that take `llm`
        assert "ingest_costs" in capabilities(store)
        data = _dataset(["Alice adopted a beagle named Biscuit", "FAIL here", "Bob likes tea"])
        res = mnemometer.run("retrieval", "costed-test", dataset=data, out=tmp_path / "r")
        table = res.summary.table("ingest")
        row = table.data[0]
        assert row["memories"] == 3 and row["failed"] == 1
        assert row["llm_calls_per_memory"] == pytest.approx(8 / 3)
        assert row["tokens_per_memory"] == pytest.approx(210 / 3)
        assert row["extracted"] == 2
        assert res.summary.counts["ingest_failures"] == 1
        assert any("1 of 3 memories failed to ingest" in n for n in res.summary.notes)
        lines = (tmp_path / "r" / "ingest.jsonl").read_text().splitlines()
        assert len(lines) == 3 and json.loads(lines[1])["error"] == "ValueError: bad"
        assert json.loads(lines[1])["memory_ids"] == ["m1"]  # the dataset's id, not the store's
        from mnemometer.report import report

        md = report(tmp_path / "r", fmt="md")
        assert "What a memory cost to store" in md

        empty = mnemometer.run(
            "retrieval",
            mnemometer.SystemSpec.store("costed-test", empty=True),
            dataset=_dataset(["a b", "c d"]),
            out=tmp_path / "e",
        )
        assert any("extracted nothing from the whole dataset" in n for n in empty.summary.notes)
    finally:
        unregister("costed-test")


def test_storing_cost_reaches_the_summary_and_the_leaderboard_priced(tmp_path) -> None:
    """$ per memory is the metered tokens times the pinned price; the board shows each figure."""
    from mnemometer.report import leaderboard, render
    from mnemometer.runner import RunSettings

    prices = tmp_path / "prices.toml"
    prices.write_text('[models."ext-model"]\ninput_per_million = 1\noutput_per_million = 2\n')
    register_store("costed-test", _Costed)
    try:
        res = mnemometer.run(
            "retrieval",
            mnemometer.SystemSpec.store("costed-test", llm_model="ext-model"),
            dataset=_dataset(
                ["Alice adopted a beagle named Biscuit", "FAIL here", "Bob likes tea"]
            ),
            out=tmp_path / "runs" / "r",
            settings=RunSettings(prices=prices),
        )
    finally:
        unregister("costed-test")
    cost = res.summary.cost
    assert res.header.cost.roles == {"ingest": "ext-model"}
    (ingest,) = cost.roles
    assert (ingest.prompt_tokens, ingest.completion_tokens) == (190, 20)  # 2 x 90 + 10; 2 x 10
    assert cost.per_memory == pytest.approx((190 * 1e-6 + 20 * 2e-6) / 3)
    board = leaderboard([tmp_path / "runs"])
    c = next(iter(board.rows[0].cells.values())).costs
    assert c.ingest_llm_calls == pytest.approx(8 / 3) and c.ingest_tokens == pytest.approx(70)
    assert c.usd_per_correct == pytest.approx(cost.per_correct) and cost.per_correct > 0
    assert "| 2.67 | 70 |" in render(board, "md")


def test_stores_without_the_capability_report_seconds_only(tmp_path) -> None:
    res = mnemometer.run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "b")
    row = res.summary.table("ingest").data[0]
    assert row["memories"] == 24 and row["seconds_per_memory"] > 0
    assert row["llm_calls_per_memory"] is None and "ingest_failures" not in res.summary.counts
    assert "not metered" in res.summary.table("ingest").rows[0]


def test_ingest_tally_without_runs_is_empty() -> None:
    t = IngestTally()
    assert t.row()["memories"] == 0 and t.notes() == [] and t.counts() == {"memories_stored": 0}


def test_extraction_stand_in_reads_the_text_not_the_prompt() -> None:
    assert text_entities("[2024-03-01] Alice: I adopted a beagle named Biscuit.") == [
        "Alice",
        "Biscuit",
    ]
    assert len(text_entities("张伟在杭州西湖边的茶馆买了两斤龙井茶。")) == 2
    schema = {
        "title": "ExtractedEntities",
        "type": "object",
        "properties": {"extracted_entities": {"type": "array", "items": {"type": "object"}}},
        "required": ["extracted_entities"],
    }
    prompt = (
        "<EXAMPLE>Message: Nate: I love my Mustang</EXAMPLE>\n<CURRENT MESSAGE>\n"
        "Bob: Carol moved to Lisbon.\n</CURRENT MESSAGE>"
    )
    with extraction_llm() as llm, loopback_only() as attempts:
        body = {
            "model": "fake-llm",
            "messages": [{"role": "user", "content": prompt}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "ExtractedEntities", "schema": schema},
            },
        }
        r = httpx.post(f"{llm.base_url}/chat/completions", json=body, timeout=10)
    names = [
        e["name"]
        for e in json.loads(r.json()["choices"][0]["message"]["content"])["extracted_entities"]
    ]
    assert names == ["Bob", "Carol", "Lisbon"] and attempts == []


def test_netguard_refuses_connections_off_loopback() -> None:
    import socket

    with loopback_only() as attempts:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with pytest.raises(OSError, match="netguard"):
            sock.connect(("192.0.2.1", 80))
        sock.close()
        with pytest.raises(OSError):
            socket.getaddrinfo("example.com", 80)
        with FakeLLMServer() as llm:  # loopback stays open
            assert httpx.get(f"{llm.base_url}/models", timeout=10).status_code == 200
    assert attempts == ["connect ('192.0.2.1', 80)", "dns example.com"]


@pytest.mark.parametrize("name", ["graphiti", "langmem", "cognee"])
def test_a_missing_extra_names_the_install_command_before_the_run(name, monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    module = {"graphiti": "graphiti_core", "langmem": "langmem", "cognee": "cognee"}[name]
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda m, *a: None if m == module else real(m, *a)
    )
    with pytest.raises(MnemometerError, match=rf"pip install 'mnemometer\[{name}\]'"):
        create_store(name, {"base_url": "http://127.0.0.1:1/v1", "llm_model": "m"})
    cli = invoke_cli("run", "retrieval", "-d", "demo-en", "--store", name)
    assert cli.exit_code == 2 and f"pip install 'mnemometer[{name}]'" in cli.output


def test_the_command_line_server_extracts_in_extraction_mode() -> None:
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "mnemometer.testing", "--mode", "extraction", "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = line.split(" at ")[1].strip()
        body = {
            "model": "fake-llm",
            "messages": [{"role": "user", "content": "Alice: I adopted a beagle."}],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "Memory",
                        "parameters": {
                            "type": "object",
                            "properties": {"content": {"type": "string"}},
                        },
                    },
                }
            ],
            "tool_choice": "required",
        }
        r = httpx.post(f"{url}/chat/completions", json=body, timeout=10).json()
        call = r["choices"][0]["message"]["tool_calls"][0]["function"]
        assert call["name"] == "Memory" and "beagle" in json.loads(call["arguments"])["content"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
