"""MemTest's entity-in-text relevance: opt-in, recorded, and scored as the seed's script did."""

from __future__ import annotations

import pytest
from conftest import seed_file

from mnemometer import run
from mnemometer.datasets import Dataset, DatasetInfo, Memory, Query
from mnemometer.errors import MnemometerError
from mnemometer.suites.retrieval import RetrievalSuite


def _dataset() -> Dataset:
    memories = [
        Memory(id="m1", text="Daiyu and Baoyu chat in the garden"),
        Memory(id="m2", text="Baoyu reads a book"),
        Memory(id="m3", text="Daiyu buries flowers"),
        Memory(id="m4", text="the cook makes dumplings"),
    ]
    q = Query(
        id="q1",
        text="Baoyu",
        type="person",
        relevant_ids=["m2"],  # the labelled id: one of the two memories naming Baoyu
        metadata={"target_entity": "baoyu"},
    )
    return Dataset(info=DatasetInfo(name="tiny"), memories=memories, queries=[q])


def _metric(result, name: str, k: int) -> float:
    return next(m.value for m in result.summary.overall if m.name == name and m.k == k)


def test_entity_relevance_is_opt_in_and_recorded(tmp_path):
    ds = _dataset()
    ids = run("retrieval", "bm25", dataset=ds, out=tmp_path / "ids", suite_options={"ks": [1, 2]})
    ent = run(
        "retrieval",
        "bm25",
        dataset=ds,
        out=tmp_path / "e",
        suite_options={"ks": [1, 2], "relevance": "entity"},
    )
    assert "relevance" not in ids.header.suite_options  # the default leaves old runs alone
    assert ent.header.suite_options["relevance"] == "entity"
    # m1 and m2 both name Baoyu (case-insensitively): both top-2 hits count under the seed's
    # rule, only m2 under ours.
    assert _metric(ent, "precision", 2) == 1.0
    assert _metric(ids, "precision", 2) == 0.5
    # recall divides by min(memories naming the entity, k): 1 of min(2, 1) at k=1
    assert _metric(ent, "recall", 1) == 1.0


def test_unknown_relevance_rule_is_refused():
    with pytest.raises(MnemometerError, match="relevance must be"):
        RetrievalSuite(relevance="entities")


def test_four_novels_entity_rule_scores_above_ids(tmp_path):
    data = seed_file("memtest", "four_novels_db.json")
    opts = {"top_k": 20}
    ids = run("retrieval", "bm25", dataset=data, out=tmp_path / "i", suite_options=opts, sample=40)
    ent = run(
        "retrieval",
        "bm25",
        dataset=data,
        out=tmp_path / "e",
        suite_options={**opts, "relevance": "entity"},
        sample=40,
    )
    assert ent.header.item_count == ids.header.item_count == 40
    assert _metric(ent, "precision", 20) > 2 * _metric(ids, "precision", 20)


def test_report_group_by_any_metadata_field(tmp_path):
    import json

    from conftest import invoke_cli

    from mnemometer.report import report

    ds = _dataset()
    ds.queries.append(
        Query(id="q2", text="dumplings", type="event", relevant_ids=["m4"], metadata={"novel": "b"})
    )
    ds.queries[0].metadata["novel"] = "a"
    res = run("retrieval", "bm25", dataset=ds, out=tmp_path / "r")
    text = report(res.path, "text", ["novel"])
    assert "by novel" in text and "by novel" not in report(res.path, "text")
    groups = json.loads(report(res.path, "json", ["novel"]))["summary"]["groups"]
    assert sorted(groups["novel"]) == ["a", "b"]
    assert "By novel" in report(res.path, "md", ["novel"])
    bad = invoke_cli("report", res.path, "--group-by", "book")
    assert bad.exit_code == 2
    assert "fields: novel, target_entity, type" in bad.output
