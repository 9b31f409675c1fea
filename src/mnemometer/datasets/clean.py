"""Cleaning a dataset: exact duplicates, cross-perspective near-duplicates, person balance.

The procedure reproduces MemTest's ``knowledge_builder --clean`` (its parameters are the
defaults here) without its faults: the near-duplicate pass finds candidate pairs with MinHash
LSH and confirms each with the exact Jaccard similarity, so it is near-linear instead of
O(n²); string times do not crash the balancing step; and queries keep complete ground truth
(an id removed as a duplicate is replaced by the id of the memory that was kept).

Steps, in order:

1. **Exact duplicates**: the same lower-cased, whitespace-normalised text; the first is kept.
2. **Near duplicates**: within a group (same ``book`` and ``event_type`` by default), pairs of
   memories about *different* persons whose token sets have Jaccard > 0.6 are joined
   (union-find, as connected components of the pair graph); each connected group keeps its
   most detailed memory (most distinct tokens, then longest text).
3. **Person balance**: persons whose memory count is at or above the 80th percentile of
   counts are *key persons* (cap 60), the others are capped at 30. An over-cap person keeps
   one memory from each ``event_type|book`` stratum (smallest stratum first), then a seeded
   random fill.
4. **Queries**: expected ids are mapped to the kept duplicate or removed; queries left with no
   ground truth are dropped (negatives stay); then at most 10 queries per person (the person
   of the first expected memory), first come first kept.
"""

from __future__ import annotations

import random
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from mnemometer.datasets._minhash import (
    candidate_pair_arrays,
    jaccard_arrays,
    token_sets,
)
from mnemometer.datasets._models import Dataset, Memory, Query
from mnemometer.errors import MnemometerError

_SPACE = re.compile(r"\s+")
# LSH proposes candidates at a lower similarity than the threshold, so that pairs just above
# it are rarely missed (bench_clean: 0.84 of the pairs found at margin 0, 0.999 at 0.2).
LSH_MARGIN = 0.2


@dataclass(frozen=True, slots=True)
class CleanConfig:
    """Cleaning parameters; the defaults are MemTest's."""

    near_dup_threshold: float = 0.6
    """Jaccard similarity above which two memories are near duplicates (0 disables)."""
    num_perm: int = 128
    """MinHash permutations (more: fewer missed pairs, slower)."""
    group_by: tuple[str, ...] = ("book", "event_type")
    """Metadata keys that must be equal for two memories to be compared."""
    cross_person_only: bool = True
    """Only merge memories about different persons (the seed's "cross-perspective" rule)."""
    person_key: str = "person"
    """Metadata key naming the person a memory is about."""
    key_percentile: float = 80.0
    """Persons with a count at or above this percentile of counts are key persons."""
    key_cap: int = 60
    """Most memories kept per key person (0 disables balancing)."""
    other_cap: int = 30
    """Most memories kept per other person."""
    strata: tuple[str, ...] = ("event_type", "book")
    """Metadata keys whose combination forms a stratum for diverse sampling."""
    query_person_cap: int = 10
    """Most queries kept per person (0 keeps all)."""
    seed: int = 42
    """Seed of the random fill in balancing."""
    lang: str | None = None
    """Tokeniser language (``en``, ``zh``); ``None`` uses the dataset's language."""


@dataclass(frozen=True, slots=True)
class CleanReport:
    """What each step removed."""

    memories_before: int
    exact_duplicates: int
    near_duplicates: int
    capped: int
    memories_after: int
    queries_before: int
    ids_remapped: int
    ids_removed: int
    queries_without_ground_truth: int
    queries_capped: int
    queries_after: int
    seconds: float

    def lines(self) -> list[str]:
        """Human-readable per-step counts."""
        return [
            f"memories   {self.memories_before:>7}",
            f"  exact duplicates   -{self.exact_duplicates}",
            f"  near duplicates    -{self.near_duplicates}",
            f"  person cap         -{self.capped}",
            f"  kept        {self.memories_after:>7}",
            f"queries    {self.queries_before:>7}",
            f"  expected ids moved to the kept duplicate   {self.ids_remapped}",
            f"  expected ids removed                       {self.ids_removed}",
            f"  left without ground truth  -{self.queries_without_ground_truth}",
            f"  per-person query cap       -{self.queries_capped}",
            f"  kept        {self.queries_after:>7}",
            f"time {self.seconds:.2f} s",
        ]

    def as_dict(self) -> dict[str, float | int]:
        """The counts as a plain dict."""
        return asdict(self)


