"""The procedural generator: a world of people and places, memories, and queries.

Everything random comes from :class:`random.Random` instances seeded with strings (stable
across processes and machines; no hash-seed dependence), every iteration is over lists or
insertion-ordered dicts, and "now" is the ``reference_time`` argument, never the wall clock.
Memories are produced one at a time so a million of them stream to disk; the indexes that
give every query its complete relevant set hold only integers.

Ids carry no information. Memories are generated in an order that has structure (a chain's
hops follow one another; frequency labels run out after a cap), so a memory's id is not its
generation position but a seeded random permutation of it, and memories are written in id
order. Id and file position are therefore independent of every label the generator creates
(chain position, time, cluster, frequency, deep bucket, person);
``tests/datasets_/test_label_independence.py`` checks it statistically.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from random import Random
from typing import Any

from mnemometer.datasets.generate import _vocab as V
from mnemometer.datasets.generate._output import IdOrder, dumps
from mnemometer.errors import MnemometerError

GENERATOR_VERSION = "3"
"""2: ids and file order are a seeded permutation of the generation order. 3: deep queries
are phrased at a measured semantic distance (the committed MiniLM calibration), and single
memories carry their subject's ``occupation``."""
DEFAULT_REFERENCE_TIME = datetime(2026, 6, 1, 9, 0, 0)
MIN_SIZE = 50
MAX_SIZE = 5_000_000
MAX_QUERIES = 100_000
LANGUAGES = ("en", "zh")

_TOPICS = list(V.TOPICS)
_OBJECTS = list(V.OBJECTS)
_ACTIONS = list(V.ACTIONS)
_SCRIPTS = list(V.SCRIPTS)
_RELATIONS = list(V.RELATIONS)
_ACTION_INDEX = {a: i for i, a in enumerate(_ACTIONS)}
_OBJECT_INDEX = {o: i for i, o in enumerate(_OBJECTS)}
_OBJ_BY_TOPIC = {t: [o for o in _OBJECTS if V.OBJECTS[o][0] == t] for t in _TOPICS}
_SCRIPTS_BY_TOPIC = {t: [s for s in _SCRIPTS if V.SCRIPTS[s][0] == t] for t in _TOPICS}
_FREQ_ACCESSES = {"high": 8, "medium": 3, "low": 0}
DEEP_AGE = (365, 729)
"""Deep memories are 1-2 years old (age in days, inclusive)."""


