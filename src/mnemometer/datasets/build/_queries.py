"""Queries with complete ground truth, computed from the memories' structured fields.

A query is a conjunction of field constraints (its *structured form*, written to
``Query.metadata["structured"]`` for structured-query systems). Its relevant set is every
memory that satisfies all constraints, compared case- and space-insensitively; ``person``
matches any of a memory's persons. Nothing is sampled: a query about a person lists every
memory about that person. Negatives are constraint pairs no memory satisfies.

Where a type has more candidates than ``per_type``, the candidates are drawn balanced
across the corpus's source categories (its directory labels, ``metadata["category"]``),
as MemTest's builder promised: one category after another in turn, each candidate
belonging to the category most of its memories come from.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from mnemometer.datasets._models import Memory, Query

QUERY_TYPES = ("person", "location", "time", "era", "event", "composite", "chain", "negative")
"""Every query type :func:`make_queries` writes."""

_TEMPLATES: dict[str, dict[str, str]] = {
    "en": {
        "person": "What do we know about {person}?",
        "location": "What happened at {location}?",
        "time": "What happened {time_phrase}?",
        "era": "What happened during {era}?",
        "event": "Which {event_type} events involve {person}?",
        "composite": "What did {person} do at {location}?",
        "chain": "Trace the sequence of events that begins: {first}",
    },
    "zh": {
        "person": "关于{person}有哪些记载？",
        "location": "{location}发生过什么？",
        "time": "{time}发生了什么？",
        "era": "{era}时期发生了什么？",
        "event": "{person}有哪些与{event_type}有关的经历？",
        "composite": "{person}在{location}做了什么？",
        "chain": "梳理这一系列事件的经过：{first}",
    },
}


def norm(value: Any) -> str:
    """The comparison form of a field value."""
    return " ".join(str(value or "").split()).casefold()


def _persons(m: Memory) -> list[str]:
    return [p for p in (m.metadata.get("persons") or [m.metadata.get("person")]) if p]


def satisfies(m: Memory, structured: dict[str, str]) -> bool:
    """True when memory ``m`` meets every constraint of a structured query."""
    for key, value in structured.items():
        want = norm(value)
        if key == "person":
            if want not in {norm(p) for p in _persons(m)}:
                return False
        elif key == "chain":
            if norm(m.metadata.get("chain")) != want:
                return False
        elif norm(m.metadata.get(key)) != want:
            return False
    return True


def relevant_ids(memories: Iterable[Memory], structured: dict[str, str]) -> list[str]:
    """Every memory id satisfying ``structured``, in dataset order (chains: chain order)."""
    hits = [m for m in memories if satisfies(m, structured)]
    if "chain" in structured:
        hits.sort(key=lambda m: int(m.metadata.get("chain_position") or 0))
    return [m.id for m in hits]


def _time_phrase(time: str) -> str:
    t = time.strip()
    if t[:1].isdigit():
        return f"in {t}" if len(t) == 4 else f"on {t}"
    return t


def _majority(category: dict[str, str], ids: list[str]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for i in ids:
        counts[category.get(i, "")] += 1
    return min(counts, key=lambda c: (-counts[c], c))


def balanced(keys: list[Any], labels: list[str], n: int, rng: random.Random) -> list[Any]:
    """``n`` of ``keys`` drawn in turn from each label's shuffled keys (one label: a sample).

    The labels' counts differ by at most one unless a label runs out.
    """
    by: dict[str, list[Any]] = defaultdict(list)
    for key, label in zip(keys, labels, strict=True):
        by[label].append(key)
    if len(by) == 1:
        return rng.sample(keys, n)
    pools = [rng.sample(by[label], len(by[label])) for label in sorted(by)]
    out: list[Any] = []
    while len(out) < n:
        for pool in pools:
            if pool and len(out) < n:
                out.append(pool.pop())
    return out


def make_queries(
    memories: list[Memory],
    lang: str,
    *,
    per_type: int = 30,
    seed: int = 42,
    start: int = 1,
    existing_texts: set[str] | None = None,
) -> list[Query]:
    """Up to ``per_type`` queries of every type in :data:`QUERY_TYPES`, ids from ``start``."""
    t = _TEMPLATES["zh" if lang == "zh" else "en"]
    rng = random.Random(seed)
    display: dict[tuple[str, str], str] = {}  # (field, normalised) -> first spelling seen
    groups: dict[str, dict[tuple[str, ...], list[str]]] = defaultdict(lambda: defaultdict(list))
    for m in memories:
        md = m.metadata
        fields = {
            "location": md.get("location"),
            "time": md.get("time"),
            "era": md.get("era"),
            "event_type": md.get("event_type"),
        }
        for p in _persons(m):
            display.setdefault(("person", norm(p)), p)
        for k, v in fields.items():
            if v:
                display.setdefault((k, norm(v)), str(v))
        subject = norm(md.get("person"))
        for p in {norm(x) for x in _persons(m)}:
            groups["person"][(p,)].append(m.id)
        for k in ("location", "time", "era"):
            if fields[k]:
                groups[k][(norm(fields[k]),)].append(m.id)
        if subject and fields["event_type"]:
            groups["event"][(subject, norm(fields["event_type"]))].append(m.id)
        if subject and fields["location"]:
            groups["composite"][(subject, norm(fields["location"]))].append(m.id)
        if md.get("chain") and md.get("chain_position") == 1:
            groups["chain"][(str(md["chain"]),)].append(m.id)

    by_id = {m.id: m for m in memories}
    seen = set(existing_texts or ())
    out: list[Query] = []

    def add(qtype: str, text: str, structured: dict[str, str], difficulty: str) -> None:
        if text in seen:
            return
        seen.add(text)
        ids = relevant_ids(memories, structured)
        if (qtype == "negative") == bool(ids):
            return  # a positive with no answer, or a "negative" that has one
        out.append(
            Query(
                id=f"Q{start + len(out):05d}",
                text=text,
                type=qtype,
                relevant_ids=ids,
                difficulty=difficulty,
                metadata={"structured": structured, "source": "mnemometer build"},
            )
        )

    category = {m.id: str(m.metadata.get("category") or "") for m in memories}

    def pick(qtype: str) -> list[tuple[str, ...]]:
        keys = sorted(groups[qtype])
        if len(keys) <= per_type:
            return keys
        return balanced(keys, [_majority(category, groups[qtype][k]) for k in keys], per_type, rng)

    name: Callable[[str, str], str] = lambda field, key: display.get((field, key), key)  # noqa: E731
    for qtype in ("person", "location"):
        for (key,) in pick(qtype):
            s = {qtype: name(qtype, key)}
            add(qtype, t[qtype].format(**s), s, "easy")
    for (tm,) in pick("time"):
        shown = name("time", tm)
        add(
            "time",
            t["time"].format(time=shown, time_phrase=_time_phrase(shown)),
            {"time": shown},
            "medium",
        )
    for (era,) in pick("era"):
        s = {"era": name("era", era)}
        add("era", t["era"].format(**s), s, "medium")
    for p, ev in pick("event"):
        s = {"person": name("person", p), "event_type": name("event_type", ev)}
        add("event", t["event"].format(**s), s, "medium")
    for p, loc in pick("composite"):
        s = {"person": name("person", p), "location": name("location", loc)}
        add("composite", t["composite"].format(**s), s, "hard")
    for (chain,) in pick("chain"):
        first = by_id[groups["chain"][(chain,)][0]].text
        add("chain", t["chain"].format(first=first), {"chain": chain}, "hard")
    # Negatives: a person and a place that both occur, never together (checked, not assumed);
    # about one in five queries, as in MemTest.
    quota = min(per_type, max(1, len(out) // 4))
    persons = sorted(k[0] for k in groups["person"])
    places = sorted(k[0] for k in groups["location"])
    together = set(groups["composite"])
    made = 0
    for _ in range(per_type * 20):
        if made >= quota or not persons or not places:
            break
        p, loc = rng.choice(persons), rng.choice(places)
        if (p, loc) in together:
            continue
        s = {"person": name("person", p), "location": name("location", loc)}
        before = len(out)
        add("negative", t["composite"].format(**s), s, "hard")
        made += len(out) - before
    return out
