"""Queries with complete ground truth, derived from the generator's indexes.

Every query records its constraints in ``metadata["constraints"]``, in terms of the memory
labels, so anyone can check that ``relevant_ids`` is exactly the set of memories satisfying
them (the tests do, by brute force).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from datetime import date, timedelta
from random import Random
from typing import Any

from mnemometer.datasets.generate import _vocab as V
from mnemometer.datasets.generate._core import (
    _ACTIONS,
    _OBJECTS,
    _SCRIPTS,
    _TOPICS,
    DEEP_AGE,
    MAX_QUERIES,
    Generator,
    mid,
)
from mnemometer.datasets.generate._deep import BUCKETS, choose, deep_text, phrasing_id

QUOTAS = {
    "person": 0.12,
    "location": 0.12,
    "event": 0.12,
    "time": 0.12,
    "composite": 0.10,
    "negative": 0.10,
    "cluster": 0.08,
    "chain": 0.12,
    "deep": 0.12,
}
"""Share of the queries per type (a type gets fewer when the data has fewer candidates)."""
_FITTING = [
    sorted({_ACTIONS.index(a) for o in _OBJECTS if V.OBJECTS[o][0] == t for a in V.OBJECTS[o][1]})
    for t in _TOPICS
]
_DIFFICULTY = {
    "person": "easy",
    "location": "easy",
    "event": "medium",
    "time": "hard",
    "composite": "medium",
    "negative": "medium",
    "cluster": "medium",
    "chain": "hard",
}


def time_windows(ref: date, lang: str) -> list[tuple[str, date, date]]:
    """Relative-time expressions and the date ranges they denote (inclusive) at ``ref``."""
    zh = lang == "zh"
    out = [("昨天" if zh else "yesterday", ref - timedelta(1), ref - timedelta(1))]
    for n in range(2, 7):
        d = ref - timedelta(n)
        out.append((f"{V.ZH_NUMBERS[n]}天前" if zh else f"{n} days ago", d, d))
    monday = ref - timedelta(ref.weekday())
    out.append(("上周" if zh else "last week", monday - timedelta(7), monday - timedelta(1)))
    for back, en, cn in ((1, "last month", "上个月"), (2, "two months ago", "两个月前")):
        y, m = ref.year, ref.month - back
        while m < 1:
            y, m = y - 1, m + 12
        last = calendar.monthrange(y, m)[1]
        out.append((cn if zh else en, date(y, m, 1), date(y, m, last)))
    return out


class QueryMaker:
    """Builds queries once the generator has yielded every memory."""

    def __init__(self, g: Generator) -> None:
        if not g.done:
            raise RuntimeError("generate every memory before the queries")
        self.g = g
        self.w = g.w
        self.zh = g.zh
        self.rng = Random(f"mnemometer-generate/{g.o.seed}/queries")
        self.total = min(MAX_QUERIES, max(40, g.o.size // 2))
        self.n = 0

    def _q(
        self,
        qtype: str,
        text: str,
        rel: list[int],
        constraints: dict[str, Any],
        difficulty: str | None = None,
        **meta: Any,
    ) -> dict[str, Any]:
        self.n += 1
        number = self.g.number
        m = {"constraints": constraints, **meta}
        return {
            "id": f"Q{self.n:06d}",
            "text": text,
            "type": qtype,
            "relevant_ids": [mid(j) for j in sorted(map(number.__getitem__, set(rel)))],
            "difficulty": difficulty or _DIFFICULTY[qtype],
            "metadata": m,
        }

    def _quota(self, qtype: str) -> int:
        return max(1, round(self.total * QUOTAS[qtype]))

    def queries(self) -> Iterator[dict[str, Any]]:
        """Yield every query, type by type."""
        for make in (
            self._person,
            self._location,
            self._event,
            self._time,
            self._composite,
            self._negative,
            self._cluster,
            self._chain,
            self._deep,
        ):
            yield from make()

    def _sample(self, keys: list[Any], k: int) -> list[Any]:
        return self.rng.sample(keys, min(k, len(keys)))

    def _person(self) -> Iterator[dict[str, Any]]:
        w = self.w
        people = [p for p in range(w.n) if self.g.involves[p]]
        for p in self._sample(people, self._quota("person")):
            name = w.names[p]
            text = (
                f"和{name}有关的事情有哪些？"
                if self.zh
                else f"What do I remember involving {name}?"
            )
            yield self._q("person", text, self.g.involves[p], {"involves": name})

    def _location(self) -> Iterator[dict[str, Any]]:
        w = self.w
        for pid in self._sample(list(self.g.by_place), self._quota("location")):
            place, city = w.place_name(pid), w.cities[w.places[pid][0]]
            text = (
                f"在{city}{place}发生过什么？"
                if self.zh
                else f"What happened at {place} in {city}?"
            )
            yield self._q("location", text, self.g.by_place[pid], {"place": place, "city": city})

    def _event(self) -> Iterator[dict[str, Any]]:
        w = self.w
        for key in self._sample(list(self.g.by_event), self._quota("event")):
            a, ob, c = key
            act, obj, city = _ACTIONS[a], _OBJECTS[ob], w.cities[c]
            if self.zh:
                text = f"谁在{city}{V.ACTIONS[act][2][0]}过{V.OBJECTS[obj][4][0]}？"
            else:
                text = f"Who {V.ACTIONS[act][1][1]} {V.OBJECTS[obj][3][1]} in {city}?"
            cons = {"action": act, "object": obj, "city": city}
            yield self._q("event", text, self.g.by_event[key], cons)

    def _time(self) -> Iterator[dict[str, Any]]:
        g, w = self.g, self.w
        windows = time_windows(g.days.ref_date, g.o.lang)
        quota = self._quota("time")
        seen: set[tuple[int, int]] = set()
        people = [p for p in range(w.n) if any(g.age[i] <= 70 for i in g.involves[p])]
        for p in self._sample(people, len(people)):
            if quota <= 0:
                break
            recent = [i for i in g.involves[p] if g.age[i] <= 70]
            i = self.rng.choice(recent)
            d = g.days.get(g.age[i])[0]
            fits = [k for k, (_, lo, hi) in enumerate(windows) if lo <= d <= hi]
            if not fits:
                continue
            k = self.rng.choice(fits)
            if (p, k) in seen:
                continue
            seen.add((p, k))
            expr, lo, hi = windows[k]
            rel = [j for j in g.involves[p] if lo <= g.days.get(g.age[j])[0] <= hi]
            name = w.names[p]
            text = f"{expr}{name}做了什么？" if self.zh else f"What did {name} do {expr}?"
            cons = {"involves": name, "date_from": lo.isoformat(), "date_to": hi.isoformat()}
            quota -= 1
            yield self._q("time", text, rel, cons, relative=expr)

    def _composite_text(self, p: int, pid: int, a: int) -> tuple[str, dict[str, Any]]:
        w = self.w
        name, place, city = w.names[p], w.place_name(pid), w.cities[w.places[pid][0]]
        act = _ACTIONS[a]
        if self.zh:
            text = f"{name}在{city}{place}{V.ACTIONS[act][2][0]}了什么？"
        else:
            text = f"What did {name} {V.ACTIONS[act][1][0]} at {place} in {city}?"
        return text, {"subject": name, "place": place, "city": city, "action": act}

    def _composite(self) -> Iterator[dict[str, Any]]:
        for key in self._sample(list(self.g.by_spa), self._quota("composite")):
            text, cons = self._composite_text(*key)
            yield self._q("composite", text, self.g.by_spa[key], cons)

    def _negative(self) -> Iterator[dict[str, Any]]:
        g, w = self.g, self.w
        quota = self._quota("negative")
        fake = quota // 2
        for j in range(fake):  # people who do not exist in this dataset
            if self.zh:
                name = V.ZH_FAKE_SURNAMES[j % 6] + w.first[self.rng.randrange(w.n)]
                text = f"和{name}有关的事情有哪些？"
            else:
                name = f"{w.first[self.rng.randrange(w.n)]} {V.EN_FAKE_LAST[j % 6]}"
                text = f"What do I remember involving {name}?"
            yield self._q("negative", text, [], {"involves": name}, family="unknown-person")
        places = len(w.places)
        tries = 0
        made = 0
        while made < quota - fake and tries < 50 * quota and places:
            tries += 1
            pid = self.rng.randrange(places)
            # An action that fits the place's topic: a plausible question, but no such event.
            fitting = _FITTING[w.places[pid][1]]
            key = (self.rng.randrange(w.n), pid, fitting[self.rng.randrange(len(fitting))])
            if key in g.by_spa:
                continue
            text, cons = self._composite_text(*key)
            made += 1
            yield self._q("negative", text, [], cons, family="no-such-event")

    def _cluster(self) -> Iterator[dict[str, Any]]:
        w = self.w
        keys = [k for k, v in self.g.by_cluster.items() if len(v) >= 3]
        for p, t in self._sample(keys, self._quota("cluster")):
            name, tk = w.names[p], _TOPICS[t]
            topic = V.TOPICS[tk][1 if self.zh else 0]
            text = (
                f"{name}和{topic}有关的经历有哪些？"
                if self.zh
                else f"Tell me everything about {name}'s {topic}."
            )
            cons = {"subject": name, "topic": tk}
            yield self._q(
                "cluster", text, self.g.by_cluster[(p, t)], cons, cluster=f"P{p:05d}/{tk}"
            )

    def _chain(self) -> Iterator[dict[str, Any]]:
        g, w = self.g, self.w
        ids = list(range(len(g.chains)))
        for c in self._sample(ids, self._quota("chain")):
            script, slot, positions = g.chains[c]
            key = _SCRIPTS[script]
            _, relation, steps, en_slots, zh_slots = V.SCRIPTS[key]
            p = g._chain_meta[c][0]
            x = (zh_slots if self.zh else en_slots)[slot]
            first = steps[0][1 if self.zh else 0].format(n=w.names[p], x=x).rstrip("。.")
            if self.zh:
                text = f"{first}之后，依次发生了什么？"
            else:
                text = f"After {first}, what happened next, in order?"
            order = [g.mid(i) for i in positions[1:]]
            cons = {"chain": f"C{c:05d}", "after_position": 1}
            yield self._q(
                "chain",
                text,
                positions[1:],
                cons,
                chain=f"C{c:05d}",
                order=order,
                first_hop=g.mid(positions[0]),
                relation=relation,
            )

    def _deep(self) -> Iterator[dict[str, Any]]:
        g, w = self.g, self.w
        difficulty = {"near": "easy", "mid": "medium", "far": "hard"}
        for j, key in enumerate(self._sample(list(g.by_deep), self._quota("deep"))):
            p, a, ob = key
            b = BUCKETS[j % 3]
            act, obj = _ACTIONS[a], _OBJECTS[ob]
            ph, sim = choose(act, obj)[b]
            c = g.city_of[g.by_deep[key][0]]
            occ, city, name = w.occupation[p], w.cities[c], w.names[p]
            text = deep_text(self.zh, ph, name, occ, city, act, obj)
            ages = list(DEEP_AGE)
            if ph[0] == "name":
                rel = g.by_deep[key]
                cons = {"subject": name, "action": act, "object": obj, "age_days": ages}
            else:  # "a nurse in Leeds": every such subject's memory of that event counts
                rel = g.by_deep_occ[(occ, c, a, ob)]
                occ_key = V.OCCUPATIONS[occ][0]
                cons = {"occupation": occ_key, "city": city, "action": act, "object": obj}
                cons["age_days"] = ages
            yield self._q(
                "deep",
                text,
                rel,
                cons,
                difficulty[b],
                semantic_distance=b,
                phrasing=phrasing_id(ph),
                similarity=sim,
            )