@dataclass(frozen=True)
class Options:
    """Validated generator arguments."""

    size: int
    lang: str
    seed: int
    reference_time: datetime

    @classmethod
    def check(cls, size: int, lang: str, seed: int, reference_time: datetime | None) -> Options:
        """Validate arguments; raise :class:`MnemometerError` with a one-line reason."""
        if not isinstance(size, int) or not MIN_SIZE <= size <= MAX_SIZE:
            raise MnemometerError(f"--size must be between {MIN_SIZE} and {MAX_SIZE:,}, got {size}")
        if lang not in LANGUAGES:
            raise MnemometerError(f"--lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
        if not isinstance(seed, int) or seed < 0:
            raise MnemometerError(f"--seed must be a non-negative integer, got {seed}")
        ref = reference_time or DEFAULT_REFERENCE_TIME
        if ref.tzinfo is not None:  # one convention: naive local time, like every timestamp
            ref = ref.replace(tzinfo=None)
        if not datetime(1900, 1, 1) <= ref <= datetime(9000, 1, 1):
            raise MnemometerError(f"--reference-time out of range: {ref.isoformat()}")
        return cls(size, lang, seed, ref.replace(microsecond=0))


def mid(j: int) -> str:
    """Memory id number ``j`` (0-based): ``M0000001`` for 0."""
    return f"M{j + 1:07d}"


class World:
    """People (names, occupation, home city, favourite topics, relations) and places."""

    def __init__(self, o: Options) -> None:
        rng = Random(f"mnemometer-generate/{o.seed}/world")
        zh = o.lang == "zh"
        self.zh = zh
        self.cities = V.ZH_CITIES if zh else V.EN_CITIES
        if zh:
            first = V.ZH_FEMALE + V.ZH_MALE
            n_f = len(V.ZH_FEMALE)
            last = V.ZH_SURNAMES
        else:
            first = V.EN_FEMALE + V.EN_MALE
            n_f = len(V.EN_FEMALE)
            last = V.EN_LAST
        # The same cap in both languages keeps the structure language-independent.
        cap = min(
            len(V.ZH_FEMALE + V.ZH_MALE) * len(V.ZH_SURNAMES),
            len(V.EN_FEMALE + V.EN_MALE) * len(V.EN_LAST),
        )
        n = max(20, min(o.size // 12, cap))
        combos = rng.sample(range(cap), n)
        n_first = min(len(V.ZH_FEMALE + V.ZH_MALE), len(V.EN_FEMALE + V.EN_MALE))
        self.names: list[str] = []
        self.first: list[str] = []
        self.female: list[bool] = []
        for c in combos:
            fi, li = c % n_first, (c // n_first) % len(last)
            fi_lang = fi if fi < len(first) else fi % len(first)
            self.first.append(first[fi_lang])
            self.female.append(fi_lang < n_f)
            self.names.append(
                f"{last[li]}{first[fi_lang]}" if zh else f"{first[fi_lang]} {last[li]}"
            )
        assert len(set(self.names)) == n, "person names must be unique"
        self.n = n
        self.home = [rng.randrange(len(self.cities)) for _ in range(n)]
        self.occupation = [rng.randrange(len(V.OCCUPATIONS)) for _ in range(n)]
        self.favourites = [rng.sample(range(len(_TOPICS)), 3) for _ in range(n)]
        self.contacts: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for p in range(n):  # symmetric relations, so both sides tell the same story
            for _ in range(2):
                q = rng.randrange(n)
                if q != p and all(c != q for c, _ in self.contacts[p]):
                    r = rng.randrange(len(_RELATIONS))
                    self.contacts[p].append((q, r))
                    self.contacts[q].append((p, r))
        streets = V.ZH_STREETS if zh else V.EN_STREETS
        k = max(1, min(len(streets), o.size // 4000 + 1))
        self.streets = {
            (c, t, v): rng.sample(range(len(streets)), k)
            for c in range(len(self.cities))
            for t in range(len(_TOPICS))
            for v in range(3)
        }
        self.street_names = streets
        self.places: list[tuple[int, int, int, int]] = []  # (city, topic, venue, street)
        self.place_id: dict[tuple[int, int, int, int], int] = {}
        self._names: list[str] = []

    def place(self, key: tuple[int, int, int, int]) -> int:
        """Id of a place, created on first use."""
        pid = self.place_id.get(key)
        if pid is None:
            pid = self.place_id[key] = len(self.places)
            self.places.append(key)
            self._names.append(self._place_name(key))
        return pid

    def place_name(self, pid: int) -> str:
        """Display name of a place (without its city)."""
        return self._names[pid]

    def _place_name(self, key: tuple[int, int, int, int]) -> str:
        c, t, v, s = key
        venue = V.TOPICS[_TOPICS[t]][3 if self.zh else 2][v]
        street = self.street_names[s]
        return f"{street}路{venue}" if self.zh else f"{street} {venue}"


class Days:
    """Per-age date facts, computed once (ages are whole days before the reference date)."""

    def __init__(self, ref: datetime) -> None:
        self.ref = ref
        self.ref_date = ref.date()
        self._cache: dict[int, tuple[date, str]] = {}
        self._human: dict[int, tuple[str, str]] = {}

    def get(self, age: int) -> tuple[date, str]:
        """The date ``age`` days before the reference date and its ISO string."""
        hit = self._cache.get(age)
        if hit is None:
            d = self.ref_date - timedelta(days=age)
            hit = self._cache[age] = (d, d.isoformat())
        return hit

    def human(self, age: int) -> tuple[str, str]:
        """The date written out: ``("Monday, 3 June 2024", "2024年6月3日星期一")``."""
        hit = self._human.get(age)
        if hit is None:
            d = self.get(age)[0]
            hit = self._human[age] = (
                f"{V.EN_WEEKDAYS[d.weekday()]}, {d.day} {V.EN_MONTHS[d.month - 1]} {d.year}",
                f"{d.year}年{d.month}月{d.day}日{V.ZH_WEEKDAYS[d.weekday()]}",
            )
        return hit


def _age(r: Any) -> int:
    """A memory's age in days: 45% within 90 days, 35% up to a year, 20% 1-2 years."""
    x = r()
    if x < 0.45:
        return 1 + int(r() * 90)
    if x < 0.80:
        return 91 + int(r() * (DEEP_AGE[0] - 91))
    return DEEP_AGE[0] + int(r() * (DEEP_AGE[1] - DEEP_AGE[0] + 1))


class Generator:
    """Produces memory records (streamed) and then query records from the indexes."""

    def __init__(self, o: Options) -> None:
        self.o = o
        self.w = World(o)
        self.days = Days(o.reference_time)
        self.zh = o.lang == "zh"
        n = o.size
        # Compact per-memory columns that the queries need.
        self.age = [0] * n
        self.subject = [0] * n
        # Indexes: key -> memory positions (ascending).
        self.involves: list[list[int]] = [[] for _ in range(self.w.n)]
        self.by_place: dict[int, list[int]] = {}
        self.by_event: dict[tuple[int, int, int], list[int]] = {}  # (action, object, city)
        self.by_spa: dict[tuple[int, int, int], list[int]] = {}  # (subject, place, action)
        self.by_cluster: dict[tuple[int, int], list[int]] = {}  # (subject, topic)
        self.by_deep: dict[tuple[int, int, int], list[int]] = {}  # (subject, action, object)
        # (occupation, city, action, object): deep memories by their subject's occupation
        self.by_deep_occ: dict[tuple[int, int, int, int], list[int]] = {}
        self.city_of: dict[int, int] = {}  # deep memory position -> city
        self.chains: list[tuple[int, int, list[int]]] = []  # (script, slot, positions)
        self._chain_meta: dict[int, tuple[int, list[int], int]] = {}  # person, ages, minute
        self._cue: tuple[str, str, str] = ("", "", "")  # the last single memory's probe cue
        # Generation position -> id number: a seeded permutation, so that neither a memory's
        # id nor its place in the file says where the generator made it.
        number = list(range(n))
        Random(f"mnemometer-generate/{o.seed}/ids").shuffle(number)
        self.number = array("l", number)  # 8 bytes an id, not a list of int objects
        self.done = False

    def mid(self, i: int) -> str:
        """Memory id of the memory generated at position ``i``."""
        return mid(self.number[i])

    # ----------------------------------------------------------------- memories
    def memories(self) -> Iterator[dict[str, Any]]:
        """Yield every memory record in id order (the file order), as plain dicts."""
        for line in self.memory_lines():
            yield json.loads(line)

    def memory_lines(
        self,
        observe: Callable[[dict[str, Any]], Any] | None = None,
        tmpdir: str | None = None,
    ) -> Iterator[str]:
        """Yield every memory record as compact JSON (:func:`dumps`), in id order.

        All memories are generated (filling the indexes, calling ``observe`` on each record
        in generation order) before the first line is yielded: they are put in id order
        through temporary files in ``tmpdir`` (default: the system's), so memory stays flat.
        """
        with IdOrder(len(self.number), tmpdir) as reorder:
            put, number = reorder.put, self.number
            for i, rec in enumerate(self._generate()):
                if observe is not None:
                    observe(rec)
                put(number[i], dumps(rec))
            yield from reorder.lines()

    def _generate(self) -> Iterator[dict[str, Any]]:
        """Yield every memory record in generation order, filling the indexes on the way."""
        o = self.o
        rng = Random(f"mnemometer-generate/{o.seed}/memories")
        scheduled: dict[int, tuple[int, int]] = {}  # position -> (chain, step)
        probes = 0
        max_probes = min(3000, max(20, o.size // 16))
        for i in range(o.size):
            step = scheduled.pop(i, None)
            if step is None and rng.random() < 0.03 and o.size - i > 6:
                step = self._start_chain(rng, i, scheduled)
            if step is not None:
                yield self._chain_step(i, *step)
                continue
            rec = self._single(rng, i)
            if probes < max_probes and self.age[i] < DEEP_AGE[0]:
                if rng.random() < 0.08:
                    probes += 1
                    self._add_frequency(rng, rec)
            yield rec
        self.done = True

    def _start_chain(
        self, rng: Random, i: int, scheduled: dict[int, tuple[int, int]]
    ) -> tuple[int, int] | None:
        p = rng.randrange(self.w.n)
        fav = [_TOPICS[t] for t in self.w.favourites[p]]
        options = [s for t in fav for s in _SCRIPTS_BY_TOPIC[t]] or _SCRIPTS
        script = _SCRIPTS.index(rng.choice(options))
        length = rng.randint(3, 6)
        positions = [i]
        pos = i
        for _ in range(length - 1):
            pos += rng.randint(1, 40)
            while pos in scheduled:
                pos += 1
            if pos >= self.o.size:
                break
            positions.append(pos)
        if len(positions) < 3:  # not enough room left: no chain after all
            return None
        gaps = [rng.randint(2, 12) for _ in positions[1:]]
        start_age = rng.randint(sum(gaps) + 1, DEEP_AGE[1])
        slot = rng.randrange(len(V.SCRIPTS[_SCRIPTS[script]][3]))
        c = len(self.chains)
        self.chains.append((script, slot, positions))
        ages = [start_age]
        for g in gaps:
            ages.append(ages[-1] - g)
        self._chain_meta[c] = (p, ages, rng.randrange(8 * 60, 22 * 60))
        for k, ppos in enumerate(positions[1:], 1):
            scheduled[ppos] = (c, k)
        return (c, 0)

    def _chain_step(self, i: int, c: int, k: int) -> dict[str, Any]:
        script, slot, positions = self.chains[c]
        p, ages, minute = self._chain_meta[c]
        key = _SCRIPTS[script]
        topic_key, relation, steps, en_slots, zh_slots = V.SCRIPTS[key]
        t = _TOPICS.index(topic_key)
        age = ages[k]
        minute = (minute + 37 * k) % (14 * 60) + 8 * 60
        d, iso = self.days.get(age)
        w, zh = self.w, self.zh
        x = (zh_slots if zh else en_slots)[slot]
        name, first = w.names[p], w.first[p]
        raw = steps[k][1 if zh else 0]
        terse = raw.format(n=name, x=x)
        hm = f"{minute // 60:02d}:{minute % 60:02d}"
        if zh:
            detailed = f"{d.year}年{d.month}月{d.day}日{V.ZH_WEEKDAYS[d.weekday()]}{hm}，{terse}"
            colloquial = "听说" + raw.format(n=name, x=x)
        else:
            detailed = f"{V.EN_WEEKDAYS[d.weekday()]}, {d.day} {V.EN_MONTHS[d.month - 1]} {d.year}, {hm}: {terse}"
            casual = raw.format(n=first, x=x)
            if casual.startswith(("Because", "The ", "Workers", "Slugs")):
                casual = casual[0].lower() + casual[1:]
            colloquial = f"Heard that {casual}"
        self.age[i] = age
        self.subject[i] = p
        self.involves[p].append(i)
        self.by_cluster.setdefault((p, t), []).append(i)
        meta: dict[str, Any] = {
            "person": name,
            "topic": topic_key,
            "city": w.cities[w.home[p]],
            "cluster": f"P{p:05d}/{topic_key}",
            "age_days": age,
            "chain": f"C{c:05d}",
            "chain_position": k + 1,
            "chain_length": len(positions),
            "chain_relation": relation,
        }
        return _record(self.number[i], terse, detailed, colloquial, iso, minute, meta)

    def _single(self, rng: Random, i: int) -> dict[str, Any]:
        # Hot path (a million calls): index with random() instead of choice()/randrange().
        w, zh = self.w, self.zh
        r = rng.random
        p = int(r() * w.n)
        fav = w.favourites[p]
        t = fav[int(r() * 3)] if r() < 0.8 else int(r() * len(_TOPICS))
        topic_key = _TOPICS[t]
        objs = _OBJ_BY_TOPIC[topic_key]
        obj_key = objs[int(r() * len(objs))]
        _, actions, (lo, hi), en_o, zh_o = V.OBJECTS[obj_key]
        act_key = actions[int(r() * len(actions))]
        paid, en_a, zh_a = V.ACTIONS[act_key]
        a, ob = _ACTION_INDEX[act_key], _OBJECT_INDEX[obj_key]
        x = r()
        qty = 1 if x < 0.55 else 2 if x < 0.8 else 3 if x < 0.92 else 4
        price = qty * ((lo + int(r() * (hi - lo + 1))) // 5 * 5 or lo) if paid else None
        city = w.home[p] if r() < 0.8 else int(r() * len(w.cities))
        venue = int(r() * 3)
        streets = w.streets[(city, t, venue)]
        pid = w.place((city, t, venue, streets[int(r() * len(streets))]))
        comp = rel = None
        contacts = w.contacts[p]
        if contacts and r() < 0.5:
            comp, rel = contacts[int(r() * len(contacts))]
        age = _age(r)
        minute = 8 * 60 + int(r() * 14 * 60)
        iso = self.days.get(age)[1]
        name, place, cname = w.names[p], w.place_name(pid), w.cities[city]
        hm = f"{minute // 60:02d}:{minute % 60:02d}"
        occ = V.OCCUPATIONS[w.occupation[p]][1 if zh else 0]
        if zh:
            noun, mw = zh_o[0], zh_o[1]
            q = f"{qty}{mw}{noun}"
            terse = f"{name}在{cname}{place}{zh_a[1]}{q}。"
            pay = f"，花了{price}元" if paid else ""
            if comp is not None:
                cn = w.names[comp]
                terse += f"{cn}也在场。"
                who = f"{occ}{name}和{'她' if w.female[p] else '他'}的{V.RELATIONS[_RELATIONS[rel]][1]}{cn}一起"
            else:
                who = f"{occ}{name}"
            detailed = f"{self.days.human(age)[1]}{hm}，{who}在{cname}{place}{zh_a[1]}{q}{pay}。"
            colloquial = f"听说{name}在{place}{zh_a[4]}{V.ZH_NUMBERS[qty]}{mw}{noun}"
            colloquial += f"，花了{price}块钱呢。" if paid else "。"
            if comp is not None:
                colloquial += f"{w.names[comp]}当时也在。"
            self._cue = (name, place, noun)
        else:
            sing, plural = en_o[0], en_o[1]
            q = _a(sing) if qty == 1 else f"{qty} {plural}"
            qw = _a(sing) if qty == 1 else f"{V.EN_NUMBERS[qty]} {plural}"
            terse = f"{name} {en_a[1]} {q} at {place}, {cname}."
            pay = f" for ${price}" if paid else ""
            together = ""
            if comp is not None:
                cn = w.names[comp]
                terse += f" {cn} came along."
                pron = "her" if w.female[p] else "his"
                together = f", together with {pron} {V.RELATIONS[_RELATIONS[rel]][0]} {cn}"
            detailed = (
                f"On {self.days.human(age)[0]} at {hm}, {name}, {_a(occ)}, {en_a[1]} {q}"
                f"{pay} at {place} in {cname}{together}."
            )
            colloquial = f"So {w.first[p]} {en_a[4]} {qw} over at {place}"
            colloquial += f", for ${price}!" if paid else "!"
            if comp is not None:
                colloquial += f" {w.first[comp]} was there too."
            self._cue = (name, plural, place)
        self.age[i] = age
        self.subject[i] = p
        self.involves[p].append(i)
        if comp is not None:
            self.involves[comp].append(i)
        _append(self.by_place, pid, i)
        _append(self.by_event, (a, ob, city), i)
        _append(self.by_spa, (p, pid, a), i)
        _append(self.by_cluster, (p, t), i)
        if age >= DEEP_AGE[0]:
            _append(self.by_deep, (p, a, ob), i)
            _append(self.by_deep_occ, (w.occupation[p], city, a, ob), i)
            self.city_of[i] = city
        meta: dict[str, Any] = {"person": name, "occupation": V.OCCUPATIONS[w.occupation[p]][0]}
        if comp is not None:
            meta["companion"] = w.names[comp]
            meta["relation"] = _RELATIONS[rel]
        meta.update(
            {
                "topic": topic_key,
                "action": act_key,
                "object": obj_key,
                "quantity": qty,
                "city": cname,
                "place": place,
                "cluster": f"P{p:05d}/{topic_key}",
                "age_days": age,
            }
        )
        if paid:
            meta["price"] = price
        return _record(self.number[i], terse, detailed, colloquial, iso, minute, meta)

    def _add_frequency(self, rng: Random, rec: dict[str, Any]) -> None:
        r = rng.random()
        level = "high" if r < 0.4 else "medium" if r < 0.6 else "low"
        meta = rec["metadata"]
        meta["frequency"] = level
        meta["access_days"] = sorted(rng.sample(range(1, 31), _FREQ_ACCESSES[level]))
        meta["cue"] = ("" if self.zh else " ").join(self._cue)


def _append(index: dict[Any, list[int]], key: Any, i: int) -> None:
    # Cheaper than setdefault(key, []) on a hot path: no list built for existing keys.
    bucket = index.get(key)
    if bucket is None:
        index[key] = [i]
    else:
        bucket.append(i)


def _a(noun: str) -> str:
    """English indefinite article + noun."""
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _record(
    j: int, terse: str, detailed: str, colloquial: str, iso: str, minute: int, meta: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": mid(j),
        "text": terse,
        "versions": [
            {"style": "terse", "text": terse},
            {"style": "detailed", "text": detailed},
            {"style": "colloquial", "text": colloquial},
        ],
        "timestamp": f"{iso}T{minute // 60:02d}:{minute % 60:02d}:00",
        "metadata": meta,
    }
