"""dory-memory as a third-party store plug-in (examples/plugins/mnemometer-dory), offline.

Runs in the plug-ins' venv (``make test-plugins``); elsewhere it skips. Checked: the store
is found through the ``mnemometer.stores`` entry point; the conformance kit passes, its one
warning being dory's own tie order; the hits are exactly the nodes, in the order, that
dory's ``query`` writes into its context; and a small LoCoMo run (conv-26, its first
questions, read by the deterministic test server) scores every question under every rule,
with dory's spreading activation saturating (most top-5 scores at the 1.0 cap) and doing
worse on evidence turns than the same store without links.
"""

from __future__ import annotations

import importlib.util
import re

import pytest
from conftest import invoke_cli
from plugin_helpers import conv26, locomo_run

from mnemometer.log import read_log
from mnemometer.stores import create_store
from mnemometer.testing import check_store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("mnemometer_dory") is None,
        reason="runs in the plug-ins' venv: make test-plugins",
    ),
]

QUESTIONS = 40


def test_found_through_the_entry_point(tmp_path) -> None:
    from mnemometer_dory import DoryStore

    assert type(create_store("dory", workdir=tmp_path)) is DoryStore
    res = invoke_cli("list", "stores")
    assert res.exit_code == 0 and re.search(r"^dory\s", res.output, re.M), res.output


def test_conformance(tmp_path) -> None:
    rep = check_store(create_store("dory", workdir=tmp_path))
    assert rep.ok, str(rep)
    # Identical texts tie (same bm25, activation capped at 1.0, same salience) and dory
    # keeps them in FTS5's order, which is insertion order: a real property of dory.
    assert {w.name for w in rep.warnings} <= {
        "breaks score ties independently of insertion order"
    }, str(rep)


def test_bad_metadata_names_the_fix(tmp_path) -> None:
    store = create_store("dory", workdir=tmp_path)
    with pytest.raises(ValueError, match="memory_id"):
        store.store("text", {})
    with pytest.raises(ValueError, match="backdate=false"):
        store.store("text", {"memory_id": "m", "timestamp": "last Tuesday"})


def test_hits_are_dorys_own_context_in_its_order(tmp_path) -> None:
    store = create_store("dory", workdir=tmp_path)
    turns, qa = conv26()
    store.store_many(turns)
    store.flush()
    for q in qa[:8]:
        hits = store.search(q["question"], 90)
        # The "## Context" section of the string dory hands an LLM, line by line.
        section = store.last_context.split("## Context\n", 1)[1].split("\n\n## ", 1)[0]
        lines = [ln.removeprefix("- [CONCEPT] ") for ln in section.splitlines()]
        assert [h.text for h in hits] == lines
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_small_locomo_run_scores_every_question_and_shows_the_saturation(tmp_path) -> None:
    res, table = locomo_run("dory", tmp_path / "linked", QUESTIONS)
    rows = read_log(res.path).items
    assert len(rows) == QUESTIONS and all(r.status == "ok" for r in rows)
    with_evidence = sum(1 for r in rows if r.expected)
    assert table["turn-any"]["n"] == with_evidence
    assert all(d["random"] is not None for d in table.values() if d["rule"] != "answer-in-context")
    # Saturation: spreading activation caps at 1.0 and most top-5 hits sit at the cap.
    top5 = [[h.score for h in (r.retrieved or [])[:5]] for r in rows]
    capped = sum(1 for s in top5 if len(s) == 5 and min(s) == 1.0)
    assert capped > QUESTIONS / 2, top5
    # The same store without links ranks the FTS5 seeds alone, and finds more evidence.
    _, plain = locomo_run("dory", tmp_path / "unlinked", QUESTIONS, auto_link=False)
    assert plain["turn-any"]["value"] > table["turn-any"]["value"]
