"""cognee as a store, for real and offline, against the extraction stand-in (marked slow).

cognee cannot share the test environment (it pins transformers<5, openai<3, lancedb<0.40),
so these tests run in its own venv: ``make test-cognee`` builds it once per machine
(``make cognee-env``) and runs this file there. Elsewhere they skip, naming that command.

Checked: the conformance kit (no tie or duplicate warnings); what a memory costs (two LLM
calls per document, with ``cognify`` batched or once per memory); a retrieval run on
conversations, one store each (each in a worker process of its own), in both search modes,
reporting the ingest table; conversations filled two at once give the items and costs of
one at a time, and the LLM calls the ledgers count are those the server saw; a killed
worker is a clear error; a dataset and its permutations rank alike (the tie rule); nothing
leaves loopback.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
from pathlib import Path

import pytest
from adversaries import permuted
from conftest import REPO
from netguard import loopback_only

import mnemometer
from mnemometer import Dataset, Memory, Query
from mnemometer.datasets._models import DatasetInfo
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMSettings
from mnemometer.log import read_items
from mnemometer.stores import create_store
from mnemometer.testing import check_store
from mnemometer.testing._extraction import extraction_llm

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("cognee") is None,
        reason="cognee runs in its own venv: make test-cognee",
    ),
]

MINI = REPO / "tests" / "data" / "longmemeval_mini.json"
TEXTS = [
    "Alice: I adopted a beagle named Biscuit.",
    "Bob: Carol moved to Lisbon last spring.",
    "Dana: Evan plays the Cello in Oslo.",
]


@pytest.fixture(scope="module")
def llm():
    with extraction_llm() as server:
        yield server


def _store(llm, tmp: Path, **opts):
    return create_store(
        "cognee", {"base_url": llm.base_url, "llm_model": llm.model, **opts}, workdir=tmp
    )


def test_conformance_and_what_a_memory_costs(llm, tmp_path) -> None:
    with loopback_only() as attempts:
        store = _store(llm, tmp_path / "store")
        rep = check_store(store)
        assert rep.ok and not rep.warnings, str(rep)
        assert {"ingest_costs", "list_ids"} <= set(rep.capabilities)
        store.close()  # the next store is then alone here again, and runs in this process
        calls: dict[str, int] = {}
        for how in ("each", "batch"):
            store = _store(llm, tmp_path / how, cognify=how)
            store.reset()
            asked = len(llm.chat_requests())
            for i, text in enumerate(TEXTS):
                store.store(text, {"memory_id": f"m{i}", "timestamp": "2024-03-01T10:00:00"})
            store.flush()
            costs = store.ingest_costs()
            assert all(c.error is None and c.extracted for c in costs), costs
            assert len(costs) == (3 if how == "each" else 1)
            calls[how] = sum(c.llm_calls for c in costs)
            assert calls[how] == len(llm.chat_requests()) - asked
            seconds = sum(c.seconds for c in costs) / len(TEXTS)
            print(f"cognify={how}: {calls[how]} LLM calls, {seconds:.2f} s per memory")
            hits = store.search("Where did Carol move?", 2)
            assert hits and hits[0].memory_id == "m1"
            store.close()
    assert attempts == []
    # cognee asks twice per document (a knowledge graph, a summary), batched or not
    assert calls == {"each": 2 * len(TEXTS), "batch": 2 * len(TEXTS)}


def _two_conversations() -> Dataset:
    """MINI's first two haystacks (14 turns) and their questions: two workers per run."""
    ds = mnemometer.load_dataset(MINI)
    keep = {c.id for c in ds.conversations[:2]}
    return ds.model_copy(
        update={
            "conversations": ds.conversations[:2],
            "queries": [q for q in ds.queries if q.conversation_id in keep],
        }
    )


def _conversations(llm, tmp: Path, mode: str, concurrency: int):
    """A retrieval run over two conversations, and the chat requests the server saw."""
    asked = len(llm.chat_requests())
    with loopback_only() as attempts:
        res = mnemometer.run(
            "retrieval",
            mnemometer.SystemSpec.store("cognee", mode=mode),
            dataset=_two_conversations(),
            out=tmp / f"{mode}-c{concurrency}",
            settings=mnemometer.RunSettings(
                llm=LLMSettings(base_url=llm.base_url, model=llm.model), concurrency=concurrency
            ),
        )
    assert attempts == []
    return res, len(llm.chat_requests()) - asked


