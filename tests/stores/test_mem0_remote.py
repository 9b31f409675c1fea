"""Mem0 as people deploy it: the hosted platform (MEM0_API_KEY) and the self-hosted REST server
(MEM0_BASE_URL), for the mem0 store and agent, against a local stand-in that speaks the
documented REST shapes (nothing else is reachable here)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import invoke_cli as cli

from mnemometer.agents import create_agent_factory
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMSettings
from mnemometer.log import read_log
from mnemometer.stores.mem0 import Mem0Store
from mnemometer.testing import FakeLLMServer, FakeMem0Server
from mnemometer.testing.llm_server import last_user_message

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mem0") is None, reason="needs the [mem0] extra"
)
KEY = "m0-test-key-1234567890"


@pytest.fixture(autouse=True)
def _no_host_keys(monkeypatch):
    for name in ("MEM0_API_KEY", "MEM0_BASE_URL", "MNEMOMETER_MEM0_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("MNEMOMETER_MEM0_BASE_URL", raising=False)


def _paths(srv: FakeMem0Server) -> list[str]:
    return [f"{m} {p}" for m, p, _ in srv.requests]


@pytest.mark.parametrize("mode", ["platform", "server"])
def test_a_retrieval_run_against_each_deployment(tmp_path, monkeypatch, mode):
    with FakeMem0Server(mode, api_key=KEY) as srv:
        monkeypatch.setenv("MEM0_API_KEY", KEY)
        if mode == "server":
            monkeypatch.setenv("MEM0_BASE_URL", srv.url)
        url = ["-S", f"url={srv.url}"] if mode == "platform" else []
        args = ["run", "retrieval", "-d", "demo-en", "-s", "mem0", "-S", f"mode={mode}", *url]
        r = cli(*args, "-o", tmp_path / "run", "--format", "none")
        assert r.exit_code == 0, r.output
        log = read_log(tmp_path / "run")
        assert log.header.system.options["mode"] == mode
        recall = next(m.value for m in log.summary.overall if m.name.startswith("recall"))
        assert recall > 0.1  # the ids came back through the wire format (a lost id: 0)
        paths = _paths(srv)
        if mode == "platform":
            assert paths[0] == "GET /v1/ping/"
            assert "POST /v3/memories/add/" in paths and "POST /v3/memories/search/" in paths
            assert all(h.get("Authorization") == f"Token {KEY}" for *_, h in srv.requests)
        else:
            assert "POST /memories" in paths and "POST /search" in paths
            assert not any("/v1/" in p or "/v3/" in p for p in paths)
            assert all(h.get("X-API-Key") == KEY for *_, h in srv.requests)
        assert not srv.memories  # the store's reset deleted only what it added


def test_the_store_writes_deletes_and_reads_back_ids(monkeypatch):
    with FakeMem0Server("platform", api_key=KEY) as srv:
        store = Mem0Store(mode="platform", url=srv.url, api_key=KEY)
        store.store("Darrin lives in Phoenix", {"memory_id": "m1"})
        store.store("Darrin prefers Marriott hotels", {"memory_id": "m2"})
        assert sorted(m["metadata"]["memory_id"] for m in srv.memories.values()) == ["m1", "m2"]
        assert [h.memory_id for h in store.search("Where does Darrin live Phoenix", 2)][0] == "m1"
        store.delete("m1")
        assert [h.memory_id for h in store.search("Phoenix Marriott", 5)] == ["m2"]
        assert store.resolved_options()["url"] == srv.url
        assert "api_key" not in json.dumps(store.resolved_options())
        store.close()


def test_missing_or_wrong_keys_and_urls_are_one_clear_line():
    with pytest.raises(MnemometerError, match="needs an API key: set MEM0_API_KEY"):
        Mem0Store(mode="platform")
    with pytest.raises(MnemometerError, match="needs the server's URL: set MEM0_BASE_URL"):
        Mem0Store(mode="server")
    with pytest.raises(MnemometerError, match="mode must be one of"):
        Mem0Store(mode="cloud")
    with FakeMem0Server("platform", api_key=KEY) as srv:
        with pytest.raises(MnemometerError, match="refused the API key"):
            Mem0Store(mode="platform", url=srv.url, api_key="m0-wrong-key-000")
    with FakeMem0Server("server", api_key=KEY) as srv:
        store = Mem0Store(mode="server", url=srv.url)  # no key: the server says 401
        with pytest.raises(MnemometerError, match="HTTP 401"):
            store.store("x", {"memory_id": "m"})


def _reply(body):
    lines = [ln[2:] for ln in last_user_message(body).splitlines() if ln.startswith("- ")]
    return "; ".join(lines) if lines else "Noted."


@pytest.mark.parametrize("mode", ["platform", "server"])
def test_the_agent_remembers_across_sessions_through_a_remote_mem0(tmp_path, mode):
    with FakeLLMServer(default=_reply) as llm, FakeMem0Server(mode, api_key=KEY) as srv:
        factory = create_agent_factory(
            "mem0",
            {"mode": mode, "url": srv.url, "api_key": KEY},
            llm=LLMSettings(llm.base_url, llm.model),
            workdir=tmp_path,
        )
        a = factory.create("a")
        a.start_session(None)
        a.send("My name is Darrin Smith and I live in Phoenix.")
        a.start_session(None)
        assert "Phoenix" in a.send("What is my name and city Phoenix?").text
        b = factory.create("b")  # another user_id on the same Mem0 sees nothing
        b.start_session(None)
        assert b.send("What is my name and city Phoenix?").text == "Noted."
        a.close()
        assert not [m for m in srv.memories.values() if m["user_id"] == a.user_id]
        assert factory.resolved_options()["mode"] == mode
        factory.close()
