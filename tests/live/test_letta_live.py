"""Letta 0.16 live: the agent (both agent types), memory-block edits scripted through the
test LLM's tool rules, recall after a session break, the scenarios suite through the CLI
and the Python API, and archival memory as a store (conformance kit, retrieval suite)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mnemometer import RunSettings, SystemSpec
from mnemometer.agents import create_agent_factory
from mnemometer.log import read_header, read_items
from mnemometer.runner import run
from mnemometer.stores import create_store
from mnemometer.testing import ToolCall, ToolRule, check_store, memory_block
from mnemometer.testing.llm_server import last_user_message

pytestmark = pytest.mark.live
MNEMOMETER = str(Path(sys.executable).with_name("mnemometer"))
QUESTION = "What is my name and city?"


def user_messages(body):
    """What the user said in one LLM request (Letta's injected events left out)."""
    from mnemometer.testing._tools import is_event

    return [
        m["content"]
        for m in body["messages"]
        if m["role"] == "user" and not is_event(m.get("content"))
    ]


@pytest.mark.parametrize(
    ("agent_type", "stream"),
    [("letta_v1_agent", False), ("memgpt_v2_agent", True)],
)
def test_memory_edits_survive_a_session_break(letta, llm, agent_type, stream):
    insert = {"label": "human", "new_string": "Name: Darrin Smith. City: Phoenix."}
    replace = {"label": "human", "old_string": "Phoenix", "new_string": "Tucson"}
    llm.tool_rules[:0] = [  # before the default remember()
        ToolRule("my name is", [ToolCall("memory_insert", insert)]),
        ToolRule("moved to", [ToolCall("memory_replace", replace)]),
    ]
    factory = create_agent_factory(
        "letta", {"base_url": letta.url, "agent_type": agent_type, "stream": stream}
    )
    assert factory.resolved_options()["model"] == "openai-proxy/fake-llm"
    agent = factory.create("recall")
    fresh = factory.create("fresh")
    try:
        agent.start_session(None)
        assert agent.send("My name is Darrin Smith and I live in Phoenix.").text == "Noted."
        assert agent.send("I moved to Tucson last week.").text == "Noted."
        block = agent.memory("human")
        assert "Name: Darrin Smith. City: Tucson." in block and "Phoenix" not in block
        agent.start_session(None)  # the history is gone; the block stays
        reply = agent.send(QUESTION)
        asked = [b for b in llm.chat_requests() if last_user_message(b) == QUESTION][-1]
        assert user_messages(asked) == [QUESTION]  # no earlier turn reached the model
        assert "City: Tucson." in memory_block(asked)
        assert reply.text == "Name: Darrin Smith. City: Tucson."  # read from the block
        assert reply.tokens["prompt"] > 0 and reply.llm_ms > 0
        fresh.start_session(None)
        assert fresh.send(QUESTION).text == "I don't know."  # no memory, no recall
    finally:
        agent.close()
        fresh.close()
        factory.close()
    made = llm.tool_calls()
    assert any(n == "memory_insert" and insert.items() <= a.items() for n, a in made)
    assert any(n == "memory_replace" and replace.items() <= a.items() for n, a in made)


def keyed_fact(llm, pattern: str, key: str, question: str) -> None:
    """'<pattern> X' keeps one block line '<key>: X', replacing an older value."""
    said = re.compile(pattern + r"\s+(.+?)\.?$", re.I)

    def value(body):
        return said.search(last_user_message(body)).group(1)

    def line(body):
        return re.search(rf"^{re.escape(key)}: (.*)$", memory_block(body), re.M)

    def replace(body):
        return {
            "label": "human",
            "old_string": line(body).group(0),
            "new_string": f"{key}: {value(body)}",
        }

    def update(body):
        return bool(said.search(last_user_message(body))) and line(body) is not None

    llm.tool_rules[:0] = [
        ToolRule(update, [ToolCall("memory_replace", replace)]),
        ToolRule(
            said,
            [
                ToolCall(
                    "memory_insert",
                    lambda b: {"label": "human", "new_string": f"{key}: {value(b)}"},
                )
            ],
        ),
    ]
    llm.add_rule(question, lambda b: line(b).group(1) if line(b) else "I don't know.")


SCENARIOS = ["cross_session_recall", "temporal_conflict_resolution", "memory_editing_governance"]


def test_scenarios_through_the_cli(letta, llm, tmp_path):
    keyed_fact(llm, r"I work at", "Employer", "where do i work")
    keyed_fact(llm, r"favorite hotel brand is", "Hotel brand", "what brand do i prefer")
    out = tmp_path / "run"
    cmd = [MNEMOMETER, "run", "scenarios", "--agent", "letta", "--letta-url", letta.url]
    cmd += ["-O", "similarity=none", "--out", str(out), "--format", "none", "--concurrency", "3"]
    for s in SCENARIOS:
        cmd += ["--scenario", s]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    header = read_header(out)
    assert header.system.name == "letta"
    assert header.system.options["resolved"]["server_version"] == "0.16.8"
    items = {i.item_id: i for i in read_items(out)}
    assert all(i.status == "ok" for i in items.values())
    replies = {k: i.extra["turns"][-1]["reply"] for k, i in items.items()}
    assert replies["temporal_conflict_resolution"] == "Amazon"  # Microsoft, Google replaced
    assert replies["memory_editing_governance"] == "Choice Hotels"
    assert "Darrin Smith" in replies["cross_session_recall"]  # after a real session break
    accuracy = {
        k: next(m.value for m in i.metrics if m.name == "accuracy") for k, i in items.items()
    }
    assert accuracy["temporal_conflict_resolution"] == 1.0
    assert accuracy["memory_editing_governance"] == 1.0
    made = [name for name, _ in llm.tool_calls()]
    assert made.count("memory_replace") >= 3  # Google, Amazon, Choice Hotels


def test_scenarios_through_the_python_api_memgpt(letta, llm, tmp_path):
    keyed_fact(llm, r"favorite hotel brand is", "Hotel brand", "what brand do i prefer")
    result = run(
        "scenarios",
        SystemSpec.agent("letta", **{"base_url": letta.url, "agent_type": "memgpt_v2_agent"}),
        out=tmp_path / "api",
        suite_options={
            "similarity": "none",
            "scenarios": ["cross_session_recall", "memory_editing_governance"],
        },
        settings=RunSettings(concurrency=2, timeout=300),
    )
    items = {i.item_id: i for i in read_items(tmp_path / "api")}
    assert all(i.status == "ok" for i in items.values()), [i.error for i in items.values()]
    assert items["memory_editing_governance"].extra["turns"][-1]["reply"] == "Choice Hotels"
    assert result.summary.counts["graded_turns"] == 2
    sent = [b for b in llm.chat_requests() if b.get("tool_choice") == "required"]
    assert sent, "memgpt_v2_agent asks for a tool call on every step"


def test_archival_memory_store_conformance(letta):
    store = create_store("letta", {"base_url": letta.url})
    try:
        report = check_store(store)
        assert report.ok, str(report)
        assert {"store_many", "delete", "list_ids"} <= set(report.capabilities)
        store.store(
            "Marta bought blueberries.", {"memory_id": "m1", "timestamp": "2025-05-04T10:00:00"}
        )
        passages = store.client.agents.passages.list(store.agent_id)
        assert sorted(passages[0].tags) == ["date:2025-05-04", "memory_id:m1"]
        assert passages[0].created_at.year == 2025
    finally:
        store.close()


def test_retrieval_suite_on_demo_en_with_the_letta_store(letta, tmp_path):
    out = tmp_path / "retrieval"
    p = subprocess.run(
        [MNEMOMETER, "run", "retrieval", "-d", "demo-en", "--store", "letta"]
        + ["-S", f"base_url={letta.url}", "--out", str(out), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    items = read_items(out)
    assert len(items) == 15 and all(i.status == "ok" for i in items)
    report = json.loads(p.stdout)
    assert report["header"]["system"]["name"] == "letta"
    options = report["header"]["system"]["options"]
    assert options["server_version"] == "0.16.8" and options["embedding"].startswith("openai/")
    overall = {(m["name"], m.get("k")): m["value"] for m in report["summary"]["overall"]}
    assert overall[("hit", 20)] > 0.5  # Letta's vector search over hashed embeddings ranks
    assert report["summary"]["counts"].get("errors", 0) == 0


def test_unmigrated_database_is_refused_before_starting():
    from mnemometer.services._letta_install import LettaInstall
    from mnemometer.services._postgres import Postgres, free_port, workdir

    work = workdir()  # reachable by the Postgres user (pytest's tmp_path is not, as root)
    data = work / "data"
    pg = Postgres(LettaInstall.at().pg_package, work, data, free_port())
    try:
        pg.initdb()
        pg.start()
        pg.psql("CREATE DATABASE letta")  # a database Letta never migrated
        pg.stop()
        p = subprocess.run(
            [MNEMOMETER, "serve", "letta", "--port", "0", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    assert p.returncode == 2 and p.stdout == ""
    assert "is not migrated to letta 0.16.8's schema" in p.stderr and "--migrate" in p.stderr
