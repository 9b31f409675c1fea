"""Confidence intervals with a closed form, and the interval record every method returns.

Every interval is clipped to the feasible range of what it estimates: ``[0, 1]`` for a
proportion, ``[-1, 1]`` for a difference of proportions, ``[a - b, b - a]`` for a mean
difference of values in ``[a, b]`` (:func:`delta_bounds`), or a range the caller declares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy import stats as _st

from mnemometer.errors import MnemometerError
from mnemometer.stats._common import as_deltas

Bounds = tuple[float, float]
"""A feasible range ``(low, high)``; either end may be infinite."""

UNBOUNDED: Bounds = (-math.inf, math.inf)


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval."""

    method: str
    """``percentile``, ``bca``, ``cluster-percentile``, ``cluster-bca``, ``cluster-robust``,
    ``wilson``, ``newcombe`` or ``t``."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    confidence: float
    """Nominal coverage, e.g. 0.95."""


def delta_bounds(low: float, high: float) -> Bounds:
    """Feasible range of a difference (or mean difference) of two values in ``[low, high]``.

    ``delta_bounds(0, 1) == (-1, 1)``: success deltas and deltas of any metric in [0, 1].
    """
    if not low <= high:
        raise MnemometerError(f"bounds must satisfy low <= high, got ({low}, {high})")
    return (low - high, high - low)


def clip(iv: Interval, bounds: Bounds | None) -> Interval:
    """``iv`` with both ends clipped to ``bounds`` (NaN ends stay NaN)."""
    if bounds is None:
        return iv
    lo, hi = bounds
    return Interval(
        iv.method,
        float(np.clip(iv.low, lo, hi)),
        float(np.clip(iv.high, lo, hi)),
        iv.confidence,
    )


def column_bounds(bounds: Bounds | Sequence[Bounds | None] | None, k: int) -> list[Bounds]:
    """One ``(low, high)`` per column from a shared pair, a per-column list or ``None``."""
    if bounds is None:
        return [UNBOUNDED] * k
    if len(bounds) == 2 and all(isinstance(b, Real) for b in bounds):
        lo, hi = bounds  # type: ignore[misc]
        return [(float(lo), float(hi))] * k
    per = [UNBOUNDED if b is None else (float(b[0]), float(b[1])) for b in bounds]  # type: ignore[index]
    if len(per) != k:
        raise MnemometerError(f"one (low, high) bound per column: {len(per)} vs {k}")
    return per


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise MnemometerError(f"confidence must be in (0, 1), got {confidence}")
    return float(_st.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _cluster_sums(
    d: np.ndarray, clusters: Sequence[str] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    labels = np.asarray(clusters)
    if labels.shape != d.shape:
        raise MnemometerError(f"one cluster label per delta: {labels.size} vs {d.size}")
    _, inverse = np.unique(labels, return_inverse=True)
    sums = np.bincount(inverse, weights=d)
    counts = np.bincount(inverse).astype(float)
    return sums, counts


def cluster_robust_interval(
    deltas: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | np.ndarray,
    *,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> Interval:
    """Cluster-robust (CR1) interval for the mean delta, with a t reference on G - 1 df.

    ``SE^2 = G/(G-1) * sum_g (sum_{i in g} (d_i - mean))^2 / n^2``. With one cluster the
    standard error is undefined and the interval is infinite (then clipped to ``bounds``).
    """
    d = as_deltas(deltas)
    if d.size == 0:
        raise MnemometerError("no paired deltas")
    _check_confidence(confidence)
    mean = float(d.mean())
    sums, counts = _cluster_sums(d - mean, clusters)
    g = sums.size
    if g < 2:
        return clip(Interval("cluster-robust", -math.inf, math.inf, confidence), bounds)
    se = math.sqrt(g / (g - 1) * float(np.sum(sums**2))) / d.size
    t = float(_st.t.ppf(1.0 - (1.0 - confidence) / 2.0, g - 1))
    return clip(Interval("cluster-robust", mean - t * se, mean + t * se, confidence), bounds)
