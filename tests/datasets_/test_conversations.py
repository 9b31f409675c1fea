"""The conversation model: native round trips, content hash, consistency checks, memories."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from conftest import REPO

from mnemometer.datasets import (
    Conversation,
    Dataset,
    DatasetInfo,
    Memory,
    Query,
    Session,
    Turn,
    dataset_json_schema,
    load_dataset,
    save_dataset,
)
from mnemometer.errors import DatasetError


def asked(qid, text, qtype, evidence, **kw):
    """A question on the conversation named before the slash in ``qid``; evidence as turn numbers."""
    cid = qid.split("/")[0]
    ids = [f"{cid}/{n}" for n in evidence]
    return Query(id=qid, text=text, type=qtype, conversation_id=cid, relevant_ids=ids, **kw)


def conv_dataset() -> Dataset:
    """Two conversations of two sessions each, a standalone memory, and questions."""

    def conv(cid: str, who: tuple[str, str], topic: str) -> Conversation:
        a, b = who
        return Conversation(
            id=cid,
            speakers=[a, b],
            sessions=[
                Session(
                    id="s1",
                    date=datetime(2023, 5, 8, 13, 56),
                    turns=[
                        Turn(id=f"{cid}/1", speaker=a, text=f"I started learning {topic}."),
                        Turn(
                            id=f"{cid}/2",
                            speaker=b,
                            text="Look at my new bike!",
                            caption="a photo of a red bicycle",
                            metadata={"img_url": ["https://example.org/bike.jpg"]},
                        ),
                    ],
                ),
                Session(
                    id="s2",
                    date=datetime(2023, 6, 1, 9, 0),
                    turns=[
                        Turn(id=f"{cid}/3", speaker=b, text=f"How is {topic} going?"),
                        Turn(id=f"{cid}/4", speaker=a, text="Slowly, but I enjoy it."),
                    ],
                ),
            ],
        )

    return Dataset(
        info=DatasetInfo(name="convs", reference_time=datetime(2023, 7, 1)),
        memories=[Memory(id="m1", text="The office moved to Porto.")],
        conversations=[conv("c1", ("Ana", "Ben"), "cello"), conv("c2", ("Cai", "Dee"), "chess")],
        queries=[
            Query(id="q0", text="Where is the office?", relevant_ids=["m1"]),
            asked("c1/q1", "What is Ana learning?", "single-hop", [1], answer="cello"),
            asked(
                "c1/q2",
                "When did Ana start the cello?",
                "temporal",
                [1, 3],
                answer="May 2023",
                asked_at=datetime(2023, 7, 1),
            ),
            asked(
                "c2/q1",
                "Did Cai buy a car?",
                "adversarial",
                [2],
                adversarial_answer="Yes, a red one",
            ),
        ],
    )


# --- round trips and the hash ------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_round_trip_with_conversations(tmp_path: Path, suffix: str) -> None:
    ds = conv_dataset().with_hash()
    again = load_dataset(save_dataset(ds, tmp_path / f"d{suffix}"))
    assert again.conversations == ds.conversations
    assert again.queries == ds.queries and again.memories == ds.memories
    assert again.info.content_hash == ds.info.content_hash
    assert again.conversations[0].sessions[0].turns[1].caption == "a photo of a red bicycle"
    assert again.queries[2].asked_at == datetime(2023, 7, 1)


def test_hash_covers_conversations() -> None:
    base = conv_dataset().compute_hash()
    changed = conv_dataset()
    changed.conversations[1].sessions[1].turns[0].text = "How is go going?"
    assert changed.compute_hash() != base
    dated = conv_dataset()
    dated.conversations[0].sessions[0].date = datetime(2023, 5, 9)
    assert dated.compute_hash() != base
    without = conv_dataset()
    without.conversations = []
    without.queries = without.queries[:1]
    assert without.compute_hash() != base


def test_hash_of_a_dataset_without_conversations_is_unchanged() -> None:
    # The golden run logs recorded demo-en's hash before conversations existed; it must
    # not move, or old runs would no longer pair with new ones.
    header = json.loads(
        (REPO / "tests/data/runlogs/v1/retrieval-keyword/header.json").read_text("utf-8")
    )
    assert header["dataset"]["path"] == "demo-en"
    assert load_dataset("demo-en").info.content_hash == header["dataset"]["content_hash"]


def test_saved_json_without_conversations_has_no_conversations_key(tmp_path: Path) -> None:
    ds = load_dataset("demo-en")
    doc = json.loads(save_dataset(ds, tmp_path / "d.json").read_text("utf-8"))
    assert list(doc) == ["info", "memories", "queries"]
    assert not any('"kind":"conversation"' in line for line in _lines(tmp_path, ds))


def _lines(tmp_path: Path, ds: Dataset) -> list[str]:
    return save_dataset(ds, tmp_path / "d.jsonl").read_text("utf-8").splitlines()


def test_jsonl_writes_one_line_per_conversation_before_the_queries(tmp_path: Path) -> None:
    kinds = [json.loads(line)["kind"] for line in _lines(tmp_path, conv_dataset())]
    assert kinds == ["info", "memory", "conversation", "conversation"] + ["query"] * 4


def _permuted(mutate) -> str:
    ds = conv_dataset()
    mutate(ds)
    return ds.compute_hash()


@pytest.mark.parametrize(
    ("name", "mutate", "same"),
    [
        # Not meaningful: conversations are independent units, run in isolation.
        ("conversations", lambda d: d.conversations.reverse(), True),
        ("queries across conversations", lambda d: d.queries.insert(1, d.queries.pop()), True),
        # Meaningful: the order a system is given things, or asked them.
        ("queries within a conversation", lambda d: d.queries.insert(1, d.queries.pop(2)), False),
        ("turns within a session", lambda d: d.conversations[0].sessions[0].turns.reverse(), False),
        ("sessions", lambda d: d.conversations[0].sessions.reverse(), False),
        ("speakers", lambda d: d.conversations[0].speakers.reverse(), False),
        ("evidence", lambda d: d.queries[2].relevant_ids.reverse(), False),
    ],
)
def test_hash_ignores_order_only_where_it_is_not_meaningful(name, mutate, same) -> None:
    assert (_permuted(mutate) == conv_dataset().compute_hash()) is same, name


def test_permuted_file_loads_to_the_same_hash(tmp_path: Path) -> None:
    ds = conv_dataset()
    a = load_dataset(save_dataset(ds, tmp_path / "a.json"))
    ds.conversations.reverse()
    ds.queries = [ds.queries[0], ds.queries[3], ds.queries[1], ds.queries[2]]
    b = load_dataset(save_dataset(ds, tmp_path / "b.jsonl"))
    assert a.info.content_hash == b.info.content_hash
    ds.conversations[0].sessions[0].turns.reverse()
    c = load_dataset(save_dataset(ds, tmp_path / "c.json"))
    assert c.info.content_hash != a.info.content_hash


# --- consistency ------------------------------------------------------------------------


def _break(kind: str, ds: Dataset) -> None:
    c1, c2 = ds.conversations
    if kind == "turn id":
        c2.sessions[0].turns[0].id = "c1/1"
    elif kind == "session id":
        c1.sessions[1].id = "s1"
    elif kind == "conversation id":
        c2.id = "c1"
    elif kind == "speaker":
        c2.sessions[1].turns[1].speaker = "Ana"
    elif kind == "memory id":
        c2.sessions[0].turns[0].id = "m1"
    elif kind == "conversation_id":
        ds.queries[3].conversation_id = "c9"
    elif kind == "evidence":
        ds.queries[3].relevant_ids = ["c1/2"]  # a turn, but of the other conversation
    elif kind == "memory evidence":
        ds.queries[0].relevant_ids = ["c1/1"]  # a turn, but the query names no conversation


CASES = {
    "turn id": (
        r"conversations\.1\.sessions\.0\.turns\.0\.id: repeated turn id 'c1/1'",
        r":4: sessions\.0\.turns\.0\.id: repeated turn id",
    ),
    "session id": (
        r"conversations\.0\.sessions\.1\.id: repeated session id 's1'",
        r":3: sessions\.1\.id: repeated session id",
    ),
    "conversation id": (
        r"conversations\.1\.id: repeated conversation id 'c1'",
        r":4: id: repeated conversation id",
    ),
    "speaker": (
        r"conversations\.1\.sessions\.1\.turns\.1\.speaker: 'Ana' is not one of the speakers "
        r"\(Cai, Dee\)",
        r":4: sessions\.1\.turns\.1\.speaker",
    ),
    "memory id": (
        r"conversations\.1\.sessions\.0\.turns\.0\.id: turn id 'm1' is also a memory id",
        r":4: sessions\.0\.turns\.0\.id: turn id 'm1'",
    ),
    "conversation_id": (
        r"queries\.3\.conversation_id: 'c9' is not a conversation id",
        r":8: conversation_id: 'c9'",
    ),
    "evidence": (
        r"queries\.3\.relevant_ids: 'c1/2' is not a turn of conversation 'c2'",
        r":8: relevant_ids: 'c1/2' is not a turn",
    ),
    "memory evidence": (
        r"queries\.0\.relevant_ids: 'c1/1' is not a memory id",
        r":5: relevant_ids: 'c1/1' is not a memory id",
    ),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_inconsistent_conversations_name_file_and_field(tmp_path: Path, kind: str) -> None:
    ds = conv_dataset()
    _break(kind, ds)
    json_msg, jsonl_msg = CASES[kind]
    with pytest.raises(DatasetError, match=r"d\.json: " + json_msg):
        load_dataset(save_dataset(ds, tmp_path / "d.json"))
    with pytest.raises(DatasetError, match=r"d\.jsonl" + jsonl_msg):
        load_dataset(save_dataset(ds, tmp_path / "d.jsonl"))


def test_unknown_key_in_a_turn_is_rejected(tmp_path: Path) -> None:
    doc = json.loads(save_dataset(conv_dataset(), tmp_path / "d.json").read_text("utf-8"))
    doc["conversations"][0]["sessions"][0]["turns"][0]["img_url"] = "x"
    (tmp_path / "d.json").write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match=r"conversations\.0\.sessions\.0\.turns\.0\.img_url"):
        load_dataset(tmp_path / "d.json")


def test_schema_documents_the_conversation_model() -> None:
    defs = dataset_json_schema()["$defs"]
    assert {"Conversation", "Session", "Turn"} <= set(defs)
    for name in ("Conversation", "Session", "Turn"):
        for field, prop in defs[name]["properties"].items():
            assert prop.get("description"), f"{name}.{field} has no description"
    query = defs["Query"]["properties"]
    assert {"conversation_id", "adversarial_answer", "asked_at"} <= set(query)
    assert "conversations" in dataset_json_schema()["properties"]


# --- conversations as memories ------------------------------------------------------------


def test_turn_memories_one_per_turn_with_speaker_caption_and_date() -> None:
    ds = conv_dataset()
    view = ds.with_turn_memories()
    assert [m.id for m in view.memories] == ["m1"] + [
        f"c{c}/{t}" for c in (1, 2) for t in range(1, 5)
    ]
    bike = next(m for m in view.memories if m.id == "c1/2")
    assert bike.text == "Ben: Look at my new bike! [shares a photo of a red bicycle]"
    assert bike.timestamp == datetime(2023, 5, 8, 13, 56)
    assert bike.metadata == {"conversation": "c1", "session": "s1"}
    assert next(m for m in view.memories if m.id == "c2/4").text == "Cai: Slowly, but I enjoy it."
    assert [q.metadata.get("conversation") for q in view.queries] == [None, "c1", "c1", "c2"]
    # Evidence already names turn ids, so every relevant id is now a memory id.
    ids = {m.id for m in view.memories}
    assert all(set(q.relevant_ids) <= ids for q in view.queries)
    # The view is derived: it keeps the source's hash, and leaves the source alone.
    assert view.info.content_hash == ds.with_hash().info.content_hash
    assert ds.memories == [Memory(id="m1", text="The office moved to Porto.")]
    assert "conversation" not in ds.queries[1].metadata


def test_turn_memories_of_one_conversation(tmp_path: Path) -> None:
    view = conv_dataset().with_turn_memories("c2")
    assert [m.id for m in view.memories] == ["c2/1", "c2/2", "c2/3", "c2/4"]
    assert [q.id for q in view.queries] == ["c2/q1"]
    assert [c.id for c in view.conversations] == ["c2"]
    # A saved view is still a consistent dataset (memories carry their turn's ids).
    again = load_dataset(save_dataset(view, tmp_path / "v.json"))
    assert len(again.memories) == 4
    with pytest.raises(KeyError):
        conv_dataset().with_turn_memories("c9")
