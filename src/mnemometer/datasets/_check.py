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

    memory_conv: dict[str, object] = {}
    for i, m in enumerate(ds.memories):
        if m.id in memory_conv:
            raise fail("memories", i, "id", f"repeated memory id {m.id!r}")
        memory_conv[m.id] = m.metadata.get("conversation")

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

    qids: set[str] = set()
    for i, q in enumerate(ds.queries):
        if q.id in qids:
            raise fail("queries", i, "id", f"repeated query id {q.id!r}")
        qids.add(q.id)
        if q.conversation_id is None:
            missing = [x for x in q.relevant_ids if x not in memory_conv]
            if missing:
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
