"""Adversary stores shared by the tests that check a score cannot be gamed."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, ClassVar


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
