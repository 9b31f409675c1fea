"""Conformance kit for store authors: ``check_store(store)`` in your own CI."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.stores._protocol import (
    DeletableStore,
    Flushable,
    Hit,
    ListableStore,
    Persistent,
    capabilities,
)

_DOCS = [
    ("c1", "The lighthouse keeper repaints the red door every spring."),
    ("c2", "Marta bought three kilograms of blueberries at the harbour market."),
    ("c3", "The quarterly budget review moved from Tuesday to Thursday afternoon."),
    ("c4", "张伟在杭州西湖边的茶馆买了两斤龙井茶。"),
    ("c5", "Our team retrospective happens on the first Monday of each month."),
]


#: Identical texts under shuffled ids (neither insertion nor id order), for the tie check.
_TIE_TEXT = "The archive room smells of cedar wood and old paper."
_TIE_IDS = ["t5", "t2", "t7", "t0", "t3", "t6", "t1", "t4"]
#: One memory stored as several stylistic versions, for the duplicate check.
_VERSIONS = [
    ("v1", "Grandma's recipe for plum dumplings uses cinnamon and butter."),
    ("v1", "The plum dumplings recipe from grandma calls for butter and cinnamon."),
    ("v1", "Plum dumplings, grandma's way: cinnamon, butter, plums."),
    ("v2", "The bicycle chain needs oil before the autumn rains."),
]


@dataclass
class Check:
    """One conformance check and its outcome."""

    name: str
    ok: bool
    detail: str = ""
    warning: bool = False
    """A warning: reported, but it does not fail the store."""

    @property
    def label(self) -> str:
        """``PASS``, ``WARN`` or ``FAIL``."""
        return "PASS" if self.ok else "WARN" if self.warning else "FAIL"


@dataclass
class ConformanceReport:
    """All checks run against one store."""

    checks: list[Check] = field(default_factory=list)
    capabilities: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every check passed (warnings do not count against it)."""
        return all(c.ok or c.warning for c in self.checks)

    @property
    def warnings(self) -> list[Check]:
        """The warnings raised."""
        return [c for c in self.checks if c.warning and not c.ok]

    def __str__(self) -> str:
        lines = [
            f"{c.label}  {c.name}" + (f": {c.detail}" if c.detail else "") for c in self.checks
        ]
        lines.append(f"capabilities: {', '.join(self.capabilities) or '(none)'}")
        return "\n".join(lines)


