"""Conversation datasets: each question is asked of its own conversation's memory only."""

from __future__ import annotations

from pathlib import Path

from conftest import seed_file

from mnemometer import Dataset, run
from mnemometer.comparison import compare
from mnemometer.datasets import Conversation, DatasetInfo, Query, Session, Turn
from mnemometer.log import read_items


def _twins() -> Dataset:
    """Two conversations that say the same words: only isolation tells their turns apart."""
    convs = [
        Conversation(
            id=cid,
            speakers=["Ann", "Bob"],
            sessions=[
                Session(
                    id="s1",
                    turns=[
                        Turn(id=f"{cid}/t1", speaker="Ann", text="My dog is called Biscuit."),
                        Turn(id=f"{cid}/t2", speaker="Bob", text="I moved to Phoenix in May."),
                    ],
                )
            ],
        )
        for cid in ("a", "b")
    ]
    queries = [
        Query(
            id=f"{cid}/q1",
            text="What is the dog called?",
            conversation_id=cid,
            relevant_ids=[f"{cid}/t1"],
        )
        for cid in ("a", "b")
    ]
    return Dataset(info=DatasetInfo(name="twins"), conversations=convs, queries=queries).with_hash()


def test_each_question_sees_only_its_own_conversation(tmp_path: Path):
    res = run("retrieval", "bm25", dataset=_twins(), out=tmp_path / "r")
    for item in read_items(res.path):
        conv = item.groups["conversation"]
        assert item.retrieved and all(h.id.startswith(f"{conv}/") for h in item.retrieved)
        assert item.success is True
    # One shared store would hold both conversations' identical turns: a tie, and half the
    # time the other conversation's turn first.


def test_locomo_evidence_retrieval_is_isolated_and_clusters_by_conversation(tmp_path: Path):
    path = seed_file("locomo", "locomo10.json")
    kw = run("retrieval", "keyword", dataset=path, out=tmp_path / "kw")
    bm = run("retrieval", "bm25", dataset=path, out=tmp_path / "bm")
    items = read_items(bm.path)
    assert len(items) == 1986
    for item in items:
        conv = item.groups["conversation"]
        assert all(h.id.startswith(f"{conv}/") for h in item.retrieved)
    c = compare([kw.path], [bm.path], resamples=200)
    assert c.cluster_by == "conversation" and c.clusters == 10
