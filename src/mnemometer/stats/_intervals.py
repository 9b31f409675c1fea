"""Confidence intervals with a closed form, and the interval record every method returns."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from mnemometer.errors import MnemometerError


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval for a mean paired delta."""

    method: str
    """``percentile``, ``bca``, ``cluster-percentile`` or ``cluster-robust``."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    confidence: float
    """Nominal coverage, e.g. 0.95."""


def _as_deltas(deltas: Sequence[float] | np.ndarray) -> np.ndarray:
    d = np.asarray(deltas, dtype=float)
    if d.ndim != 1:
        raise MnemometerError("paired deltas must be a flat sequence")
    if not np.all(np.isfinite(d)):
        raise MnemometerError("paired deltas must be finite numbers")
    return d


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
) -> Interval:
    """Cluster-robust (CR1) interval for the mean delta, with a t reference on G - 1 df.

    ``SE^2 = G/(G-1) * sum_g (sum_{i in g} (d_i - mean))^2 / n^2``. With one cluster the
    standard error is undefined and the interval is infinite.
    """
    d = _as_deltas(deltas)
    if d.size == 0:
        raise MnemometerError("no paired deltas")
    mean = float(d.mean())
    sums, counts = _cluster_sums(d - mean, clusters)
    g = sums.size
    if g < 2:
        return Interval("cluster-robust", -math.inf, math.inf, confidence)
    se = math.sqrt(g / (g - 1) * float(np.sum(sums**2))) / d.size
    t = float(_st.t.ppf(1.0 - (1.0 - confidence) / 2.0, g - 1))
    return Interval("cluster-robust", mean - t * se, mean + t * se, confidence)
