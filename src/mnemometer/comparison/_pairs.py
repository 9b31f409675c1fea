"""Pairing: which runs and which item results pair up, and why runs may refuse to."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError
from mnemometer.log._reader import RunLog
from mnemometer.log._schema import HEADER_FILE, ItemResult, RunHeader

CLUSTER_FIELDS = ("conversation", "fixture")
"""Item group fields whose items share state and so are clustered."""


class PairingError(MnemometerError):
    """Runs that cannot be paired (the message says why)."""


def condition_of(header: RunHeader) -> str:
    """The run's condition: recorded on the system side, else the system's name."""
    return header.system.condition or header.system.name


def expand_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories named by ``paths``: a run directory, or a directory of them.

    Raises:
        MnemometerError: a path is neither.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / HEADER_FILE).is_file():
            out.append(p)
        elif p.is_dir():
            children = sorted(c for c in p.iterdir() if (c / HEADER_FILE).is_file())
            if not children:
                raise MnemometerError(f"{p}: not a run directory and holds none")
            out.extend(children)
        else:
            raise MnemometerError(f"{p}: no such run directory")
    return list(dict.fromkeys(out))


@dataclass
class Pair:
    """One paired observation: an item (or step) in one baseline and one candidate run."""

    item_id: str
    step: str
    cluster: str
    groups: dict[str, str]
    base_ok: bool | None
    cand_ok: bool | None
    base_m: dict[str, float | None]
    cand_m: dict[str, float | None]
    base_tokens: int | None
    cand_tokens: int | None
    base_ms: float | None
    cand_ms: float | None


@dataclass
class MetricInfo:
    """A metric seen in the runs: its name, parameters and direction."""

    name: str
    k: int | None
    higher_is_better: bool
    keys: set[str] = field(default_factory=set)


def _tokens(r: ItemResult) -> int | None:
    if not r.tokens:
        return None
    return int(r.tokens["total"]) if "total" in r.tokens else int(sum(r.tokens.values()))


def _identity(h: RunHeader) -> dict[str, Any]:
    return {
        "suite": h.suite,
        "suite_version": h.suite_version,
        "dataset content hash": h.dataset.content_hash,
        "suite options": h.suite_options,
        "limit": h.limit,
        "sample (size, seed)": (h.sample, h.seed) if h.sample is not None else None,
    }


def same_system_notes(base: Sequence[RunLog], cand: Sequence[RunLog]) -> list[str]:
    """A plain warning when both sides ran the same system under different condition names.

    Otherwise the fallbacks either side took, as recorded in the run headers.

    A condition whose store could not load here runs its fallback (recorded in the run
    header's notes); "semantic vs bm25" is then bm25 against bm25, not an ablation.
    """

    def systems(runs: Sequence[RunLog]) -> set[tuple[str, str, str]]:
        return {
            (
                r.header.system.kind,
                r.header.system.name,
                repr(sorted(r.header.system.options.items())),
            )
            for r in runs
        }

    fell = sorted({n for r in [*base, *cand] for n in r.header.notes if "fell back" in n})
    b, c = systems(base), systems(cand)
    if (
        len(b) != 1
        or b != c
        or {condition_of(r.header) for r in base} == {condition_of(r.header) for r in cand}
    ):
        return fell  # a fallback on either side changes what the comparison measured
    name = next(iter(b))[1]
    why = f" ({'; '.join(fell)})" if fell else ""
    return [
        f"SAME SYSTEM ON BOTH SIDES: baseline and candidate both ran {name!r}{why}; the "
        "differences below are run-to-run variation, not the effect of a condition"
    ]


def mismatches(runs: Sequence[RunLog]) -> list[str]:
    first = runs[0]
    ref = _identity(first.header)
    out: list[str] = []
    for r in runs[1:]:
        ident = _identity(r.header)
        for what, value in ident.items():
            if value != ref[what]:
                if what == "suite options":
                    diff = sorted(
                        k for k in set(value) | set(ref[what]) if value.get(k) != ref[what].get(k)
                    )
                    shown = ", ".join(f"{k}={ref[what].get(k)!r} vs {value.get(k)!r}" for k in diff)
                    out.append(f"{first.path} and {r.path} differ in suite options: {shown}")
                else:
                    out.append(
                        f"{first.path} and {r.path} differ in {what}: {ref[what]!r} vs {value!r}"
                    )
    return out


def match_runs(base: list[RunLog], cand: list[RunLog]) -> list[tuple[RunLog, RunLog]]:
    """Pair runs by (run group, repeat); never let two runs claim one slot."""
    for side, runs in (("baseline", base), ("candidate", cand)):
        seen: dict[tuple[str, int], Path] = {}
        for r in runs:
            slot = (r.header.run_group, r.header.repeat)
            if slot in seen:
                raise PairingError(
                    f"{side} runs {seen[slot]} and {r.path} are both repeat {slot[1]} of run "
                    f"group {slot[0]}: pass only one of them"
                )
            seen[slot] = r.path
    b_groups = {r.header.run_group for r in base}
    c_groups = {r.header.run_group for r in cand}
    if b_groups & c_groups:
        b = {(r.header.run_group, r.header.repeat): r for r in base}
        c = {(r.header.run_group, r.header.repeat): r for r in cand}
        lonely = sorted(set(b) ^ set(c))
        if lonely:
            shown = ", ".join(f"group {g} repeat {i}" for g, i in lonely)
            raise PairingError(
                f"runs share run groups but these (group, repeat) slots exist on one side "
                f"only: {shown}"
            )
        return [(b[k], c[k]) for k in sorted(b)]

    # Different invocations: pair the i-th group of each side, then repeat by repeat.
    def ordered(runs: list[RunLog]) -> list[list[RunLog]]:
        by: dict[str, list[RunLog]] = defaultdict(list)
        for r in runs:
            by[r.header.run_group].append(r)
        groups = sorted(by.values(), key=lambda rs: min(r.header.created_at for r in rs))
        return [sorted(rs, key=lambda r: r.header.repeat) for rs in groups]

    bo, co = ordered(base), ordered(cand)
    if len(bo) != len(co):
        raise PairingError(
            f"cannot pair {len(bo)} baseline run group(s) with {len(co)} candidate run "
            "group(s); pass runs from the same number of invocations"
        )
    out: list[tuple[RunLog, RunLog]] = []
    for bg, cg in zip(bo, co, strict=True):
        br = [r.header.repeat for r in bg]
        cr = [r.header.repeat for r in cg]
        if br != cr:
            raise PairingError(
                f"run group {bg[0].header.run_group} has repeats {br} but run group "
                f"{cg[0].header.run_group} has repeats {cr}; pass matching repeats"
            )
        out.extend(zip(bg, cg, strict=True))
    return out


def pair_items(
    matched: list[tuple[RunLog, RunLog]], metrics: dict[str, MetricInfo], notes: list[str]
) -> tuple[list[Pair], int]:
    pairs: list[Pair] = []
    unpaired = 0
    for b_run, c_run in matched:
        b_items = {(r.item_id, r.step or ""): r for r in b_run.items}
        c_items = {(r.item_id, r.step or ""): r for r in c_run.items}
        lonely = sorted(set(b_items) ^ set(c_items))
        if lonely:
            unpaired += len(lonely)
            shown = ", ".join(i for i, _ in lonely[:5]) + (" ..." if len(lonely) > 5 else "")
            notes.append(
                f"{len(lonely)} item result(s) of {b_run.path} / {c_run.path} have "
                f"no partner and are not compared: {shown}"
            )
        for key in sorted(set(b_items) & set(c_items), key=lambda k: b_items[k].index):
            b, c = b_items[key], c_items[key]
            groups = {**b.groups, **c.groups}
            cluster = next((f"{f}:{groups[f]}" for f in CLUSTER_FIELDS if f in groups), key[0])
            base_m, base_ok = _metric_values(b, metrics)
            cand_m, cand_ok = _metric_values(c, metrics)
            pairs.append(
                Pair(
                    item_id=key[0],
                    step=key[1],
                    cluster=cluster,
                    groups=groups,
                    base_ok=base_ok,
                    cand_ok=cand_ok,
                    base_m=base_m,
                    cand_m=cand_m,
                    base_tokens=_tokens(b),
                    cand_tokens=_tokens(c),
                    base_ms=b.latency_ms,
                    cand_ms=c.latency_ms,
                )
            )
    return pairs, unpaired


def _metric_values(
    r: ItemResult, metrics: dict[str, MetricInfo]
) -> tuple[dict[str, float | None], bool | None]:
    """The item's metric values by key, and its success as the suite recorded it."""
    out: dict[str, float | None] = {}
    for m in r.metrics:
        if m.name == "success" and m.k is None:
            continue  # the item's success is its own field
        key = m.key
        if key not in metrics:
            metrics[key] = MetricInfo(m.name, m.k, m.higher_is_better)
        out[key] = m.value
    return out, (False if r.status != "ok" else r.success)
