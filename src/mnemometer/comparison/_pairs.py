"""Pairing: which runs and which item results pair up, and why runs may refuse to."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError
from mnemometer.log._reader import RunLog
from mnemometer.log._schema import HEADER_FILE, HeadlineSpec, ItemResult, RunHeader
from mnemometer.scoring.headline import cluster_of, item_value, spec_of

COMPONENTS = ("system", "dataset", "suite", "reader", "judge", "scoring")
"""What a run's numbers depend on, as ``compare`` names it; only the system may differ
between sides unless the user declares what else the experiment varies (``--vary``)."""
VARIABLE = tuple(c for c in COMPONENTS if c != "system")
"""What ``--vary`` may name."""
_JUDGE_OPTIONS = ("judges", "judge_model")
_READER_OPTIONS = ("reader_sha256", "reader_budget")


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
    base_h: float | None
    cand_h: float | None
    base_m: dict[str, float | None]
    cand_m: dict[str, float | None]
    base_tokens: int | None
    cand_tokens: int | None
    base_ms: float | None
    cand_ms: float | None
    base_failed: bool = False
    cand_failed: bool = False


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


def components(h: RunHeader) -> dict[str, Any]:
    """What a run's numbers depend on, by component (:data:`COMPONENTS`)."""
    opts = dict(h.suite_options)
    judge_opts = {k: opts.pop(k) for k in _JUDGE_OPTIONS if k in opts}
    reader = {k: opts.pop(k) for k in _READER_OPTIONS if k in opts}
    if h.llm is not None:
        reader.update(model=h.llm.get("model"), base_url=h.llm.get("base_url"))
        if h.llm.get("provider"):  # asked through LiteLLM (an empty base URL: its default)
            reader["provider"] = h.llm["provider"]
    scoring = h.scoring
    if scoring is not None:
        judges: Any = [
            {k: s.args.get(k) for k in ("judge", "model", "base_url", "prompt_sha256")}
            for s in scoring.scorers
            if s.name == "judge"
        ]
        rules: Any = {
            "scorers": [
                (s.name, s.version, s.sha256) for s in scoring.scorers if s.name != "judge"
            ],
            # Which judges the summary reports is the judge component's business.
            "summary": (
                scoring.summary.name,
                scoring.summary.version,
                {k: v for k, v in scoring.summary.args.items() if k != "judges"},
            ),
            "headline": _headline_rule(scoring.headline),
        }
    else:
        judges = judge_opts.get("judges") or []
        rules = {"headline": _headline_rule(spec_of(h))}
    return {
        "system": {
            "kind": h.system.kind,
            "name": h.system.name,
            "options": h.system.options,
            "condition": h.system.condition,
            "version": h.system.version,
        },
        "dataset": {"content hash": h.dataset.content_hash, "name": h.dataset.name},
        "suite": {
            "suite": h.suite,
            "version": h.suite_version,
            "options": opts,
            "limit": h.limit,
            "sample (size, seed)": (h.sample, h.seed) if h.sample is not None else None,
        },
        "reader": reader,
        "judge": judges,
        "scoring": rules,
    }


def _headline_rule(spec: HeadlineSpec) -> dict[str, Any]:
    # A judge's name is the judge component's business: the rule is which metric kind,
    # which items, which clusters.
    rule = spec.model_dump(exclude={"label", "scope"})
    if rule["metric"].startswith("judge:"):
        rule["metric"] = "judge"
    return rule


def differences(base: RunLog, cand: RunLog) -> dict[str, str]:
    """Component -> one line saying how the two runs differ in it (components that differ)."""
    a, b = components(base.header), components(cand.header)
    out: dict[str, str] = {}
    for comp in COMPONENTS:
        if a[comp] != b[comp]:
            out[comp] = f"{comp}: {_show(a[comp], b[comp])}"
    return out


def _show(a: Any, b: Any, prefix: str = "") -> str:
    """Only what differs, nested keys spelled out: ``options.top_k 2 -> 1``."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
        return "; ".join(_show(a.get(k), b.get(k), f"{prefix}{k}.") for k in keys)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
        # Two judges that differ only in their endpoint: say which judge and which field.
        at = prefix.rstrip(".")
        return "; ".join(
            _show(x, y, f"{at}[{i}].") for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y
        )
    return f"{prefix.rstrip('.')} {_short(a)} -> {_short(b)}".strip()


def _short(v: Any) -> str:
    # Cut from the middle: what tells two long values apart (a port, a hash's end) is
    # as often at the end as at the start.
    text = v if isinstance(v, str) else repr(v)
    return text if len(text) <= 80 else text[:40] + "..." + text[-37:]


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


def mismatches(runs: Sequence[RunLog], vary: Sequence[str] = ()) -> list[str]:
    """Why runs may not be paired: a component other than the system (and ``vary``) differs.

    Runs on one side must agree with each other in every component but the system; across
    the sides the same holds, except for what ``vary`` names.
    """
    first = runs[0]
    out: list[str] = []
    for r in runs[1:]:
        for comp, line in differences(first, r).items():
            if comp != "system" and comp not in vary:
                out.append(f"{first.path} and {r.path} differ in {line}")
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
    matched: list[tuple[RunLog, RunLog]],
    metrics: dict[str, MetricInfo],
    notes: list[str],
    specs: tuple[HeadlineSpec, HeadlineSpec],
) -> tuple[list[Pair], int]:
    """Item results present on both sides, with each side's headline value and metrics.

    ``specs`` are the baseline's and the candidate's headlines (the same unless the user
    declared that the experiment varies how runs are scored).
    """
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
            pairs.append(
                Pair(
                    item_id=key[0],
                    step=key[1],
                    cluster=cluster_of(b, specs[0]),
                    groups=groups,
                    base_h=item_value(b, specs[0]),
                    cand_h=item_value(c, specs[1]),
                    base_m=_metric_values(b, metrics),
                    cand_m=_metric_values(c, metrics),
                    base_tokens=_tokens(b),
                    cand_tokens=_tokens(c),
                    base_ms=b.latency_ms,
                    cand_ms=c.latency_ms,
                    base_failed=b.status != "ok",
                    cand_failed=c.status != "ok",
                )
            )
    return pairs, unpaired


def _metric_values(r: ItemResult, metrics: dict[str, MetricInfo]) -> dict[str, float | None]:
    """The item's metric values by key (its ``success`` metric is not one: see headline)."""
    out: dict[str, float | None] = {}
    for m in r.metrics:
        if m.name == "success" and m.k is None:
            continue
        key = m.key
        if key not in metrics:
            metrics[key] = MetricInfo(m.name, m.k, m.higher_is_better)
        out[key] = m.value
    return out