def clean_dataset(
    dataset: Dataset, config: CleanConfig | None = None
) -> tuple[Dataset, CleanReport]:
    """Clean ``dataset`` (see the module docstring); return the result and the counts.

    The input is not modified. The output's ``info.notes`` records every step's counts and
    parameters; each kept memory that absorbed duplicates lists them in
    ``metadata["clean_merged"]``.

    Raises:
        MnemometerError: a parameter is out of range.
    """
    cfg = config or CleanConfig()
    _validate(cfg)
    t0 = time.perf_counter()
    memories = list(dataset.memories)
    lang = cfg.lang or dataset.info.language or "en"
    merged_into: dict[str, str] = {}  # removed duplicate id -> kept id

    kept, exact = _exact_duplicates(memories, merged_into)
    kept, near = _near_duplicates(kept, cfg, lang, merged_into)
    kept, capped = _balance(kept, cfg)

    final_ids = {m.id for m in kept}
    queries, qstats = _update_queries(dataset, merged_into, final_ids, kept, cfg)
    absorbed: dict[str, list[str]] = defaultdict(list)
    for dup in merged_into:
        target = _follow(dup, merged_into)
        if target in final_ids:
            absorbed[target].append(dup)
    out_memories = [
        m.model_copy(update={"metadata": {**m.metadata, "clean_merged": absorbed[m.id]}})
        if m.id in absorbed
        else m
        for m in kept
    ]
    report = CleanReport(
        memories_before=len(memories),
        exact_duplicates=exact,
        near_duplicates=near,
        capped=capped,
        memories_after=len(kept),
        queries_before=len(dataset.queries),
        ids_remapped=qstats["remapped"],
        ids_removed=qstats["removed"],
        queries_without_ground_truth=qstats["empty"],
        queries_capped=qstats["capped"],
        queries_after=len(queries),
        seconds=time.perf_counter() - t0,
    )
    info = dataset.info.model_copy(deep=True)
    info.content_hash = None
    info.notes.append(_note(report, cfg, lang))
    out = Dataset(info=info, memories=out_memories, queries=queries)
    return out.with_hash(), report


def _validate(cfg: CleanConfig) -> None:
    if not 0.0 <= cfg.near_dup_threshold < 1.0:
        raise MnemometerError(
            f"near-duplicate threshold must be in [0, 1), got {cfg.near_dup_threshold}"
        )
    if cfg.num_perm < 16:
        raise MnemometerError(f"num_perm must be at least 16, got {cfg.num_perm}")
    if not 0.0 <= cfg.key_percentile <= 100.0:
        raise MnemometerError(f"key percentile must be in [0, 100], got {cfg.key_percentile}")
    if min(cfg.key_cap, cfg.other_cap, cfg.query_person_cap) < 0:
        raise MnemometerError("caps must be 0 (off) or positive")


def _note(r: CleanReport, cfg: CleanConfig, lang: str) -> str:
    near = (
        f"{r.near_duplicates} near duplicates (Jaccard > {cfg.near_dup_threshold} on {lang} "
        f"tokens, MinHash LSH {cfg.num_perm} permutations, within "
        f"{'|'.join(cfg.group_by) or 'all'}"
        f"{', different persons only' if cross_only(cfg) else ''})"
    )
    cap = (
        f"{r.capped} over the person cap (key persons >= p{cfg.key_percentile:g} of counts: "
        f"{cfg.key_cap}, others {cfg.other_cap}; strata {'|'.join(cfg.strata)}; "
        f"seed {cfg.seed})"
        if cfg.key_cap
        else "no person cap"
    )
    return (
        f"mnemometer clean: memories {r.memories_before} -> {r.memories_after}: "
        f"{r.exact_duplicates} exact duplicates, {near}, {cap}. Queries {r.queries_before} "
        f"-> {r.queries_after}: {r.ids_remapped} expected ids moved to the kept duplicate, "
        f"{r.ids_removed} removed, {r.queries_without_ground_truth} queries left without "
        f"ground truth dropped, {r.queries_capped} over {cfg.query_person_cap} per person "
        "dropped"
    )


def cross_only(cfg: CleanConfig) -> bool:
    """True when near duplicates must be about different persons."""
    return cfg.cross_person_only and bool(cfg.person_key)


# ---- step 1: exact duplicates ---------------------------------------------------------


def _exact_duplicates(
    memories: list[Memory], merged_into: dict[str, str]
) -> tuple[list[Memory], int]:
    seen: dict[str, str] = {}
    kept: list[Memory] = []
    for m in memories:
        key = _SPACE.sub(" ", m.text.strip().lower())
        if key in seen:
            merged_into[m.id] = seen[key]
            continue
        seen[key] = m.id
        kept.append(m)
    return kept, len(memories) - len(kept)


# ---- step 2: near duplicates (MinHash LSH + exact Jaccard + union-find) ---------------