@pytest.fixture(scope="module")
def chunks_at_two(llm, tmp_path_factory):
    return _conversations(llm, tmp_path_factory.mktemp("c2"), "chunks", 2)


@pytest.mark.parametrize("mode", ["chunks", "graph_completion"])
def test_a_run_over_conversations_reports_the_ingest_cost(
    llm, mode, chunks_at_two, tmp_path
) -> None:
    res, asked = chunks_at_two if mode == "chunks" else _conversations(llm, tmp_path, mode, 2)
    turns = sum(len(c.memories()) for c in _two_conversations().conversations)
    s = res.summary
    assert s.counts["errors"] == 0 and s.counts["ingest_failures"] == 0
    assert s.counts["memories_stored"] == turns == 14
    row = s.table("ingest").data[0]
    assert row["llm_calls_per_memory"] >= 2 and row["tokens_per_memory"] > 0
    hit5 = next(m.value for m in s.overall if m.name == "hit" and m.k == 5)
    assert hit5 >= 0.5
    assert len(list((res.path / "isolated").iterdir())) == 2
    costs = [json.loads(c) for c in (res.path / "ingest.jsonl").read_text().splitlines()]
    assert len(costs) == 2  # one cognify per conversation, each in its worker process
    ids = [m for c in costs for m in c["memory_ids"]]
    assert len(ids) == len(set(ids)) == turns  # every turn stored once
    assert sum(c["llm_calls"] for c in costs) == asked  # the ledgers count what was asked


def test_conversations_filled_at_once_match_one_at_a_time(llm, chunks_at_two, tmp_path) -> None:
    two, asked_two = chunks_at_two
    one, asked_one = _conversations(llm, tmp_path, "chunks", 1)

    def items(res) -> list:
        # Scores to 6 places: a chunk's vector comes from the embedding requests cognee
        # sent at once, padded together, which shifts its last bits from run to run.
        return [
            (r.item_id, [(h.id, round(h.score, 6)) for h in r.retrieved], r.error)
            for r in read_items(res.path)
        ]

    assert items(two) == items(one)
    assert asked_two == asked_one
    keys = ("memories", "llm_calls_per_memory", "tokens_per_memory")
    rows = [r.summary.table("ingest").data[0] for r in (one, two)]
    assert [{k: r[k] for k in keys} for r in rows] == [{k: rows[0][k] for k in keys}] * 2


def test_a_killed_worker_is_a_clear_error(llm, tmp_path) -> None:
    store = _store(llm, tmp_path / "worker", process="worker")
    try:
        assert store.worker_pid not in (None, os.getpid())
        store.reset()
        store.store(TEXTS[0], {"memory_id": "m0"})
        os.kill(store.worker_pid, signal.SIGKILL)
        with pytest.raises(MnemometerError, match=r"cognee: its worker process .* died"):
            store.flush()
        with pytest.raises(MnemometerError, match="closed"):
            store.search("Biscuit", 1)
    finally:
        store.close()


def _ties() -> Dataset:
    same = "Hermione returned three books to the library on Friday."
    mems = [Memory(id=f"g{i}", text=same) for i in range(1, 5)]
    mems += [Memory(id=f"f{i}", text=t) for i, t in enumerate(TEXTS)]
    queries = [
        Query(id="q1", text="Who returned books to the library?", relevant_ids=["g3"]),
        Query(id="q2", text="Where did Carol move?", relevant_ids=["f1"]),
    ]
    return Dataset(info=DatasetInfo(name="ties", language="en"), memories=mems, queries=queries)


def test_permuting_the_memories_changes_nothing(llm, tmp_path) -> None:
    def ranking(ds: Dataset, out: Path) -> list:
        res = mnemometer.run(
            "retrieval",
            mnemometer.SystemSpec.store("cognee", base_url=llm.base_url, llm_model=llm.model),
            dataset=ds,
            suite_options={"top_k": 2, "ks": [1, 2]},
            out=out,
        )
        return [(r.item_id, [h.id for h in r.retrieved]) for r in read_items(res.path)]

    ds = _ties()
    first = ranking(ds, tmp_path / "fwd")
    assert len(first[0][1]) == 2 and set(first[0][1]) <= {"g1", "g2", "g3", "g4"}
    for how in ("reversed", "shuffled"):
        assert ranking(permuted(ds, how), tmp_path / how) == first, how
