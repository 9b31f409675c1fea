"""Adversaries shared by the tests that check a score cannot be gamed: stores that know one
trick, and the same dataset in another file order or with its ids spelled otherwise."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

from mnemometer.datasets import Dataset
from mnemometer.stores._protocol import Hit
from mnemometer.stores.bm25 import BM25Store


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
        mids.sort(key=str if self.by_id else self.first.__getitem__)  # by_id: in id order
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


def renamed(ds: Dataset, rename: Callable[[str], str]) -> Dataset:
    """``ds`` with every memory id spelled ``rename(id)`` (and every reference to one)."""
    out = ds.model_copy(deep=True)
    for m in out.memories:
        m.id = rename(m.id)
    for q in out.queries:
        q.relevant_ids = [rename(x) for x in q.relevant_ids]
        if isinstance(q.metadata.get("order"), list):
            q.metadata["order"] = [rename(x) for x in q.metadata["order"]]
    out.info.content_hash = None
    return out


def redealt(ds: Dataset) -> dict[str, str]:
    """A seeded shuffle of ``ds``'s ids among its memories: whatever id order said is gone."""
    ids = [m.id for m in ds.memories]
    return dict(zip(ids, random.Random(11).sample(ids, len(ids)), strict=True))


class AdjacentIdStore(BM25Store):
    """BM25, and the memories whose ids sort next to the best hit, nearest first.

    MemTest's seed files number a cluster's or a chain's memories contiguously, so the
    id-neighbours of a memory are its mates: a store given those ids finds them without
    reading a word. A search for a stored text returns that memory and its neighbours (the
    memtest suite's cluster probes); any other search is BM25's ranking, with the
    neighbours within ``boost`` ids of its best hit moved up (0: plain BM25).
    """

    boost: ClassVar[int] = 0

    def search(self, query: str, top_k: int) -> list[Hit]:
        ids = sorted(set(self._ids))
        if query in self._texts:
            at = ids.index(self._ids[self._texts.index(query)])
            near = sorted(range(len(ids)), key=lambda i: (abs(i - at), i))
            return [Hit(ids[i], 1.0 / (1 + r)) for r, i in enumerate(near[:top_k])]
        hits = super().search(query, top_k * 10)
        if not hits or not self.boost:
            return hits[:top_k]
        pos = {m: i for i, m in enumerate(ids)}
        at = pos[hits[0].memory_id]
        near = [h for h in hits[1:] if abs(pos[h.memory_id] - at) <= self.boost]
        rest = [h for h in hits[1:] if abs(pos[h.memory_id] - at) > self.boost]
        return [hits[0], *near, *rest][:top_k]


class IdleDeletionStore(BM25Store):
    """BM25 on a simulated clock that deletes every memory no search has returned for
    ``idle_days`` (counted from when it was given, or, without ``since_given``, only for
    memories some search has returned: what was found once and never again goes)."""

    idle_days: ClassVar[int] = 70
    since_given: ClassVar[bool] = True

    def reset(self) -> None:
        super().reset()
        self.now: datetime | None = None
        self.last: dict[str, datetime | None] = {}
        self.gone: set[str] = set()
        self.most_gone = getattr(self, "most_gone", 0)  # over the store's life, not reset

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        super().store(text, metadata)
        self.last[str(metadata["memory_id"])] = self.now if self.since_given else None

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        for text, metadata in items:
            self.store(text, metadata)

    def set_time(self, now: datetime) -> None:
        self.now = now
        idle = timedelta(days=self.idle_days)
        self.gone |= {m for m, t in self.last.items() if t is not None and now - t > idle}
        self.most_gone = max(self.most_gone, len(self.gone))

    def search(self, query: str, top_k: int) -> list[Hit]:
        hits = super().search(query, top_k + len(self.gone))
        hits = [h for h in hits if h.memory_id not in self.gone][:top_k]
        for h in hits:
            self.last[h.memory_id] = self.now
        return hits


class FoundOnceDeletionStore(IdleDeletionStore):
    since_given: ClassVar[bool] = False


class NamesOnlyStore(BM25Store):
    """BM25 over the names in each memory only, never its content: its capitalised words,
    and the ``names`` the test gives it (people and places, for scripts without capitals).
    """

    names: ClassVar[list[str]] = []

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        kept = re.findall(r"\b[A-Z][\w'-]*", text) + [n for n in self.names if n in text]
        super().store(" ".join(kept), metadata)

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        for text, metadata in items:
            self.store(text, metadata)
