"""Load: many scenarios in flight against a local LLM server that answers slowly.

Issue 20 §7: at ``--concurrency 16`` every item is kept, none is recorded twice, and what
each scenario heard is what it hears when the scenarios run one at a time (the server is
deterministic, so concurrency may change timing but never content).
"""

from __future__ import annotations

import pytest

from mnemometer import RunSettings, SystemSpec
from mnemometer.llm import LLMSettings
from mnemometer.log import read_items
from mnemometer.runner import run
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories

pytestmark = pytest.mark.slow

EPOCHS = 3


def _play(tmp_path, name: str, concurrency: int, delay: float) -> tuple[dict, int]:
    with FakeLLMServer(default=echo_memories) as srv:
        if delay:
            srv.fail_next(100_000, kind="slow", delay=delay)  # every request answers late
        out = tmp_path / name
        result = run(
            "scenarios",
            SystemSpec.agent("rag").options_with_store("bm25", None),
            out=out,
            suite_options={"similarity": "none", "epochs": EPOCHS},
            settings=RunSettings(
                concurrency=concurrency, timeout=60.0, llm=LLMSettings(srv.base_url, srv.model)
            ),
        )
        chats = len(srv.chat_requests())
    items = read_items(out)
    assert result.summary.counts["errors"] == 0 and result.summary.counts["timeouts"] == 0
    ids = [i.item_id for i in items]
    assert len(ids) == len(set(ids)), "an item was recorded twice"
    heard = {
        i.item_id: [(t["input"], t.get("reply"), t.get("grade")) for t in i.extra["turns"]]
        for i in items
    }
    assert all(i.status == "ok" for i in items)
    return heard, chats


def test_sixteen_in_flight_against_a_slow_server_keep_every_item(tmp_path):
    calm, calm_chats = _play(tmp_path, "one-at-a-time", concurrency=1, delay=0.0)
    busy, busy_chats = _play(tmp_path, "sixteen", concurrency=16, delay=0.05)
    assert len(calm) == 13 * EPOCHS
    assert busy.keys() == calm.keys()
    for item_id, turns in calm.items():
        assert busy[item_id] == turns, f"{item_id} heard something else under load"
    # no abandoned work: exactly the requests the turns needed, under load as when calm
    assert busy_chats == calm_chats
