"""Compare two sets of runs: pair them item by item, then compute the statistics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mnemometer import stats
from mnemometer.comparison._model import Comparison
from mnemometer.comparison._pairs import (
    VARIABLE,
    MetricInfo,
    PairingError,
    differences,
    expand_runs,
    match_runs,
    mismatches,
    pair_items,
    same_system_notes,
)
from mnemometer.comparison._statistics import statistics
from mnemometer.errors import MnemometerError, did_you_mean
from mnemometer.log._reader import read_log
from mnemometer.scoring.headline import spec_of


def compare(
    baseline: Sequence[str | Path],
    candidate: Sequence[str | Path],
    *,
    vary: Sequence[str] = (),
    force: bool = False,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    confidence: float = 0.95,
) -> Comparison:
    """Pair ``baseline`` and ``candidate`` runs item by item and compute the statistics.

    Runs pair by run group and repeat (see the guide), and items by item id and step. What
    a run's numbers depend on is compared component by component (system, dataset, suite,
    reader, judge, scoring): only the system may differ, unless ``vary`` names what else
    the experiment varies (``vary=["judge"]`` compares two judgings of the same answers);
    ``force`` pairs mismatched runs anyway (recorded, and a gate fails it unless allowed).
    The headline each run declared is what is compared; repeats are aggregated per item
    before any test, and the item (or its cluster) is the statistical unit.

    Args:
        baseline: run directories (or directories of run directories).
        candidate: the same for the candidate side.
        vary: components the experiment varies beyond the system (``judge``, ``reader``,
            ``dataset``, ``suite``, ``scoring``); named in the comparison.
        force: pair mismatched runs anyway (recorded in the comparison).
        resamples: bootstrap resamples.
        seed: bootstrap seed.
        confidence: interval coverage.

    Raises:
        PairingError: the runs cannot be paired (the message says why).
        MnemometerError: unreadable runs or bad settings.
    """
    unknown = [v for v in vary if v not in VARIABLE]
    if unknown:
        raise MnemometerError(
            f"--vary {unknown[0]!r}{did_you_mean(unknown[0], list(VARIABLE))}; one of "
            + ", ".join(VARIABLE)
        )
    b_runs = [read_log(p) for p in expand_runs(baseline)]
    c_runs = [read_log(p) for p in expand_runs(candidate)]
    if not b_runs or not c_runs:
        raise MnemometerError("compare needs at least one baseline and one candidate run")
    same = {r.path.resolve() for r in b_runs} & {r.path.resolve() for r in c_runs}
    # Within a side nothing but the system may differ; across the sides, what vary names.
    found = mismatches(b_runs) + mismatches(c_runs) + mismatches([b_runs[0], c_runs[0]], vary)
    if found and not force:
        raise PairingError(
            "refusing to pair runs that measured different things: "
            + "; ".join(found[:3])
            + ("; ..." if len(found) > 3 else "")
            + " (if that is the experiment, say so with --vary "
            + "/".join(VARIABLE)
            + "; --force pairs them anyway)"
        )
    differs = list(differences(b_runs[0], c_runs[0]).values())
    notes: list[str] = same_system_notes(b_runs, c_runs)
    if same:
        notes.append(f"{len(same)} run(s) on both sides: a self-comparison (delta 0, p = 1)")
    for r in b_runs + c_runs:
        if r.header.status != "finished":
            done = len({i.item_id for i in r.items})  # a conversation's questions: one item
            notes.append(
                f"{r.path} did not finish ({done} of {r.header.item_count} items, "
                f"{len(r.items)} results); continue it with `mnemometer run --resume`"
            )
        if r.header.scoring is None:
            notes.append(
                f"{r.path} was recorded before runs declared a headline: its items' success "
                "is compared; `mnemometer score` gives it its suite's headline"
            )
    matched = match_runs(b_runs, c_runs)
    metric_info: dict[str, MetricInfo] = {}
    specs = (spec_of(b_runs[0].header), spec_of(c_runs[0].header))
    pairs, unpaired = pair_items(matched, metric_info, notes, specs)
    if not pairs:
        raise PairingError("the runs share no item ids: nothing to compare")
    context = {"mismatches": found if force else [], "varies": list(vary), "differs": differs}
    return statistics(
        b_runs,
        c_runs,
        pairs,
        unpaired,
        metric_info,
        notes,
        context,
        specs,
        resamples,
        seed,
        confidence,
    )
