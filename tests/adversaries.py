"""Adversaries shared by the tests that check a score cannot be gamed: stores that know one
trick, and the same dataset in another file order."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, ClassVar

from mnemometer.datasets import Dataset


class OrderReplayStore:
    """An adversary that knows nothing but order: a query naming a person gets every memory
    that names that person, in the order the store was given them (or by id).

    ``names`` (longest first) is set by the test: the people of the dataset.
    """

    names: ClassVar[list[str]] = []
    by_id: ClassVar[bool] = False

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.first: dict[str, int] = {}
        self.people: dict[str, dict[str, None]] = defaultdict(dict)

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        mid = metadata["memory_id"]
        self.first.setdefault(mid, len(self.first))
        for name in self.names:
            if name in text:
                self.people[name][mid] = None

    def search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        name = next((n for n in self.names if n in query), None)
        if name is None:
            return []
        mids = list(self.people[name])
        mids.sort(key=(lambda m: int(m[1:])) if self.by_id else self.first.__getitem__)
        return [{"memory_id": m, "score": 1.0 / (1 + r)} for r, m in enumerate(mids[:top_k])]


def permuted(ds: Dataset, how: str) -> Dataset:
    """``ds`` with its memories ``reversed`` or ``shuffled`` (seeded): same content, new order."""
    out = ds.model_copy(deep=True)
    if how == "reversed":
        out.memories.reverse()
    else:
        random.Random(7).shuffle(out.memories)
    out.info.content_hash = None
    return out


class SessionSpreadStore:
    """An adversary of session-level retrieval rules: one turn from each session.

    It ranks sessions as bm25 ranks their turns (a session where bm25's best hit for the
    query sits ranks first), then answers with each session's *first* turn, never the one
    bm25 found. A rule that only asks whether a hit's session holds evidence scores it as
    well as bm25; a rule that asks for the evidence turn itself sees almost nothing.
    """

    def __init__(self) -> None:
        from mnemometer.stores.bm25 import BM25Store

        self.bm25 = BM25Store()
        self.reset()

    def reset(self) -> None:
        self.bm25.reset()
        self.session: dict[str, str] = {}
        self.first: dict[str, str] = {}

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        mid, session = metadata["memory_id"], metadata["session"]
        self.session[mid] = session
        self.first.setdefault(session, mid)
        self.bm25.store(text, metadata)

    def flush(self) -> None:
        self.bm25.flush()

    def search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        ranked = self.bm25.search(query, len(self.session))
        sessions = list(dict.fromkeys(self.session[h.memory_id] for h in ranked))
        turns = [self.first[s] for s in sessions][:top_k]
        return [{"memory_id": m, "score": 1.0 / (1 + r)} for r, m in enumerate(turns)]


class RandomStore:
    """A store that knows nothing: a random order of what it holds, seeded by the query."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.ids: list[str] = []

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        self.ids.append(metadata["memory_id"])

    def search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        drawn = random.Random(f"random-store/{query}").sample(self.ids, min(top_k, len(self.ids)))
        return [{"memory_id": m, "score": 1.0 / (1 + r)} for r, m in enumerate(drawn)]
