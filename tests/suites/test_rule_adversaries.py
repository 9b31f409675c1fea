"""Adversaries of the peers' retrieval rules, through the real LoCoMo suite (conv-26).

A store that returns one turn from each session (ranked by bm25, but never the turn bm25
found) is what a session-level rule rewards: it must score high under the session rules,
low under the turn rules, and the rule-sensitivity table must show that gap. A store that
returns a random order must sit at the table's random baseline under every rule.
"""

from __future__ import annotations

import pytest
from adversaries import RandomStore, SessionSpreadStore
from conftest import seed_file

import mnemometer
from mnemometer.llm import resolve_settings
from mnemometer.runner import RunSettings
from mnemometer.stores import register_store, unregister_store
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply

QUESTIONS = 120
SESSION_RULES = ("sess-any", "sess-strict", "session-hit", "distinct-session")
TURN_RULES = ("turn-any", "turn-all", "turn-fraction", "raw-any", "raw-strict")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Each adversary's rule-sensitivity rows by rule, and its summary's ``rules`` section."""
    root = tmp_path_factory.mktemp("rule-adversaries")
    stores = {"session-spread": SessionSpreadStore, "random-store": RandomStore}
    for name, cls in stores.items():
        register_store(name, cls)
    out = {}
    try:
        with FakeLLMServer(default=benchmark_reply) as srv:
            for name in stores:
                res = mnemometer.run(
                    "locomo",
                    name,
                    suite_options={
                        "dataset": str(seed_file("locomo", "locomo10.json")),
                        "questions": QUESTIONS,
                    },
                    limit=1,
                    out=root / name,
                    settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model)),
                )
                section = res.summary.sections["rules"]
                out[name] = ({d["rule"]: d for d in section["rules"]}, section)
    finally:
        for name in stores:
            unregister_store(name)
    return out


def test_one_turn_per_session_wins_the_session_rules_and_loses_the_turn_rules(tables):
    rows, section = tables["session-spread"]
    for rule in SESSION_RULES:
        assert rows[rule]["value"] >= 0.7, rule  # bm25's sessions, so bm25's session score
    for rule in TURN_RULES:
        assert rows[rule]["value"] <= 0.2, rule  # first turns of sessions: rarely evidence
    assert rows["answer-in-context"]["value"] <= 0.05
    # The table shows the gap: the same ranking, 0.9 or 0.1 by the rule alone.
    assert rows["distinct-session"]["value"] - rows["turn-any"]["value"] >= 0.7
    assert section["spread"] >= 0.7


def test_a_random_store_sits_at_the_random_baseline_under_every_rule(tables):
    rows, _ = tables["random-store"]
    compared = 0
    for rule, row in rows.items():
        if row["random"] is None:  # a random ranking has no texts to read
            assert rule == "answer-in-context" and row["value"] <= 0.02
            continue
        assert abs(row["value"] - row["random"]["value"]) <= 0.08, rule
        compared += 1
    assert compared == 9
    for rule in TURN_RULES:
        assert rows[rule]["value"] <= 0.03 and rows[rule]["random"]["value"] <= 0.03, rule
    for rule in SESSION_RULES:  # chance alone scores this under a session rule
        assert rows[rule]["random"]["value"] >= 0.15, rule
