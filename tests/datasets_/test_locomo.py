"""The LoCoMo reader on the real locomo10.json (read from ../shared, never copied)."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from functools import cache
from pathlib import Path

import pytest
from conftest import invoke_cli, seed_file

from mnemometer.datasets import LOCOMO_CATEGORIES, Dataset, Query, load_dataset, save_dataset
from mnemometer.datasets._locomo import parse_locomo_date


@cache
def _locomo() -> Dataset:
    return load_dataset(seed_file("locomo", "locomo10.json"))


@pytest.fixture
def locomo() -> Dataset:
    return _locomo().model_copy(deep=True)


@cache
def _raw() -> list[dict]:
    return json.loads(seed_file("locomo", "locomo10.json").read_text("utf-8"))


def test_counts(locomo: Dataset) -> None:
    assert [c.id for c in locomo.conversations] == [
        f"conv-{n}" for n in (26, 30, 41, 42, 43, 44, 47, 48, 49, 50)
    ]
    assert sum(len(c.sessions) for c in locomo.conversations) == 272
    assert sorted(len(c.sessions) for c in locomo.conversations)[::9] == [19, 32]
    turns = [t for c in locomo.conversations for _, t in c.turns()]
    assert len(turns) == 5882
    assert sum(len(t.text.split()) for t in turns) == 133_772
    assert sum(t.caption is not None for t in turns) == 1226
    assert sum("img_url" in t.metadata for t in turns) == 910
    assert len(locomo.queries) == 1986
    assert Counter(q.type for q in locomo.queries) == {
        "multi-hop": 282,
        "temporal": 321,
        "open-domain": 96,
        "single-hop": 841,
        "adversarial": 446,
    }
    assert len(locomo.memories) == 0
    assert locomo.info.licence == "CC BY-NC 4.0" and locomo.info.language == "en"


def test_category_map_is_the_official_one() -> None:
    # snap-research/LoCoMo task_eval/evaluation_stats.py CATEGORY_MAPPING.
    assert LOCOMO_CATEGORIES == {
        1: "multi-hop",
        2: "temporal",
        3: "open-domain",
        4: "single-hop",
        5: "adversarial",
    }


def test_category_5_is_exactly_the_adversarial_questions() -> None:
    raw = [q for sample in _raw() for q in sample["qa"]]
    adversarial = [q for q in raw if "adversarial_answer" in q]
    assert {q["category"] for q in adversarial} == {5}
    assert len(adversarial) == sum(q["category"] == 5 for q in raw) == 446
    assert all("answer" in q for q in raw if q["category"] != 5)
    assert sum("answer" not in q for q in adversarial) == 444


def _sessions_of(ds: Dataset, q: Query) -> set[str]:
    conv = ds.conversation(q.conversation_id)
    where = {t.id: s.id for s, t in conv.turns()}
    return {where[t] for t in q.relevant_ids}


def _share(qs: list[Query], pred) -> float:
    return sum(1 for q in qs if pred(q)) / len(qs)


def test_category_names_match_what_the_questions_do(locomo: Dataset) -> None:
    by = {
        name: [q for q in locomo.queries if q.type == name] for name in LOCOMO_CATEGORIES.values()
    }

    def spans(q: Query) -> bool:
        return len(_sessions_of(locomo, q)) > 1

    def when(q: Query) -> bool:
        return q.text.lower().startswith("when")

    def would(q: Query) -> bool:
        return re.search(r"\b(would|likely|might)\b", q.text.lower()) is not None

    # Single-hop evidence is one place; multi-hop evidence is nearly always several sessions.
    assert _share(by["single-hop"], spans) < 0.01  # one of 841 cites a second session
    assert _share(by["multi-hop"], spans) > 0.9
    # Temporal questions ask "When ..."; no other category does, beyond a stray few.
    assert _share(by["temporal"], when) > 0.7
    assert all(_share(by[n], when) < 0.05 for n in by if n != "temporal")
    # Open-domain (world-knowledge) questions ask what someone would, might or likely do.
    assert _share(by["open-domain"], would) > 0.3
    assert all(_share(by[n], would) < 0.01 for n in by if n != "open-domain")
    # Adversarial questions carry the tempting wrong answer; the others the right one.
    assert all(q.adversarial_answer for q in by["adversarial"])
    assert sum(q.answer is None for q in by["adversarial"]) == 444
    assert all(
        q.answer and not q.adversarial_answer for n in by if n != "adversarial" for q in by[n]
    )
    assert {q.metadata["category"] for q in by["temporal"]} == {2}


def test_evidence_problems_are_counted_in_notes(locomo: Dataset) -> None:
    notes = locomo.info.notes

    def note(prefix: str) -> str:
        found = [n for n in notes if n.startswith(prefix)]
        assert len(found) == 1, (prefix, notes)
        return found[0]

    assert note("2815 evidence strings in 1986 questions")
    assert "conv-50 'D30:05' -> D30:5" in note("1 evidence ids written with a leading zero")
    assert "conv-26 'D8:6; D9:17'" in note("5 malformed evidence strings split or repaired into 14")
    assert note("1 malformed evidence strings name no turn and were dropped: conv-42 'D'")
    assert note("2 evidence ids point to turns that do not exist and were dropped: ").endswith(
        "conv-42 D10:19, conv-47 D4:36"
    )
    assert note("1 evidence ids repeated within a question kept once: conv-50 D4:5")
    assert note("4 questions have no evidence (4 list none)")
    # Every changed question keeps its evidence as written; nothing else is marked.
    changed = {q.id: q for q in locomo.queries if "evidence" in q.metadata}
    assert len(changed) == 10
    q = changed["conv-26/q038"]
    assert q.metadata["evidence"] == ["D8:6; D9:17"]
    assert q.relevant_ids == ["conv-26/D8:6", "conv-26/D9:17"]
    assert changed["conv-47/q039"].relevant_ids == ["conv-47/D18:1", "conv-47/D18:7"]
    assert changed["conv-43/q019"].relevant_ids[4] == "conv-43/D11:26"
    # Nothing dangles after reading: every evidence id is a turn of its conversation.
    for q in locomo.queries:
        turns = {t.id for _, t in locomo.conversation(q.conversation_id).turns()}
        assert set(q.relevant_ids) <= turns
    assert sum(not q.relevant_ids for q in locomo.queries) == 4


def test_session_dates(locomo: Dataset) -> None:
    first = locomo.conversations[0]
    assert first.sessions[0].id == "session_1"
    assert first.sessions[0].date == datetime(2023, 5, 8, 13, 56)  # "1:56 pm on 8 May, 2023"
    assert first.sessions[-1].date == datetime(2023, 10, 22, 9, 55)
    assert all(s.date is not None for c in locomo.conversations for s in c.sessions)
    assert not any(s.metadata for c in locomo.conversations for s in c.sessions)
    assert any(
        n == "16 session dates without a session ignored: conv-26 session_20 to session_35"
        for n in locomo.info.notes
    )
    # Sessions are in order and so are their dates, in every conversation.
    for c in locomo.conversations:
        assert [s.id for s in c.sessions] == [f"session_{n}" for n in range(1, len(c.sessions) + 1)]
        dates = [s.date for s in c.sessions]
        assert dates == sorted(dates), c.id


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9)),
        ("12:30 pm on 1 January, 2024", datetime(2024, 1, 1, 12, 30)),
        ("10:04 AM on 19 December 2023", datetime(2023, 12, 19, 10, 4)),
        ("13:00 pm on 8 May, 2023", None),
        ("1:56 pm on 31 February, 2023", None),
        ("8 May 2023", None),
    ],
)
def test_parse_locomo_date(text: str, expected: datetime | None) -> None:
    assert parse_locomo_date(text) == expected


def test_turns_and_their_memories(locomo: Dataset) -> None:
    conv = locomo.conversation("conv-26")
    turn = next(t for _, t in conv.turns() if t.id == "conv-26/D1:5")
    assert turn.speaker == "Caroline" and conv.speakers == ["Caroline", "Melanie"]
    assert turn.caption == "a photo of a dog walking past a wall with a painting of a woman"
    assert turn.metadata == {
        "img_url": ["https://i.redd.it/l7hozpetnhlb1.jpg"],
        "query": "transgender pride flag mural",
    }
    view = locomo.with_turn_memories("conv-26")
    assert len(view.memories) == len(conv.turns()) == 419
    m = next(m for m in view.memories if m.id == "conv-26/D1:5")
    assert m.text.startswith("Caroline: The transgender stories were so inspiring!")
    assert m.text.endswith(
        "[shares a photo of a dog walking past a wall with a painting of a woman]"
    )
    assert m.timestamp == datetime(2023, 5, 8, 13, 56)
    assert len(view.queries) == 199 and all(
        q.metadata["conversation"] == "conv-26" for q in view.queries
    )
    sunrise = next(q for q in view.queries if q.text == "When did Melanie paint a sunrise?")
    assert sunrise.answer == "2022" and sunrise.relevant_ids == ["conv-26/D1:12"]


def test_native_round_trip_and_order(locomo: Dataset, tmp_path: Path) -> None:
    again = load_dataset(save_dataset(locomo, tmp_path / "locomo.jsonl"))
    assert again.info.content_hash == locomo.info.content_hash
    assert again.conversations == locomo.conversations and again.queries == locomo.queries
    # The same samples in another order are the same content...
    raw = _raw()
    (tmp_path / "reversed.json").write_text(json.dumps(raw[::-1]))
    assert load_dataset(tmp_path / "reversed.json").info.content_hash == locomo.info.content_hash
    # ...but turn order within a session, and question order within a sample, are content.
    swapped = json.loads(json.dumps(raw))
    turns = swapped[0]["conversation"]["session_1"]
    turns[0], turns[1] = turns[1], turns[0]
    (tmp_path / "turns.json").write_text(json.dumps(swapped))
    assert load_dataset(tmp_path / "turns.json").info.content_hash != locomo.info.content_hash
    swapped = json.loads(json.dumps(raw))
    qa = swapped[3]["qa"]
    qa[0], qa[1] = qa[1], qa[0]
    (tmp_path / "qa.json").write_text(json.dumps(swapped))
    assert load_dataset(tmp_path / "qa.json").info.content_hash != locomo.info.content_hash


def test_retrieval_suite_scores_evidence_on_one_conversation(
    locomo: Dataset, tmp_path: Path
) -> None:
    # The user's path: save one conversation's turn memories, run the retrieval suite on it.
    view = locomo.with_turn_memories("conv-30")
    path = save_dataset(view, tmp_path / "conv-30.json")
    res = invoke_cli(
        "run", "retrieval", "--dataset", path, "--store", "bm25", "--out", tmp_path / "r"
    )
    assert res.exit_code == 0, res.output
    items = [json.loads(line) for line in (tmp_path / "r/items.jsonl").read_text().splitlines()]
    assert len(items) == len(view.queries) == 105
    relevant = {q.id: set(q.relevant_ids) for q in view.queries}
    hits = [
        any(h["id"] in relevant[it["item_id"]] for h in it["retrieved"][:10])
        for it in items
        if relevant[it["item_id"]]
    ]
    # Every hit is a turn of conv-30; BM25 finds some evidence in the top 10, far from all.
    assert all(h["id"].startswith("conv-30/D") for it in items for h in it["retrieved"])
    assert len(hits) == 105 and 0.2 < sum(hits) / len(hits) < 0.95


def test_every_repair_is_counted_on_a_hand_written_sample(tmp_path: Path) -> None:
    sample = {
        "sample_id": "s",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "9:00 am on 2 March, 2024",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Hi Ana."},
            ],
            "session_2_date_time": "the next day",
            "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "Bye."}],
            "session_3_date_time": "9:00 am on 9 March, 2024",
        },
        "qa": [
            {"question": "a?", "answer": "x", "evidence": ["D1:1; X9", "D1:01"], "category": 4},
            {"question": "b?", "answer": "y", "evidence": ["D9:9", "D2:1", "D2:1"], "category": 7},
        ],
    }
    p = tmp_path / "mini_locomo.json"
    p.write_text(json.dumps([sample]))
    ds = load_dataset(p)
    a, b = ds.queries
    assert a.relevant_ids == ["s/D1:1"] and a.metadata["evidence"] == ["D1:1; X9", "D1:01"]
    assert b.relevant_ids == ["s/D2:1"] and b.type == "category-7"
    assert ds.conversations[0].sessions[1].date is None
    assert ds.conversations[0].sessions[1].metadata == {"date": "the next day"}
    assert ds.info.notes == [
        "5 evidence strings in 2 questions; questions whose evidence was changed keep it as "
        "written in metadata['evidence']",
        "1 evidence ids written with a leading zero read without it: s 'D1:01' -> D1:1",
        "1 malformed evidence strings split or repaired into 1 turn ids: s 'D1:1; X9'",
        "1 malformed evidence strings name no turn and were dropped: s 'X9' (in 'D1:1; X9')",
        "1 evidence ids point to turns that do not exist and were dropped: s D9:9",
        "2 evidence ids repeated within a question kept once: s D1:1, s D2:1",
        "1 session dates without a session ignored: s session_3",
        "1 session dates not understood (kept as text in the session's metadata['date']): "
        "s session_2 'the next day'",
        "1 questions with an unknown category typed 'category-<n>': s/q002 7",
    ]
