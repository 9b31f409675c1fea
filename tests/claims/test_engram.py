"""engram-search as a third-party store plug-in (examples/plugins/mnemometer-engram), offline.

Runs in the plug-ins' venv (``make test-plugins``); elsewhere it skips. Checked: the store
is found through the ``mnemometer.stores`` entry point; the conformance kit passes without
warnings; bad options name the fix; the documents are the ones engram's own LoCoMo script
builds (``session_to_documents``, speaker names and session date in front); the hits are
engram's documents in the order its pipeline returns them, each credited to its turns; and
a small LoCoMo run (conv-26, its first questions, read by the deterministic test server)
scores every question under every rule, engram's turn-any@5 above the random ranking's.
"""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from conftest import invoke_cli, seed_file
from plugin_helpers import locomo_run

from mnemometer.errors import MnemometerError
from mnemometer.log import read_log
from mnemometer.stores import create_store
from mnemometer.testing import check_store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("mnemometer_engram") is None,
        reason="runs in the plug-ins' venv: make test-plugins",
    ),
]

QUESTIONS = 30


def _sessions(n: int) -> tuple[dict, list[tuple[str, dict]]]:
    """conv-26's raw conversation and its first ``n`` sessions as (text, metadata)."""
    conv = json.loads(seed_file("locomo", "locomo10.json").read_text("utf-8"))[0]
    c = conv["conversation"]
    turns = []
    for s in range(1, n + 1):
        for t in c[f"session_{s}"]:
            meta = {"memory_id": t["dia_id"], "speaker": t["speaker"], "session": f"session_{s}"}
            meta["timestamp"] = "2023-05-08T13:56:00" if s == 1 else f"2023-06-0{s}T10:05:00"
            turns.append((f"{t['speaker']}: {t['text']}", meta))
    return conv, turns


@pytest.fixture(scope="module")
def store():
    return create_store("engram")


def test_found_through_the_entry_point(store) -> None:
    from mnemometer_engram import EngramStore

    assert type(store) is EngramStore
    res = invoke_cli("list", "stores")
    assert res.exit_code == 0 and re.search(r"^engram\s", res.output, re.M), res.output


def test_conformance(store) -> None:
    rep = check_store(store)
    assert rep.ok and not rep.warnings, str(rep)


def test_bad_options_name_the_fix(store) -> None:
    with pytest.raises(MnemometerError, match="reranker=/path"):
        create_store("engram", {"mode": "rerank"})
    with pytest.raises(MnemometerError, match="unit must be one of"):
        create_store("engram", {"unit": "sentence"})
    with pytest.raises(MnemometerError, match="memory_id"):
        store.store("text", {})


def test_documents_are_engrams_own(store) -> None:
    from engram.ingestion.parser import session_to_documents

    conv, turns = _sessions(2)
    store.reset()
    store.store_many(turns)
    ours = [(d["metadata"]["session_id"], d["kind"], d["text"]) for d in store._documents()]
    # What engram's script builds (speaker_a is its "user"; Caroline speaks first in conv-26).
    c = conv["conversation"]
    names = {"user": c["speaker_a"], "assistant": c["speaker_b"]}
    for s, date in ((1, "1:56 pm on 8 May, 2023"), (2, "10:05 am on 2 June, 2023")):
        session = [
            {
                "role": "user" if t["speaker"] == c["speaker_a"] else "assistant",
                "content": t["text"],
            }
            for t in c[f"session_{s}"]
        ]
        docs = session_to_documents(
            session, f"session_{s}", date, include_assistant=True, speaker_names=names
        )
        for d in docs:
            d["kind"] = d["metadata"]["type"]
        mine = sorted((kind, text) for sid, kind, text in ours if sid == f"session_{s}")
        assert mine == sorted((d["kind"], d["text"]) for d in docs)
        first = c[f"session_{s}"][0]["speaker"]
        assert docs[0]["text"].startswith(f"[{date}] {first}: ")


def test_hits_are_engrams_documents_in_its_order(store) -> None:
    conv, turns = _sessions(3)
    store.reset()
    store.store_many(turns)
    store.flush()
    for q in conv["qa"][:6]:
        hits = store.search(q["question"], 8)
        docs = store.pipeline.search(q["question"], store._docs, top_k=len(store._docs))
        first = store._credits[docs[0].id]
        assert {h.memory_id for h in hits[: len(first)]} == set(first[:8])
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_small_locomo_run_scores_every_question_above_random(tmp_path) -> None:
    res, table = locomo_run("engram", tmp_path / "run", QUESTIONS)
    rows = read_log(res.path).items
    assert len(rows) == QUESTIONS and all(r.status == "ok" for r in rows)
    assert table["turn-any"]["n"] == sum(1 for r in rows if r.expected)
    assert "distinct-session" in table and table["distinct-session"]["random"] is not None
    assert table["turn-any"]["value"] > table["turn-any"]["random"]["value"]
