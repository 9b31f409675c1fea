"""What each dimension needs, read from a dataset's labels (the scorer's side only).

Generated datasets carry the labels under their own names; MemTest datasets keep the seed's
(``cluster_id``, ``decay.level``, ``chain_position``, ``depth.semantic_distance``). Either
way the store never sees them: the suite only uses them to choose probes and score.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from random import Random

from mnemometer.datasets._models import Dataset, Memory

_SEED_LEVEL = {"高频记忆": "high", "中等频率": "medium", "低频记忆": "low", "偶发事件": "low"}
_SEED_DISTANCE = {
    "近": "near",
    "中": "mid",
    "远": "far",
    "near": "near",
    "mid": "mid",
    "far": "far",
}
# MemTest labels carry frequency levels but no schedule: one is derived from the level.
_SEED_ACCESS_DAYS = {"high": [1, 4, 8, 12, 16, 20, 24, 28], "medium": [5, 15, 25], "low": []}


@dataclass(frozen=True)
class Probe:
    """A probe for one memory: what to search for and what to find."""

    memory_id: str
    text: str
    group: str
    """Frequency level, semantic distance or cluster id, by dimension."""
    targets: tuple[str, ...] = ()
    """Ids that count as found (cluster-mates for organisation)."""
    access_days: tuple[int, ...] = ()
    """Days after the reference time at which the memory is accessed (forgetting)."""
    pool: Pool | None = None
    """Organisation: where the cluster-mates sit for a ranking that ignores the topic."""


@dataclass(frozen=True)
class Pool:
    """What a topic-blind ranking knows: who is named, not what it is about.

    The baseline ranking puts the ``size`` memories that involve a person the probe names
    first, in random order, then every other memory in random order (``others`` memories
    in all, the probe excluded): what a store matching names and nothing else gives.
    Without person labels the pool is empty, and the baseline a fully random ranking.
    """

    size: int
    """Memories involving a person the probe names (as subject or companion), probe excluded."""
    inside: int
    """Targets in the pool."""
    outside: int
    """Targets outside it."""
    others: int
    """Every memory that can be ranked (the probe excluded)."""

    def expected_recall(self, k: int) -> float:
        """Expected recall@k of the topic-blind ranking (its mean over random orders)."""
        p_in = min(1.0, k / self.size) if self.size else 0.0
        rest = self.others - self.size
        p_out = min(1.0, max(0, k - self.size) / rest) if rest > 0 else 0.0
        n = self.inside + self.outside
        return (self.inside * p_in + self.outside * p_out) / n if n else 0.0


@dataclass
class Plan:
    """The probes of each dimension (an empty list: the dimension is not applicable)."""

    clusters: list[Probe] = field(default_factory=list)
    forgetting: list[Probe] = field(default_factory=list)
    deep_probes: list[Probe] = field(default_factory=list)
    chain_order: dict[str, list[str]] = field(default_factory=dict)
    """Query id -> relevant ids in true order, where the order is known."""
    query_pools: dict[str, Pool] = field(default_factory=dict)
    """Cluster query id -> the topic-blind pool of its relevant memories."""


def read_plan(ds: Dataset, cluster_probes: int) -> Plan:
    """Derive every dimension's probes from ``ds``."""
    plan = Plan()
    by_id = {m.id: m for m in ds.memories}
    _clusters(ds, by_id, plan, cluster_probes)
    _forgetting(ds, plan)
    _chains(ds, by_id, plan)
    _deep(ds, plan)
    return plan


def people(m: Memory) -> tuple[str, ...]:
    """Everyone a memory involves.

    Generated data: ``person`` and ``companion``; MemTest: ``person.name`` and
    ``person.partner_name``.
    """
    md = m.metadata
    p = md.get("person")
    if isinstance(p, dict):
        names = (p.get("name"), p.get("partner_name"))
    else:
        names = (p, md.get("companion"))
    return tuple(dict.fromkeys(x for x in names if isinstance(x, str) and x))


def names(m: Memory) -> tuple[str, ...]:
    """The people and places a memory's labels name, longest first.

    Generated data: ``person``, ``companion``, ``city`` and ``place``; MemTest: the person's
    and partner's names and ``location``'s city, place and landmark (or its one string).
    """
    found = list(people(m))
    for key in ("city", "place", "location"):
        value = m.metadata.get(key)
        if isinstance(value, dict):
            found += [v for k, v in value.items() if k in ("city", "place", "landmark")]
        else:
            found.append(value)
    unique = {x for x in found if isinstance(x, str) and x.strip()}
    return tuple(sorted(unique, key=lambda x: (-len(x), x)))


