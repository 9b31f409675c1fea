"""genome-memory as a third-party store plug-in (examples/plugins/mnemometer-genome; slow).

The plug-in registers ``genome`` through the ``mnemometer.stores`` entry point and runs
genome's own ``Memory.search`` (dense cosine, its default) over genome's own
``EmbeddingProvider``, given mnemometer's packaged MiniLM by path (genome's default model is
a hub name). It installs into the plug-ins' venv only, so these tests skip elsewhere,
naming ``make test-plugins``.

Checked: the entry point finds it; the conformance kit passes, with exactly the warning
genome earns (equal scores come back in insertion order: its SQLite store sorts cosine
scores with a stable sort over rows in insertion order); its hits are genome's own
ranking; a bad option names the fix; and 40 questions of LoCoMo conv-26 through the real
suite are all scored, with a rule-sensitivity table whose turn-any@5 is above the random
ranking's.
"""

from __future__ import annotations

import importlib.util

import pytest
from plugin_helpers import locomo_run

from mnemometer.errors import MnemometerError
from mnemometer.stores import create_store, store_names
from mnemometer.testing import check_store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("mnemometer_genome") is None,
        reason="runs in the plug-ins' venv: make test-plugins",
    ),
]

QUESTIONS = 40
TEXTS = [
    ("a", "Caroline: I went to a LGBTQ support group yesterday.", "2023-05-08T13:56:00"),
    ("b", "Melanie: I painted a lake sunrise last year.", "2023-05-08T13:56:00"),
    ("c", "Caroline: I'm researching adoption agencies.", "2023-05-25T13:14:00"),
]


@pytest.fixture(scope="module")
def store():
    s = create_store("genome")
    yield s
    s.close()


def test_found_through_the_entry_point(store) -> None:
    from mnemometer_genome import GenomeStore

    assert "genome" in store_names()
    assert isinstance(store, GenomeStore)
    opts = store.resolved_options()
    assert opts["mode"] == "dense" and opts["dated"] is True
    assert opts["model"].endswith("model")  # the packaged MiniLM's directory, not a hub name


def test_conformance_with_the_one_warning_genome_earns(store) -> None:
    rep = check_store(store)
    assert rep.ok, str(rep)
    assert [c.name for c in rep.warnings] == [
        "breaks score ties independently of insertion order"
    ], str(rep)
    assert "insertion order" in rep.warnings[0].detail
    assert {"store_many", "flush", "list_ids"} <= set(rep.capabilities)


def test_hits_are_genomes_own_ranking(store) -> None:
    from genome import Memory

    store.reset()
    for mid, text, ts in TEXTS:
        store.store(text, {"memory_id": mid, "timestamp": ts})
    store.flush()
    own = Memory(storage=":memory:", embedding_provider=store._embed)
    for mid, text, _ in TEXTS:  # as the adapter embeds it: LoCoMo's date form first
        date = "1:56 pm on 8 May, 2023" if mid != "c" else "1:14 pm on 25 May, 2023"
        own.add(f"[{date}] {text}", user_id="u", metadata={"memory_id": mid})
    query = "What did Caroline research?"
    theirs = [(r.record.metadata["memory_id"], r.score) for r in own.search(query, user_id="u")]
    ours = [(h.memory_id, h.score) for h in store.search(query, 3)]
    assert [m for m, _ in ours] == [m for m, _ in theirs] and ours[0][0] == "c"
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], abs=1e-5)
    own.close()


def test_a_bad_option_names_the_fix() -> None:
    with pytest.raises(MnemometerError, match="mode=dense"):
        create_store("genome", {"mode": "sparse"})
    with pytest.raises(MnemometerError, match="no such directory"):
        create_store("genome", {"model": "sentence-transformers/all-MiniLM-L6-v2"})


def test_locomo_conv_26_is_scored_under_every_rule(tmp_path) -> None:
    res, rules = locomo_run("genome", tmp_path / "run", QUESTIONS)
    s = res.summary
    assert s.counts["errors"] == 0
    assert {"turn-any", "distinct-session", "answer-in-context"} <= set(rules)
    turn = rules["turn-any"]
    assert turn["n"] >= QUESTIONS - 2  # every question with evidence (conv-26 lacks few)
    assert turn["value"] > turn["random"]["value"] + 0.2
