"""What each dimension needs, read from a dataset's labels (the scorer's side only).

Generated datasets carry the labels under their own names; MemTest datasets keep the seed's
(``cluster_id``, ``decay.level``, ``chain_position``, ``depth.semantic_distance``). Either
way the store never sees them: the suite only uses them to choose probes and score.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

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


@dataclass
class Plan:
    """The probes of each dimension (an empty list: the dimension is not applicable)."""

    clusters: list[Probe] = field(default_factory=list)
    forgetting: list[Probe] = field(default_factory=list)
    deep_probes: list[Probe] = field(default_factory=list)
    chain_order: dict[str, list[str]] = field(default_factory=dict)
    """Query id -> relevant ids in true order, where the order is known."""


def read_plan(ds: Dataset, cluster_probes: int) -> Plan:
    """Derive every dimension's probes from ``ds``."""
    plan = Plan()
    by_id = {m.id: m for m in ds.memories}
    _clusters(ds, plan, cluster_probes)
    _forgetting(ds, plan)
    _chains(ds, by_id, plan)
    _deep(ds, plan)
    return plan


def _clusters(ds: Dataset, plan: Plan, limit: int) -> None:
    groups: dict[str, list[Memory]] = defaultdict(list)
    for m in ds.memories:
        cid = m.metadata.get("cluster") or m.metadata.get("cluster_id")
        if isinstance(cid, str) and cid:
            groups[cid].append(m)
    usable = [(cid, ms) for cid, ms in groups.items() if len(ms) >= 2]
    if not usable:
        return  # organisation is not applicable
    # Evenly spaced clusters in file order, one probe each (its first member), so the
    # probe set is deterministic and spread over the dataset.
    step = max(1, len(usable) / max(1, limit))
    picked = [usable[int(i * step)] for i in range(min(limit, len(usable)))]
    for cid, ms in picked:
        probe = ms[0]
        mates = tuple(m.id for m in ms[1:])
        plan.clusters.append(Probe(probe.id, probe.text, cid, mates))


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