def _pool(
    who: tuple[str, ...], targets: list[Memory], involves: dict[str, set[int]], n: int, probe: int
) -> Pool:
    """The topic-blind pool of the people ``who`` (``probe``: the probe's index, or -1)."""
    pool: set[int] = set().union(*(involves.get(x, set()) for x in who))
    pool.discard(probe)
    inside = sum(1 for t in targets if set(people(t)) & set(who))
    return Pool(len(pool), inside, len(targets) - inside, n - (probe >= 0))


def _clusters(ds: Dataset, by_id: dict[str, Memory], plan: Plan, limit: int) -> None:
    groups: dict[str, list[Memory]] = defaultdict(list)
    involves: dict[str, set[int]] = defaultdict(set)
    index: dict[str, int] = {}
    for i, m in enumerate(ds.memories):
        index[m.id] = i
        for x in people(m):
            involves[x].add(i)
        cid = m.metadata.get("cluster") or m.metadata.get("cluster_id")
        if isinstance(cid, str) and cid:
            groups[cid].append(m)
    n = len(ds.memories)
    for q in ds.queries:
        if q.type == "cluster" and q.relevant_ids:
            rel = [by_id[x] for x in q.relevant_ids if x in by_id]
            # The query names its cluster's person: the people every relevant memory shares.
            shared = set.intersection(*(set(people(m)) for m in rel)) if rel else set()
            plan.query_pools[q.id] = _pool(tuple(sorted(shared)), rel, involves, n, -1)
    usable = [(cid, ms) for cid, ms in groups.items() if len(ms) >= 2]
    if not usable:
        return  # organisation is not applicable
    # Evenly spaced clusters in file order, one probe each, so the probe set is
    # deterministic and spread over the dataset. The probe is a seeded random member, not
    # the first in file order: then every mate would come after it, and a store that
    # ranks by insertion order (or prefers later ids) would be judged on that, not topic.
    step = max(1, len(usable) / max(1, limit))
    picked = [usable[int(i * step)] for i in range(min(limit, len(usable)))]
    for cid, ms in picked:
        j = Random(f"mnemometer-memtest/cluster/{cid}").randrange(len(ms))
        probe, rest = ms[j], ms[:j] + ms[j + 1 :]
        mates = tuple(m.id for m in rest)
        pool = _pool(people(probe), rest, involves, n, index[probe.id])
        plan.clusters.append(Probe(probe.id, probe.text, cid, mates, pool=pool))


def _forgetting(ds: Dataset, plan: Plan) -> None:
    for m in ds.memories:
        level = m.metadata.get("frequency")
        days = m.metadata.get("access_days")
        if level is None and isinstance(m.metadata.get("decay"), dict):
            level = _SEED_LEVEL.get(str(m.metadata["decay"].get("level")))
            days = _SEED_ACCESS_DAYS.get(level or "")
        if level not in ("high", "medium", "low"):
            continue
        cue = m.metadata.get("cue") or _seed_cue(m) or m.text
        plan.forgetting.append(Probe(m.id, str(cue), level, (), tuple(int(d) for d in days or ())))
    levels = {p.group for p in plan.forgetting}
    if not {"high", "low"} <= levels:
        plan.forgetting = []  # nothing to compare: the dimension is not applicable


def _seed_cue(m: Memory) -> str | None:
    person, event = m.metadata.get("person"), m.metadata.get("event")
    if isinstance(person, dict) and isinstance(event, dict):
        cue = f"{person.get('name') or ''} {event.get('product') or ''}".strip()
        return cue or None
    return None


def _chains(ds: Dataset, by_id: dict[str, Memory], plan: Plan) -> None:
    for q in ds.queries:
        if q.type != "chain" or not q.relevant_ids:
            continue
        order = q.metadata.get("order")
        if isinstance(order, list) and sorted(order) == sorted(q.relevant_ids):
            plan.chain_order[q.id] = [str(x) for x in order]
            continue
        pos = [by_id[x].metadata.get("chain_position") for x in q.relevant_ids]
        if all(isinstance(p, int) for p in pos) and len(set(pos)) == len(pos):
            plan.chain_order[q.id] = [x for _, x in sorted(zip(pos, q.relevant_ids, strict=True))]


def _deep(ds: Dataset, plan: Plan) -> None:
    if any(q.type == "deep" for q in ds.queries):
        return
    for m in ds.memories:
        depth = m.metadata.get("depth")
        if isinstance(depth, dict):
            bucket = _SEED_DISTANCE.get(str(depth.get("semantic_distance") or "near"))
            if bucket:
                plan.deep_probes.append(Probe(m.id, m.text, bucket, (m.id,)))
