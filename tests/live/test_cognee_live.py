"""cognee as a store, for real and offline, against the extraction stand-in (marked slow).

cognee cannot share the test environment (it pins transformers<5, openai<3, lancedb<0.40),
so these tests run in its own venv: ``make test-cognee`` builds it once per machine
(``make cognee-env``) and runs this file there. Elsewhere they skip, naming that command.

Checked: the conformance kit (no tie or duplicate warnings); what a memory costs (two LLM
calls per document, with ``cognify`` batched or once per memory); a retrieval run on conversations, one store each, in both
search modes, reporting the ingest table; a dataset and its permutations rank alike (the
tie rule); nothing leaves loopback.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from adversaries import permuted
from conftest import REPO
from netguard import loopback_only

import mnemometer
from mnemometer import Dataset, Memory, Query
from mnemometer.datasets._models import DatasetInfo
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


@pytest.mark.parametrize("mode", ["chunks", "graph_completion"])
def test_a_run_over_conversations_reports_the_ingest_cost(llm, mode, tmp_path) -> None:
    with loopback_only() as attempts:
        res = mnemometer.run(
            "retrieval",
            mnemometer.SystemSpec.store("cognee", mode=mode),
            dataset=str(MINI),
            out=tmp_path / "run",
            settings=mnemometer.RunSettings(
                llm=LLMSettings(base_url=llm.base_url, model=llm.model)
            ),
        )
    assert attempts == []
    s = res.summary
    assert s.counts["errors"] == 0 and s.counts["ingest_failures"] == 0
    assert s.counts["memories_stored"] == 22
    row = s.table("ingest").data[0]
    assert row["llm_calls_per_memory"] >= 2 and row["tokens_per_memory"] > 0
    hit5 = next(m.value for m in s.overall if m.name == "hit" and m.k == 5)
    assert hit5 >= 0.5
    assert len(list((tmp_path / "run" / "isolated").iterdir())) == 4
    costs = (tmp_path / "run" / "ingest.jsonl").read_text().splitlines()
    assert len(costs) == 4  # one cognify per conversation
    assert sum(len(json.loads(c)["memory_ids"]) for c in costs) == 22


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
