"""Compare two sets of runs: pair them item by item, then compute the statistics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mnemometer import stats
from mnemometer.comparison._model import Comparison
from mnemometer.comparison._pairs import (
    MetricInfo,
    PairingError,
    expand_runs,
    match_runs,
    mismatches,
    pair_items,
    same_system_notes,
)
from mnemometer.comparison._statistics import statistics
from mnemometer.errors import MnemometerError
from mnemometer.log._reader import read_log


def compare(
    baseline: Sequence[str | Path],
    candidate: Sequence[str | Path],
    *,
    force: bool = False,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    confidence: float = 0.95,
) -> Comparison:
    """Pair ``baseline`` and ``candidate`` runs item by item and compute the statistics.

    Runs pair by run group and repeat (see the guide), and items by item id and step.
    Runs over a different suite, suite version, suite options or dataset content hash are
    refused unless ``force``. Repeats are aggregated per item before any test: the item
    (or a cluster of items) is the statistical unit.

    Args:
        baseline: run directories (or directories of run directories).
        candidate: the same for the candidate side.
        force: pair mismatched runs anyway (recorded in the comparison).
        resamples: bootstrap resamples.
        seed: bootstrap seed.
        confidence: interval coverage.

    Raises:
        PairingError: the runs cannot be paired (the message says why).
        MnemometerError: unreadable runs or bad settings.
    """
    b_runs = [read_log(p) for p in expand_runs(baseline)]
    c_runs = [read_log(p) for p in expand_runs(candidate)]
    if not b_runs or not c_runs:
        raise MnemometerError("compare needs at least one baseline and one candidate run")
    same = {r.path.resolve() for r in b_runs} & {r.path.resolve() for r in c_runs}
    found = mismatches(b_runs + c_runs)
    if found and not force:
        raise PairingError(
            "refusing to pair runs that measured different things: "
            + "; ".join(found[:3])
            + ("; ..." if len(found) > 3 else "")
            + " (pass --force to pair them anyway)"
        )
    notes: list[str] = same_system_notes(b_runs, c_runs)
    if same:
        notes.append(f"{len(same)} run(s) on both sides: a self-comparison (delta 0, p = 1)")
    for r in b_runs + c_runs:
        if r.header.status != "finished":
            notes.append(
                f"{r.path} did not finish ({len(r.items)} of {r.header.item_count} "
                "items); continue it with `mnemometer run --resume`"
            )
    matched = match_runs(b_runs, c_runs)
    metric_info: dict[str, MetricInfo] = {}
    pairs, unpaired = pair_items(matched, metric_info, notes)
    if not pairs:
        raise PairingError("the runs share no item ids: nothing to compare")
    return statistics(
        b_runs,
        c_runs,
        pairs,
        unpaired,
        metric_info,
        notes,
        found if force else [],
        resamples,
        seed,
        confidence,
    )