def check_store(store: Any, *, raise_on_failure: bool = False) -> ConformanceReport:
    """Run the conformance checks against ``store`` (it is reset first and left reset).

    Checks: the three methods exist; every stored text is found by an exact self-query in the
    top 5 with its own id; ``top_k`` is respected; hits name only stored ids and come best
    first; Chinese text works; an empty query does not raise; ``reset`` forgets; and the
    optional capabilities it declares (``list_ids``, ``delete``) behave.

    Warnings (reported as ``WARN``; they do not fail the store): equal scores come back in
    insertion order or id order (either leaks the dataset file's order into the ranking:
    break ties by something that carries no information, e.g. a seeded hash of the id),
    and one result names the same memory id more than once (one hit per stored version).

    Args:
        store: the store to check.
        raise_on_failure: raise ``AssertionError`` with the report when a check fails.
    """
    rep = ConformanceReport(capabilities=capabilities(store))

    def check(name: str, fn: Callable[[], str | None], warning: bool = False) -> None:
        try:
            problem = fn()
        except Exception as e:
            rep.checks.append(Check(name, False, f"raised {type(e).__name__}: {e}", warning))
        else:
            rep.checks.append(Check(name, problem is None, problem or "", warning))

    missing = [m for m in ("reset", "store", "search") if not callable(getattr(store, m, None))]
    rep.checks.append(Check("has reset/store/search", not missing, ", ".join(missing)))
    if missing:
        return _finish(rep, raise_on_failure)

    def load() -> None:
        store.reset()
        for mid, text in _DOCS:
            store.store(text, {"memory_id": mid, "timestamp": "2026-01-01T00:00:00"})
        if isinstance(store, Flushable):
            store.flush()

    def search(q: str, k: int) -> list[Hit]:
        return [Hit.coerce(h) for h in store.search(q, k)]

    check("stores with memory_id and timestamp only", lambda: load())

    def self_query() -> str | None:
        lost = [mid for mid, text in _DOCS if mid not in [h.memory_id for h in search(text, 5)]]
        return f"exact text not found in top 5 for {lost}" if lost else None

    check("finds each memory by its exact text (top 5)", self_query)

    def top_k() -> str | None:
        n = len(search("the", 1))
        return None if n <= 1 else f"asked for 1 hit, got {n}"

    check("respects top_k", top_k)

    def known_ids() -> str | None:
        ids = {h.memory_id for h in search(_DOCS[1][1], 10)}
        extra = ids - {mid for mid, _ in _DOCS}
        return f"returned ids never stored: {sorted(extra)}" if extra else None

    check("returns only stored ids", known_ids)

    def ordered() -> str | None:
        scores = [h.score for h in search("the team budget review", 5)]
        return (
            None if scores == sorted(scores, reverse=True) else f"scores not descending: {scores}"
        )

    check("returns hits best first", ordered)
    check("handles an empty query", lambda: (search("", 5), None)[1])

    if isinstance(store, ListableStore):

        def listed() -> str | None:
            missing_ids = {mid for mid, _ in _DOCS} - set(store.list_ids())
            return f"list_ids misses {sorted(missing_ids)}" if missing_ids else None

        check("list_ids lists every stored memory", listed)

    if isinstance(store, DeletableStore):

        def deleted() -> str | None:
            store.delete("c2")
            if isinstance(store, Flushable):
                store.flush()
            return (
                "deleted memory still returned"
                if "c2" in [h.memory_id for h in search(_DOCS[1][1], 5)]
                else None
            )

        check("delete forgets a memory", deleted)

    def fill(docs: list[tuple[str, str]]) -> None:
        store.reset()
        for mid, text in docs:
            store.store(text, {"memory_id": mid, "timestamp": "2026-01-01T00:00:00"})
        if isinstance(store, Flushable):
            store.flush()

    def tie_order() -> str | None:
        fill([(mid, _TIE_TEXT) for mid in _TIE_IDS])
        hits = search(_TIE_TEXT, len(_TIE_IDS))
        tied = [h.memory_id for h in hits if hits and h.score == hits[0].score]
        if len(tied) < 3:
            return None  # the identical texts do not tie here: nothing to judge
        suspicious = {
            "insertion order": [m for m in _TIE_IDS if m in tied],
            "reverse insertion order": [m for m in reversed(_TIE_IDS) if m in tied],
            "id order": sorted(tied),
            "reverse id order": sorted(tied, reverse=True),
        }
        for name, order in suspicious.items():
            if tied == order:
                return (
                    f"{len(tied)} memories with identical text and equal scores came back in "
                    f"{name}, which leaks the dataset file's order into the ranking; break "
                    "ties by something that carries no information (e.g. a seeded hash of "
                    "the memory id, as the built-in stores do)"
                )
        return None

    check("breaks score ties independently of insertion order", tie_order, warning=True)

    def one_hit_per_memory() -> str | None:
        fill(_VERSIONS)
        ids = [h.memory_id for h in search("grandma's plum dumplings with cinnamon", 4)]
        repeated = sorted({m for m in ids if ids.count(m) > 1})
        if repeated:
            return (
                f"one result names {', '.join(repeated)} {max(map(ids.count, repeated))} times "
                "(one hit per stored version?); a hit per memory is expected, and the "
                "retrieval suite keeps only the first (recording duplicates_dropped)"
            )
        return None

    check("returns each memory id at most once per result", one_hit_per_memory, warning=True)

    if isinstance(store, Persistent):

        def reloads() -> str | None:
            fill(_DOCS)
            queries = [text for _, text in _DOCS] + ["the team budget review"]
            before = [search(q, 5) for q in queries]
            with tempfile.TemporaryDirectory() as d:
                store.save(Path(d) / "index")
                store.reset()
                if not store.load(Path(d) / "index"):
                    return "load of the index it saved returned False"
                after = [search(q, 5) for q in queries]
                if store.load(Path(d) / "none"):
                    return "load of a directory with no index returned True"
            if after != before:
                return "after save, reset and load, searches return other hits or scores"
            return None

        check("save and load give back the same hits and scores", reloads)

    def forgets() -> str | None:
        store.reset()
        if isinstance(store, Flushable):
            store.flush()
        left = [h.memory_id for h in search(_DOCS[0][1], 5)]
        return f"still returns {left} after reset" if left else None

    check("reset forgets everything", forgets)
    return _finish(rep, raise_on_failure)


def _finish(rep: ConformanceReport, raise_on_failure: bool) -> ConformanceReport:
    if raise_on_failure and not rep.ok:
        raise AssertionError(f"store failed conformance:\n{rep}")
    return rep
