"""The LongMemEval reader on a hand-written fixture (the real data is not available offline).

``tests/data/longmemeval_mini.json`` was written for these tests in the documented format
(xiaowu0162/LongMemEval README); no line of it comes from the dataset.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from conftest import REPO

from mnemometer.datasets import Dataset, load_dataset, save_dataset
from mnemometer.datasets._longmemeval import parse_longmemeval_date
from mnemometer.errors import DatasetError

MINI = REPO / "tests/data/longmemeval_mini.json"


@pytest.fixture
def lme() -> Dataset:
    return load_dataset(MINI)


def test_one_conversation_per_question(lme: Dataset) -> None:
    assert [c.id for c in lme.conversations] == [q.id for q in lme.queries]
    assert [q.id for q in lme.queries] == ["mini_0001", "mini_0002", "mini_0003", "mini_0004_abs"]
    assert [q.conversation_id for q in lme.queries] == [c.id for c in lme.conversations]
    assert [len(c.sessions) for c in lme.conversations] == [3, 3, 2, 2]
    assert all(c.speakers == ["assistant", "user"] for c in lme.conversations)
    assert (
        lme.info.licence == "MIT" and lme.info.source == "LongMemEval JSON: longmemeval_mini.json"
    )


def test_sessions_turns_and_dates(lme: Dataset) -> None:
    first = lme.conversations[0]
    assert [s.id for s in first.sessions] == [
        "mini_s_noise_01",
        "answer_mini_0001_1",
        "mini_s_shared",
    ]
    assert first.sessions[0].date == datetime(2023, 5, 20, 2, 21)  # "2023/05/20 (Sat) 02:21"
    s = first.sessions[1]
    assert [t.id for t in s.turns] == [f"mini_0001/answer_mini_0001_1/{n}" for n in range(1, 5)]
    assert [t.speaker for t in s.turns] == ["user", "assistant", "user", "assistant"]
    assert s.turns[0].text == "I finally repainted my old bike teal last weekend."
    assert s.turns[0].metadata == {}  # has_answer is ground truth: it lives in the question


def test_shared_sessions_are_isolated_per_question(lme: Dataset) -> None:
    # The same haystack session appears under two questions: its turns get two ids.
    shared = [
        t.id
        for c in lme.conversations
        for s in c.sessions
        if s.id == "mini_s_shared"
        for t in s.turns
    ]
    assert shared == [
        "mini_0001/mini_s_shared/1",
        "mini_0001/mini_s_shared/2",
        "mini_0002/mini_s_shared/1",
        "mini_0002/mini_s_shared/2",
    ]


def test_questions(lme: Dataset) -> None:
    q1, q2, q3, q4 = lme.queries
    assert q1.type == "single-session-user" and q1.answer == "Teal"
    assert q1.relevant_ids == ["mini_0001/answer_mini_0001_1/1"]
    assert q1.asked_at == datetime(2023, 6, 2, 18, 5)
    assert q1.metadata == {"answer_session_ids": ["answer_mini_0001_1"]}
    assert q2.type == "temporal-reasoning" and q2.answer == "9"  # a number in the file
    assert q2.relevant_ids == ["mini_0002/answer_mini_0002_1/1", "mini_0002/answer_mini_0002_2/1"]
    assert q3.type == "knowledge-update" and len(q3.relevant_ids) == 2
    # Abstention: nothing answers it, so nothing is relevant; the marked turn is kept aside.
    assert q4.type == "single-session-user" and q4.relevant_ids == [] and q4.is_negative
    assert q4.metadata["abstention"] is True
    assert q4.metadata["has_answer_turn_ids"] == ["mini_0004_abs/answer_mini_0004_1/1"]
    assert lme.info.notes == [
        "1 abstention questions ('_abs') have no relevant turns; their marked turns are in "
        "metadata['has_answer_turn_ids']"
    ]


def test_turn_memories_carry_the_session_date(lme: Dataset) -> None:
    view = lme.with_turn_memories("mini_0002")
    assert [m.id for m in view.memories][:2] == [
        "mini_0002/answer_mini_0002_1/1",
        "mini_0002/answer_mini_0002_1/2",
    ]
    m = view.memories[0]
    assert m.text == "user: I just got back from the dentist, no cavities this time."
    assert m.timestamp == datetime(2023, 3, 3, 8, 15)
    assert m.metadata == {"conversation": "mini_0002", "session": "answer_mini_0002_1"}


def test_round_trip(lme: Dataset, tmp_path: Path) -> None:
    for name in ("lme.json", "lme.jsonl"):
        again = load_dataset(save_dataset(lme, tmp_path / name))
        assert again.info.content_hash == lme.info.content_hash
        assert again.conversations == lme.conversations and again.queries == lme.queries


def _write(tmp_path: Path, mutate) -> Path:
    doc = json.loads(MINI.read_text("utf-8"))
    mutate(doc)
    p = tmp_path / "lme.json"
    p.write_text(json.dumps(doc))
    return p


def test_question_order_is_not_content_but_haystack_order_is(lme: Dataset, tmp_path: Path) -> None:
    assert load_dataset(_write(tmp_path, lambda d: d.reverse())).info.content_hash == (
        lme.info.content_hash
    )

    def swap_sessions(d: list) -> None:
        for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
            d[0][key].reverse()

    assert load_dataset(_write(tmp_path, swap_sessions)).info.content_hash != lme.info.content_hash


def test_malformed_questions_name_the_question_and_key(tmp_path: Path) -> None:
    def short_dates(d: list) -> None:
        d[1]["haystack_dates"].pop()

    with pytest.raises(
        DatasetError,
        match=r"lme\.json: \[1\]: haystack_session_ids, .* differ in length \(3, 2, 3\)",
    ):
        load_dataset(_write(tmp_path, short_dates))

    def no_role(d: list) -> None:
        del d[2]["haystack_sessions"][1][0]["role"]

    with pytest.raises(DatasetError, match=r"\[2\]\.haystack_sessions\.1\.0: expected a turn"):
        load_dataset(_write(tmp_path, no_role))

    def no_id(d: list) -> None:
        del d[0]["question_id"]

    with pytest.raises(DatasetError, match=r"\[0\]\.question_id: missing"):
        load_dataset(_write(tmp_path, no_id), format="longmemeval")


def test_repeated_session_ids_and_odd_dates_are_noted(tmp_path: Path) -> None:
    def mutate(d: list) -> None:
        d[0]["haystack_session_ids"][2] = d[0]["haystack_session_ids"][0]
        d[0]["haystack_dates"][1] = "sometime in May"

    ds = load_dataset(_write(tmp_path, mutate))
    assert [s.id for s in ds.conversations[0].sessions] == [
        "mini_s_noise_01",
        "answer_mini_0001_1",
        "mini_s_noise_01#2",
    ]
    assert ds.conversations[0].sessions[1].date is None
    assert ds.conversations[0].sessions[1].metadata == {"date": "sometime in May"}
    assert "1 repeated session ids in a haystack made unique with '#<n>'" in ds.info.notes
    assert "1 dates not understood (kept as text in metadata['date'])" in ds.info.notes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023/05/30 (Tue) 23:40", datetime(2023, 5, 30, 23, 40)),
        ("2023/05/30 23:40", datetime(2023, 5, 30, 23, 40)),
        ("2023/05/30", datetime(2023, 5, 30)),
        ("2023/02/30 (Thu) 10:00", None),
        ("30 May 2023", None),
    ],
)
def test_parse_longmemeval_date(text: str, expected: datetime | None) -> None:
    assert parse_longmemeval_date(text) == expected
