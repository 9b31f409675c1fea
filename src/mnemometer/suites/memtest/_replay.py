"""memtest's access-schedule replay, what it lost, and its checkpoint (``memtest-replay.json``).

The replay is the costly, order-bound phase of a memtest run: a baseline probe of each
frequency-labelled memory, every scheduled access as a search on a simulated clock, the
clock moved to the horizon, and the probe again. Its outcome per memory (found before,
found after, mean access latency) is all the ``forget/`` items need.

What the store lost by the horizon stays lost. The other dimensions are measured on the
store given the data again (its clock back at the reference time, so "last month" means
what the dataset means), but every memory gone at the horizon is gone for them too: each
of their searches leaves it out, and its storage read-back fails. Before this, a store
that deleted whatever no search had returned for 70 days lost 1,459 of 2,000 memories,
scored forgetting 87.0% for it, and lost nothing anywhere else (overall 76.5% against
72.8% for keeping everything). A memory is gone when the forgetting probe counts it as
forgotten (found before, not after), or when a search for its content (the storage
read-back probe of its first version) finds it on the store given the data again but not
at the horizon; a memory no search finds even fresh is a retrieval miss, not a loss.

Outcomes and losses are written once, atomically, and a resumed run reads them instead of
replaying.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from mnemometer.datasets._models import Dataset
from mnemometer.log._writer import atomic_write
from mnemometer.stores._protocol import ClockAware, HitList
from mnemometer.suites.memtest._labels import Probe
from mnemometer.suites.memtest._storage import read_back_plan

REPLAY_FILE = "memtest-replay.json"

Outcomes = dict[str, tuple[bool, bool, float]]
Search = Callable[[str, int], HitList]
"""A search of the store under test: ``(text, top_k) -> hits`` (the dataset's ids)."""


def replay(
    system: Any, ds: Dataset, probes: list[Probe], k: int, horizon_days: int, search: Search
) -> Outcomes:
    """Probe, replay the schedule in order of (day, memory id), move to the horizon, probe.

    The clock moves only for a ``ClockAware`` store; the accesses' hits are not scored.
    """
    ref = ds.info.reference_time
    clock = isinstance(system, ClockAware) and ref is not None

    def found(p: Probe) -> bool:
        return any(h.memory_id == p.memory_id for h in search(p.text, k))

    before = {p.memory_id: found(p) for p in probes}
    schedule = sorted((d, p.memory_id, p) for p in probes for d in p.access_days)
    t0 = time.perf_counter()
    for day, _, p in schedule:
        if clock:
            system.set_time(ref + timedelta(days=day))
        system.search(p.text, k)  # the store's own ids: these hits are never scored
    ms = (time.perf_counter() - t0) * 1000.0 / max(1, len(schedule))
    if clock:
        system.set_time(ref + timedelta(days=horizon_days))
    return {p.memory_id: (before[p.memory_id], found(p), ms) for p in probes}


def forgotten(outcomes: Outcomes) -> set[str]:
    """Memories the forgetting probe found before the replay and not after it."""
    return {m for m, (before, after, _) in outcomes.items() if before and not after}


def unread(ds: Dataset, search: Search, only: Iterable[str] | None = None) -> set[str]:
    """Memories a search for their content does not return (top 5 + the alike).

    The storage read-back probe of each memory's first version; ``only`` limits the
    memories searched for.
    """
    keep = None if only is None else set(only)
    mems = [m for m in ds.memories if keep is None or m.id in keep]
    out = set()
    for mid, _, probe, alike in read_back_plan(ds, mems, first=True):
        hits = search(probe, 5 + alike)
        if all(h.memory_id != mid for h in hits):
            out.add(mid)
    return out


def write_replay(run_dir: Path, outcomes: Outcomes, gone: set[str]) -> None:
    """Checkpoint the replay's outcomes and losses (written whole or not at all)."""
    rows = {m: [b, a, ms] for m, (b, a, ms) in outcomes.items()}
    doc = {"version": 2, "outcomes": rows, "gone": sorted(gone)}
    atomic_write(Path(run_dir) / REPLAY_FILE, json.dumps(doc))


def read_replay(run_dir: Path) -> tuple[Outcomes, set[str]] | None:
    """The checkpointed outcomes and losses, or ``None`` when there are none.

    An unreadable checkpoint is ``None`` too: the replay simply runs again.
    """
    try:
        doc = json.loads((Path(run_dir) / REPLAY_FILE).read_text("utf-8"))
        rows = doc["outcomes"]
        outcomes = {str(m): (bool(b), bool(a), float(ms)) for m, (b, a, ms) in rows.items()}
        return outcomes, {str(m) for m in doc.get("gone", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
