"""Consistency checks every loaded dataset passes: unique ids, nothing dangling."""

from __future__ import annotations

from pathlib import Path

from mnemometer.datasets._models import Dataset
from mnemometer.errors import DatasetError


def check_dataset(
    ds: Dataset, path: str | Path, lines: dict[tuple[str, int], int] | None = None
) -> Dataset:
    """Check that ``ds`` is internally consistent and return it.

    Memory, conversation, turn and query ids are unique (turn ids across the dataset: they
    become memory ids); session ids are unique within their conversation; a turn's speaker
    is one of its conversation's speakers (when those are listed); a question names an
    existing conversation and its evidence names turns of that conversation; any other
    query's ``relevant_ids`` name memories.

    Args:
        ds: the dataset.
        path: the file, for messages.
        lines: ``(collection, index) -> line`` for a JSONL file, so messages name the line.

    Raises:
        DatasetError: ``file: field.path: problem`` (``file:line: field.path: problem`` for
            JSONL).
    """

    def fail(collection: str, index: int, field: str, problem: str) -> DatasetError:
        line = (lines or {}).get((collection, index))
        if line is not None:
            return DatasetError(f"{path}:{line}: {field}: {problem}")
        return DatasetError(f"{path}: {collection}.{index}.{field}: {problem}")

    memory_ids = [m.id for m in ds.memories]
    memory_set = set(memory_ids)
    if len(memory_set) != len(memory_ids):
        i, repeated = _first_repeat(memory_ids)
        raise fail("memories", i, "id", f"repeated memory id {repeated!r}")
    # Which conversation a memory is a turn of: only turn ids may repeat as memory ids.
    memory_conv = (
        {m.id: m.metadata.get("conversation") for m in ds.memories} if ds.conversations else {}
    )

    turns_of: dict[str, set[str]] = {}
    all_turns: set[str] = set()
    for i, c in enumerate(ds.conversations):
        if c.id in turns_of:
            raise fail("conversations", i, "id", f"repeated conversation id {c.id!r}")
        mine: set[str] = set()
        sessions: set[str] = set()
        speakers = set(c.speakers)
        for j, s in enumerate(c.sessions):
            if s.id in sessions:
                raise fail("conversations", i, f"sessions.{j}.id", f"repeated session id {s.id!r}")
            sessions.add(s.id)
            for k, t in enumerate(s.turns):
                where = f"sessions.{j}.turns.{k}"
                if t.id in all_turns:
                    raise fail("conversations", i, f"{where}.id", f"repeated turn id {t.id!r}")
                # A memory may carry a turn's id only when it is that turn (a saved
                # with_turn_memories() view); anything else makes retrieval ambiguous.
                if t.id in memory_conv and memory_conv[t.id] != c.id:
                    raise fail(
                        "conversations", i, f"{where}.id", f"turn id {t.id!r} is also a memory id"
                    )
                if speakers and t.speaker not in speakers:
                    raise fail(
                        "conversations",
                        i,
                        f"{where}.speaker",
                        f"{t.speaker!r} is not one of the speakers ({', '.join(c.speakers)})",
                    )
                all_turns.add(t.id)
                mine.add(t.id)
        turns_of[c.id] = mine

    query_ids = [q.id for q in ds.queries]
    repeat = _first_repeat(query_ids) if len(set(query_ids)) != len(query_ids) else (-1, "")
    for i, q in enumerate(ds.queries):
        if i == repeat[0]:  # checked in file order, so the first problem is the one named
            raise fail("queries", i, "id", f"repeated query id {repeat[1]!r}")
        if q.conversation_id is None:
            if not memory_set.issuperset(q.relevant_ids):
                missing = [x for x in q.relevant_ids if x not in memory_set]
                raise fail("queries", i, "relevant_ids", f"{missing[0]!r} is not a memory id")
            continue
        turns = turns_of.get(q.conversation_id)
        if turns is None:
            raise fail(
                "queries", i, "conversation_id", f"{q.conversation_id!r} is not a conversation id"
            )
        missing = [x for x in q.relevant_ids if x not in turns]
        if missing:
            raise fail(
                "queries",
                i,
                "relevant_ids",
                f"{missing[0]!r} is not a turn of conversation {q.conversation_id!r}",
            )
    return ds


def _first_repeat(ids: list[str]) -> tuple[int, str]:
    """The index and value of the first id that repeats an earlier one."""
    seen: set[str] = set()
    for i, x in enumerate(ids):
        if x in seen:
            return i, x
        seen.add(x)
    raise AssertionError("no repeated id")  # callers check that one repeats
