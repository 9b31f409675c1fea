"""Graphiti (embedded Kuzu) and LangMem as stores, against the test LLM server (marked slow).

Each system runs for real, offline; its LLM is :func:`mnemometer.testing.extraction_llm`,
a real HTTP server on 127.0.0.1 that extracts like a literal model (one fact per text).
Checked: the conformance kit; LLM calls per memory (a regression check on what each
system asks); evidence retrieval on a conversation dataset with one store (and one
Graphiti group) per conversation and session dates as reference times; a memory whose
LLM reply is not JSON is recorded and counted; an LLM that extracts nothing gives a
warning; no connection leaves loopback; and the CLI takes the run's --llm-base-url.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import REPO, invoke_cli
from netguard import loopback_only

import mnemometer
from mnemometer.datasets._models import DatasetInfo
from mnemometer.llm import LLMSettings
from mnemometer.stores import create_store
from mnemometer.testing import check_store
from mnemometer.testing._extraction import extraction_llm

pytestmark = pytest.mark.slow

SYSTEMS = {"graphiti": "graphiti_core", "langmem": "langmem"}
# What each system asks its LLM per memory with the stand-in (research: Graphiti 2 minimal,
# 3-5 with content; LangMem 1 tool call).
CALLS = {"graphiti": (3, 6), "langmem": (1, 1)}
MINI = REPO / "tests" / "data" / "longmemeval_mini.json"


def _need(name: str) -> None:
    if importlib.util.find_spec(SYSTEMS[name]) is None:
        pytest.skip(f"needs pip install 'mnemometer[{name}]' (in Makefile TEST_EXTRAS)")


def _make(name: str, llm, workdir: Path, **opts):
    return create_store(
        name, {"base_url": llm.base_url, "llm_model": llm.model, **opts}, workdir=workdir
    )


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_conformance_llm_calls_per_memory_and_loopback_only(name, tmp_path) -> None:
    _need(name)
    with extraction_llm() as llm, loopback_only() as attempts:
        store = _make(name, llm, tmp_path / "store")
        try:
            rep = check_store(store)
            assert rep.ok, str(rep)
            assert {"ingest_costs", "delete", "list_ids"} <= set(rep.capabilities)
            store.reset()
            asked = len(llm.chat_requests())
            for i, text in enumerate(
                ["Alice: I adopted a beagle named Biscuit.", "Bob: Carol moved to Lisbon."]
            ):
                store.store(text, {"memory_id": f"m{i}", "timestamp": "2024-03-01T10:00:00"})
            costs = store.ingest_costs()
            low, high = CALLS[name]
            assert [low <= c.llm_calls <= high for c in costs] == [True, True], costs
            assert all(c.error is None and c.extracted for c in costs)
            assert sum(c.llm_calls for c in costs) == len(llm.chat_requests()) - asked
            hits = store.search("Where did Carol move?", 2)
            assert hits[0].memory_id == "m1"
        finally:
            store.close()
    assert attempts == []
    if name == "graphiti":
        assert any((tmp_path / "store" / "graphiti").iterdir())  # the graph is in the run dir


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_conversations_get_their_own_store_and_evidence_maps_to_turns(name, tmp_path) -> None:
    _need(name)
    with extraction_llm(log_path=tmp_path / "llm.jsonl") as llm, loopback_only() as attempts:
        settings = LLMSettings(base_url=llm.base_url, model=llm.model)
        res = mnemometer.run(
            "retrieval",
            name,
            dataset=str(MINI),
            out=tmp_path / "run",
            settings=mnemometer.RunSettings(llm=settings, concurrency=2),
        )
    assert attempts == []
    s = res.summary
    assert s.counts["errors"] == 0 and s.counts["ingest_failures"] == 0
    assert s.counts["memories_stored"] == 22  # the turns of 4 conversations
    row = s.table("ingest").data[0]
    assert row["llm_calls_per_memory"] >= 1 and row["tokens_per_memory"] > 0
    hit5 = next(m.value for m in s.overall if m.name == "hit" and m.k == 5)
    assert hit5 >= 0.5  # hits map back to evidence turns through provenance
    costs = (tmp_path / "run" / "ingest.jsonl").read_text().splitlines()
    assert len(costs) == 22  # one ingest call per turn, each metered
    # Two conversations filled at once, each metered at its own relay: every chat request
    # the server saw is counted once, at the memory that asked it (searches ask none).
    assert sum(json.loads(c)["llm_calls"] for c in costs) == len(llm.chat_requests())
    if name == "graphiti":
        isolated = sorted(p.name for p in (tmp_path / "run" / "isolated").iterdir())
        assert len(isolated) == 4
        # each conversation's graph in its own directory, the session's date as the
        # episodes' reference time (Graphiti shows it to its LLM)
        assert all(
            any((tmp_path / "run" / "isolated" / d / "graphiti").iterdir()) for d in isolated
        )
        prompts = [json.loads(line)["request"] for line in (tmp_path / "llm.jsonl").open()]
        assert any("2023-05-20" in str(m["content"]) for p in prompts for m in p["messages"])


def test_graphiti_group_is_the_conversations_store_directory(tmp_path) -> None:
    _need("graphiti")
    with extraction_llm() as llm:
        store = _make("graphiti", llm, tmp_path / "conv 7-ab12")
        try:
            assert store.group == "conv_7-ab12"
            assert store.resolved_options()["backend"] == "kuzu"
        finally:
            store.close()


@pytest.mark.parametrize("name", ["graphiti"])  # LangMem's reply is a tool call: below
def test_a_memory_whose_llm_reply_is_not_json_is_recorded_and_counted(name, tmp_path) -> None:
    _need(name)
    rules = [("CORRUPT", "{this is not json")]
    texts = [
        "Alice: I adopted a beagle named Biscuit.",
        "Bob: CORRUPT Carol moved to Lisbon.",
        "Dana: Evan plays the Cello in Oslo.",
    ]
    data = mnemometer.Dataset(
        info=DatasetInfo(name="corrupt", language="en"),
        memories=[mnemometer.Memory(id=f"m{i}", text=t) for i, t in enumerate(texts)],
        queries=[mnemometer.Query(id="q0", text="Who is Biscuit?", relevant_ids=["m0"])],
    )
    with extraction_llm(rules=rules) as llm:
        res = mnemometer.run(
            "retrieval",
            mnemometer.SystemSpec.store(name, base_url=llm.base_url, llm_model=llm.model),
            dataset=data,
            out=tmp_path / "run",
        )
    s = res.summary
    assert s.counts["ingest_failures"] == 1 and s.table("ingest").data[0]["failed"] == 1
    assert any("1 of 3 memories failed to ingest" in n and "m1" in n for n in s.notes)
    costs = [json.loads(x) for x in (tmp_path / "run" / "ingest.jsonl").read_text().splitlines()]
    failed = [c for c in costs if c["error"]]
    assert [c["memory_ids"] for c in failed] == [["m1"]]
    if name == "graphiti":  # its one retry: two attempts at the first extraction
        assert failed[0]["llm_calls"] == 2
    assert s.counts["errors"] == 0  # the other memories are stored and searched


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_an_llm_that_extracts_nothing_gives_a_warning(name, tmp_path) -> None:
    _need(name)
    with extraction_llm(mode="minimal") as llm:
        res = mnemometer.run(
            "retrieval",
            mnemometer.SystemSpec.store(name, base_url=llm.base_url, llm_model=llm.model),
            dataset="demo-en",
            out=tmp_path / "run",
            settings=mnemometer.RunSettings(concurrency=2),
        )
    assert any("extracted nothing from the whole dataset" in n for n in res.summary.notes)
    assert res.summary.counts["ingest_failures"] == 0


def test_cli_takes_the_runs_llm_and_names_the_flags_without_one(tmp_path) -> None:
    _need("langmem")
    bad = invoke_cli("run", "retrieval", "-d", "demo-en", "--store", "langmem")
    assert bad.exit_code == 2 and "--llm-base-url" in bad.output
    with extraction_llm() as llm:
        out = tmp_path / "run"
        flags = ["--llm-base-url", llm.base_url, "--llm-model", llm.model]
        ok = invoke_cli(
            "run", "retrieval", "-d", "demo-en", "--store", "langmem", *flags, "--out", out
        )
        assert ok.exit_code == 0, ok.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["counts"]["memories_stored"] == 24
        assert len(llm.chat_requests()) == 24  # one tool call per memory
        chk = invoke_cli("check-store", "langmem", *flags)
        assert chk.exit_code == 0, chk.output


def test_a_langmem_memory_whose_llm_call_fails_is_recorded_and_the_rest_stored(tmp_path) -> None:
    _need("langmem")
    with extraction_llm() as llm:
        store = _make("langmem", llm, tmp_path / "store")
        try:
            store.reset()
            store.store("Alice: I adopted a beagle named Biscuit.", {"memory_id": "m0"})
            # LangMem retries a reply it cannot read (three calls got through a run of
            # two); a run of bad replies longer than its retries fails the memory
            llm.fail_next(50, kind="malformed")
            store.store("Bob: Carol moved to Lisbon.", {"memory_id": "m1"})
            costs = store.ingest_costs()
            assert [c.error is not None for c in costs] == [False, True], costs
            assert costs[1].llm_calls >= 2 and costs[1].memory_ids == ("m1",)
            assert store.list_ids() == ["m0"]
            assert store.search("Who adopted a beagle?", 1)[0].memory_id == "m0"
        finally:
            store.close()


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_a_providers_model_is_asked_in_its_protocol_through_the_relay(name, tmp_path) -> None:
    """``--llm-model anthropic/...`` (the [providers] extra): the system speaks OpenAI to the
    relay, the relay answers through LiteLLM in Anthropic's Messages protocol (Graphiti's
    schemas as ``output_format``, LangMem's tool call as a ``tool_use`` block), and the
    ingest costs count the provider's calls and tokens."""
    _need(name)
    if importlib.util.find_spec("litellm") is None:
        pytest.skip("needs pip install 'mnemometer[providers]' (in Makefile TEST_EXTRAS)")
    from mnemometer.testing import AnthropicServer

    key = "sk-ant-test-0123456789abcdef"
    llm = extraction_llm(server=AnthropicServer, models=["claude-haiku-4-5"], api_key=key)
    with llm, loopback_only() as attempts:
        opts = {"base_url": llm.url, "llm_model": "anthropic/claude-haiku-4-5", "api_key": key}
        store = create_store(name, opts, workdir=tmp_path / "store")
        try:
            store.store("Bob: Carol moved to Lisbon.", {"memory_id": "m1"})
            (cost,) = store.ingest_costs()
            assert cost.error is None and cost.extracted, cost
            low, high = CALLS[name]
            assert low <= cost.llm_calls == len(llm.requests) <= high  # each a /v1/messages
            assert set(llm.paths) == {"/v1/messages"}
            usage = [e["response"]["usage"] for e in llm.log if e["status"] == 200]
            assert cost.prompt_tokens == sum(u["input_tokens"] for u in usage)
            assert store.search("Where did Carol move?", 1)[0].memory_id == "m1"
        finally:
            store.close()
    assert attempts == []