def _near_duplicates(
    memories: list[Memory], cfg: CleanConfig, lang: str, merged_into: dict[str, str]
) -> tuple[list[Memory], int]:
    if cfg.near_dup_threshold <= 0 or len(memories) < 2:
        return memories, 0
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    tokens = token_sets(memories, lang)
    block_of: dict[str, int] = {}
    blocks = [block_of.setdefault(_meta_key(m, cfg.group_by), len(block_of)) for m in memories]
    lsh_threshold = max(0.05, cfg.near_dup_threshold - LSH_MARGIN)
    first, second = candidate_pair_arrays(tokens, lsh_threshold, cfg.num_perm, blocks)
    if cross_only(cfg):  # the cross-perspective rule: never merge a person with itself
        person_of: dict[str, int] = {}
        pid = np.array(
            [
                -1 if p is None else person_of.setdefault(p, len(person_of))
                for p in (_person(m, cfg.person_key) for m in memories)
            ]
        )
        other = (pid[first] < 0) | (pid[first] != pid[second])
        first, second = first[other], second[other]
    sim = jaccard_arrays(tokens, first, second)
    keep = sim > cfg.near_dup_threshold  # exact Jaccard confirms every LSH candidate
    n = len(memories)
    graph = coo_matrix((np.ones(int(keep.sum())), (first[keep], second[keep])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    components: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(label.tolist()):
        components[c].append(i)
    drop: set[int] = set()
    for members in components.values():
        if len(members) < 2:
            continue
        # The most detailed: most distinct tokens, then longest text, then earliest.
        best = max(members, key=lambda i: (len(tokens[i]), len(memories[i].text), -i))
        for i in members:
            if i != best:
                drop.add(i)
                merged_into[memories[i].id] = memories[best].id
    kept = [m for i, m in enumerate(memories) if i not in drop]
    return kept, len(drop)


def _meta_key(m: Memory, keys: Sequence[str]) -> str:
    return "|".join(str(m.metadata.get(k) or "") for k in keys)


def _person(m: Memory, key: str) -> str | None:
    value = m.metadata.get(key) if key else None
    if isinstance(value, list):  # several persons: the first is the subject
        value = value[0] if value else None
    return str(value).strip() or None if value is not None else None


# ---- step 3: person balance -----------------------------------------------------------


def _balance(memories: list[Memory], cfg: CleanConfig) -> tuple[list[Memory], int]:
    if not cfg.key_cap or not cfg.person_key:
        return memories, 0
    by_person: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(memories):
        p = _person(m, cfg.person_key)
        if p is not None:
            by_person[p].append(i)
    if not by_person:
        return memories, 0
    counts = sorted(len(v) for v in by_person.values())
    # The seed's percentile: the count at position floor(n * q) of the sorted counts.
    pos = min(len(counts) - 1, int(len(counts) * cfg.key_percentile / 100.0))
    key_threshold = counts[pos]
    drop: set[int] = set()
    for person in sorted(by_person):
        idx = by_person[person]
        cap = cfg.key_cap if len(idx) >= key_threshold else cfg.other_cap
        if len(idx) > cap:
            chosen = select_diverse(
                idx,
                cap,
                lambda i: _meta_key(memories[i], cfg.strata),
                random.Random(f"{cfg.seed}:{person}"),
            )
            drop.update(set(idx) - set(chosen))
    kept = [m for i, m in enumerate(memories) if i not in drop]
    return kept, len(drop)


def select_diverse(
    items: Sequence[int], cap: int, stratum: Callable[[int], str], rng: random.Random
) -> list[int]:
    """Keep ``cap`` of ``items``: one per stratum (smallest stratum first), then a random fill.

    Returns the kept items in their original order.
    """
    strata: dict[str, list[int]] = defaultdict(list)
    for i in items:
        strata[stratum(i)].append(i)
    chosen: list[int] = []
    for _, members in sorted(strata.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if len(chosen) >= cap:
            break
        chosen.append(members[0])
    picked = set(chosen)
    rest = [i for i in items if i not in picked]
    chosen.extend(rng.sample(rest, cap - len(chosen)) if cap > len(chosen) else [])
    keep = set(chosen)
    return [i for i in items if i in keep]


# ---- step 4: queries ------------------------------------------------------------------


def _follow(mid: str, merged_into: dict[str, str]) -> str:
    while mid in merged_into:  # an exact duplicate may point at a later near duplicate
        mid = merged_into[mid]
    return mid


def _update_queries(
    dataset: Dataset,
    merged_into: dict[str, str],
    final_ids: set[str],
    kept: list[Memory],
    cfg: CleanConfig,
) -> tuple[list[Query], dict[str, int]]:
    stats = {"remapped": 0, "removed": 0, "empty": 0, "capped": 0}
    person_of = {m.id: _person(m, cfg.person_key) for m in kept}
    per_person: dict[str | None, int] = defaultdict(int)
    out: list[Query] = []
    for q in dataset.queries:
        if q.is_negative:
            out.append(q)
            continue
        ids: list[str] = []
        for mid in q.relevant_ids:
            target = _follow(mid, merged_into)
            if target not in final_ids:
                stats["removed"] += 1
                continue
            if target != mid:
                stats["remapped"] += 1
            if target not in ids:
                ids.append(target)
        if not ids:
            stats["empty"] += 1
            continue
        if cfg.query_person_cap:
            person = person_of.get(ids[0])
            if person is not None:
                if per_person[person] >= cfg.query_person_cap:
                    stats["capped"] += 1
                    continue
                per_person[person] += 1
        out.append(q if ids == q.relevant_ids else q.model_copy(update={"relevant_ids": ids}))
    return out, stats
