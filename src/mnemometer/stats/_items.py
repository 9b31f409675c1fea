"""Repeats aggregated per item, so every test treats the item (or cluster) as the unit.

Repeats of one item are not independent draws: three repeats of a deterministic run are
three copies, and testing item × repeat as if independent turns McNemar's 0.0703 over 8
discordant items into 0.000277 over 24 copies. Aggregate first, then test:

    items = stats.paired_per_item(base_ok, cand_ok, item_ids, how="majority")
    stats.mcnemar_exact(items.baseline, items.candidate)      # McNemar over items
    m = stats.paired_per_item(base_recall, cand_recall, item_ids, how="mean")
    stats.paired_permutation_test(m.deltas)                   # metric test over items
    stats.minimum_detectable_effect(m.n, float(np.std(m.deltas, ddof=1)))
    stats.holm([...every p above...])

``item_ids`` may equally be cluster labels (a conversation, a fixture): the unit is
whatever the labels name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from mnemometer.errors import MnemometerError

How = Literal["mean", "majority"]


@dataclass(frozen=True, slots=True)
class PerItem:
    """One side's values aggregated per item."""

    ids: tuple
    """Item labels, in order of first appearance."""
    values: np.ndarray
    """One value per item: the mean, or the majority vote (1.0, 0.0, NaN on a tie)."""
    repeats: np.ndarray
    """Finite values each item had (0: the item's value is NaN)."""


@dataclass(frozen=True, slots=True)
class PairedPerItem:
    """Both sides aggregated per item over the repeats where both have a value."""

    ids: tuple
    """Item labels with at least one complete pair, in order of first appearance."""
    baseline: np.ndarray
    """Baseline value per item."""
    candidate: np.ndarray
    """Candidate value per item."""
    repeats: np.ndarray
    """Complete pairs each item aggregates."""
    ties: int
    """Items whose majority vote tied on at least one side (``how="majority"``)."""

    @property
    def n(self) -> int:
        """Number of items: the ``n`` of every item-level test."""
        return len(self.ids)

    @property
    def deltas(self) -> np.ndarray:
        """Candidate minus baseline, per item."""
        return self.candidate - self.baseline


def _group(item_ids: Sequence | np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels in order of first appearance, and each row's index into them."""
    labels = np.asarray(item_ids)
    if labels.shape != (size,):
        raise MnemometerError(f"one item id per value: {labels.size} vs {size}")
    if size == 0:
        return labels, np.zeros(0, dtype=np.intp)
    uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return uniq[order], rank[np.asarray(inverse).reshape(-1)]


def _values(values: Sequence | np.ndarray, how: How) -> np.ndarray:
    v = np.asarray(values, dtype=float).reshape(-1)
    if how not in ("mean", "majority"):
        raise MnemometerError(f"how must be 'mean' or 'majority', got {how!r}")
    if how == "majority":
        fin = v[np.isfinite(v)]
        if not np.all((fin == 0) | (fin == 1)):
            raise MnemometerError("a majority vote needs binary outcomes (0/1 or booleans)")
    return v


def _aggregate(v: np.ndarray, inverse: np.ndarray, k: int, how: How) -> tuple:
    ok = np.isfinite(v)
    count = np.bincount(inverse[ok], minlength=k)
    total = np.bincount(inverse[ok], weights=v[ok], minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        if how == "mean":
            return total / count, count
    # Strictly more than half of the repeats succeeded: 1; strictly fewer: 0; half: NaN.
    vote = np.where(2 * total > count, 1.0, np.where(2 * total < count, 0.0, np.nan))
    return vote, count


def per_item(
    values: Sequence[float] | np.ndarray,
    item_ids: Sequence | np.ndarray,
    *,
    how: How = "mean",
) -> PerItem:
    """Aggregate one side's values over the repeats of each item.

    Args:
        values: one value per observation (item × repeat); NaN is "no value" and skipped.
        item_ids: the item (or cluster) of each observation.
        how: ``"mean"`` for metrics (and success rates); ``"majority"`` for binary
            success: 1 when more than half of the item's repeats succeeded, 0 when fewer
            than half did, and NaN ("undecided") on an exact tie. A single side cannot
            break a tie fairly; :func:`paired_per_item` does, conservatively.

    Raises:
        MnemometerError: mismatched lengths, an unknown ``how``, or non-binary values
            for a majority vote.
    """
    v = _values(values, how)
    labels, inverse = _group(item_ids, v.size)
    agg, count = _aggregate(v, inverse, labels.size, how)
    return PerItem(tuple(labels.tolist()), agg, count)


def paired_per_item(
    baseline: Sequence[float] | np.ndarray,
    candidate: Sequence[float] | np.ndarray,
    item_ids: Sequence | np.ndarray,
    *,
    how: How = "mean",
) -> PairedPerItem:
    """Aggregate paired observations per item, for item-level tests.

    Only repeats where both sides have a value count, so an item's mean delta is the mean
    of its paired deltas; items without one complete pair are left out.

    Majority ties are broken conservatively, towards "unchanged": an item tied on one side
    takes the other side's vote, and an item tied on both sides fails on both (success
    means more than half). A tie therefore never makes a discordant pair, so it can only
    raise McNemar's p and pull the success delta towards 0, whichever side is better.

    Args:
        baseline: baseline value per observation (item × repeat).
        candidate: candidate value of the same observations.
        item_ids: the item (or cluster) of each observation.
        how: ``"mean"`` or ``"majority"``, as in :func:`per_item`.

    Raises:
        MnemometerError: mismatched lengths, an unknown ``how``, or non-binary values
            for a majority vote.
    """
    b, c = _values(baseline, how), _values(candidate, how)
    if b.shape != c.shape:
        raise MnemometerError(f"paired values differ in length: {b.size} vs {c.size}")
    both = np.isfinite(b) & np.isfinite(c)
    labels, inverse = _group(item_ids, b.size)
    bv, count = _aggregate(np.where(both, b, np.nan), inverse, labels.size, how)
    cv, _ = _aggregate(np.where(both, c, np.nan), inverse, labels.size, how)
    keep = count > 0
    bv, cv, count, labels = bv[keep], cv[keep], count[keep], labels[keep]
    ties = 0
    if how == "majority":
        b_tie, c_tie = np.isnan(bv), np.isnan(cv)
        ties = int(np.sum(b_tie | c_tie))
        bv, cv = np.where(b_tie, cv, bv), np.where(c_tie, bv, cv)
        bv, cv = np.nan_to_num(bv, nan=0.0), np.nan_to_num(cv, nan=0.0)
    return PairedPerItem(tuple(labels.tolist()), bv, cv, count, ties)
